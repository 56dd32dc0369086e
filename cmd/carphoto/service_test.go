package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	_ "image/jpeg"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"carphoto/billing"
	"carphoto/internal/testenv/benchphoto"
	"carphoto/internal/testenv/redistest"
)

// A newcomer runs `carphoto` with no setup, pastes the printed curl lines
// as they are, from the repository's root, and gets the sample photo
// processed: each line names the committed samples and fails with the
// error's body rather than writing it into the image file.
func TestDevModePrintsWorkingCurlExample(t *testing.T) {
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	getenv := func(k string) string {
		if k == "PORT" {
			return "0"
		}
		return ""
	}
	go func() { done <- run(ctx, nil, getenv, out, io.Discard) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	m := regexp.MustCompile(`curl -sS --fail-with-body -X POST (http://\S+/v1/blur-plates) -H "Authorization: Bearer (\S+)" -F image=@docs/samples/car.jpg -o car-blurred.jpg`)
	waitFor(t, out, regexp.MustCompile(`Or try every operation in a browser`))
	got := m.FindStringSubmatch(out.String())
	if got == nil {
		t.Fatalf("no blur-plates line on the sample photo in:\n%s", out)
	}
	if !strings.Contains(out.String(), "Embedded Redis: redis://127.0.0.1:") {
		t.Errorf("banner does not show the embedded Redis URL:\n%s", out)
	}
	waitReady(t, strings.TrimSuffix(got[1], "/v1/blur-plates"))

	var curls []string
	for _, l := range lines(out.String()) {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "curl ") {
			curls = append(curls, l)
		}
	}
	if len(curls) != 4 {
		t.Fatalf("%d curl lines, want 4:\n%s", len(curls), out)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skipf("curl is not installed: the printed lines are not run")
	}
	// The lines run where the repository's docs/ is at hand, as in its root.
	dir := t.TempDir()
	docs, err := filepath.Abs(filepath.Join("..", "..", "docs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(docs, filepath.Join(dir, "docs")); err != nil {
		t.Fatal(err)
	}
	for _, line := range curls {
		cmd := exec.Command("bash", "-c", line)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, b)
		}
	}
	for name, format := range map[string]string{"car-blurred.jpg": "jpeg", "car-logo.jpg": "jpeg", "car-shadow.png": "png", "listing-studio.png": "png"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		img, f, err := image.Decode(bytes.NewReader(b))
		if err != nil || f != format {
			t.Errorf("%s is not a %s: %v %q", name, format, err, f)
			continue
		}
		// The studio line answers a listing-size photo: the listing sample
		// shrunk onto the 1600×1000 backdrop, never enlarged.
		if w, h := img.Bounds().Dx(), img.Bounds().Dy(); name == "listing-studio.png" && (w < 1600 || h < 1000) {
			t.Errorf("%s is %dx%d, want a listing-size photo, at least 1600x1000", name, w, h)
		}
	}
	// With a wrong key a line fails (curl exits 22 saying 401), not 0
	// with the JSON error saved as if it were the photo.
	bad := strings.Replace(curls[0], got[2], "cp_live_wrong", 1)
	cmd := exec.Command("bash", "-c", strings.Replace(bad, "car-blurred.jpg", "bad.jpg", 1))
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(b), "401") {
		t.Errorf("a wrong key: %v, output %q; want curl to fail with the 401", err, b)
	}
}

// Every endpoint answers with the spec's status and content type.
func TestEndpointsSucceed(t *testing.T) {
	s := startService(t, map[string]string{"LOG_LEVEL": "info"})
	const credits = 20
	id, key := s.account(t, credits)
	photo := carPhoto(t)
	tests := []struct {
		path   string
		parts  []part
		ctype  string
		format string
	}{
		{"/v1/blur-plates", []part{file("image", photo)}, "image/jpeg", "jpeg"},
		{"/v1/blur-plates", []part{file("image", photo), field("style", "pixelate")}, "image/jpeg", "jpeg"},
		{"/v1/blur-plates", []part{file("image", photo), field("style", "black")}, "image/jpeg", "jpeg"},
		{"/v1/plate-logo", []part{file("image", photo), file("logo", twoColourLogo(t))}, "image/jpeg", "jpeg"},
		{"/v1/car-shadow", []part{file("image", photo)}, "image/png", "png"},
		{"/v1/car-shadow", []part{file("image", photo), field("reflection", "true")}, "image/png", "png"},
		{"/v1/blur-plates", []part{file("image", photo), field("format", "jpeg"), field("requirePlate", "false")}, "image/jpeg", "jpeg"},
		{"/v1/car-cutout", []part{file("image", photo)}, "image/png", "png"},
		{"/v1/car-cutout", []part{file("image", photo), field("crop", "true"), field("padding", "5%"), field("background", "#FFFFFF")}, "image/jpeg", "jpeg"},
		{"/v1/car-shadow", []part{file("image", photo), field("crop", "true"), field("aspect", "4:3"), field("background", "#ffffff")}, "image/jpeg", "jpeg"},
		{"/v1/logo-overlay", []part{file("image", photo), file("logo", twoColourLogo(t)), field("position", "top-left"), field("opacity", "0.8")}, "image/jpeg", "jpeg"},
	}
	for i, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			status, h, body := post(t, s.url+tt.path, key, tt.parts...)
			if status != http.StatusOK {
				t.Fatalf("status %d: %.300s", status, body)
			}
			if got := h.Get("Content-Type"); got != tt.ctype {
				t.Errorf("Content-Type %q, want %q", got, tt.ctype)
			}
			if _, format, err := image.Decode(bytes.NewReader(body)); err != nil || format != tt.format {
				t.Errorf("body does not decode as %s: %v (%q)", tt.format, err, format)
			}
			if got := h.Get("X-Credits-Charged"); got != "1" {
				t.Errorf("X-Credits-Charged %q, want 1", got)
			}
			if got, want := h.Get("X-Credits-Remaining"), strconv.Itoa(credits-i-1); got != want {
				t.Errorf("X-Credits-Remaining %q, want %q", got, want)
			}
			rid := h.Get("X-Request-Id")
			if rid == "" {
				t.Fatalf("no X-Request-Id")
			}
			line := waitFor(t, s.log, regexp.MustCompile(`(\{[^\n]*"request_id":"`+rid+`"[^\n]*"message":"request"[^\n]*\})`))
			var entry struct {
				Account, Op, Path string
				Status            int
				QueueWait         *float64 `json:"queue_wait_ms"`
				Processing        *float64 `json:"processing_ms"`
			}
			if err := json.Unmarshal([]byte(line), &entry); err != nil {
				t.Fatalf("log line is not JSON: %v: %s", err, line)
			}
			if entry.Account != id || entry.Status != 200 || entry.Op == "" || entry.QueueWait == nil || entry.Processing == nil {
				t.Errorf("request log line lacks account/op/status/timings: %s", line)
			}
		})
	}
	if got := s.credits(t, id); got != credits-int64(len(tests)) {
		t.Errorf("balance %d after %d successful calls from %d", got, len(tests), credits)
	}
}

// A transparent PNG cut-out keeps its car pixels: the output is larger (the
// canvas grew for the shadow) and the car's opaque pixels come back intact.
func TestCarShadowKeepsTransparentCutout(t *testing.T) {
	s := startService(t, nil)
	_, key := s.account(t, 5)
	car := image.NewNRGBA(image.Rect(0, 0, 300, 160))
	for y := 40; y < 150; y++ {
		for x := 30; x < 270; x++ {
			car.Pix[car.PixOffset(x, y)+0] = uint8(x)
			car.Pix[car.PixOffset(x, y)+1] = uint8(y)
			car.Pix[car.PixOffset(x, y)+2] = 90
			car.Pix[car.PixOffset(x, y)+3] = 255
		}
	}
	var in bytes.Buffer
	png.Encode(&in, car)
	status, _, body := post(t, s.url+"/v1/car-shadow", key, file("image", in.Bytes()))
	if status != http.StatusOK {
		t.Fatalf("status %d: %.300s", status, body)
	}
	out, err := png.Decode(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if b := out.Bounds(); b.Dx() < 300 || b.Dy() < 160 {
		t.Fatalf("output %v is smaller than the 300×160 input", b)
	}
	// Find the car's top-left opaque pixel (x=30, y=40 → R=30, G=40) and
	// check a patch of pixels against the input at that offset.
	ob := out.Bounds()
	found := false
	for y := ob.Min.Y; y < ob.Max.Y && !found; y++ {
		for x := ob.Min.X; x < ob.Max.X && !found; x++ {
			r, g, b, a := out.At(x, y).RGBA()
			if a == 0xffff && r>>8 == 30 && g>>8 == 40 && b>>8 == 90 {
				found = true
				dx, dy := x-30, y-40
				for yy := 40; yy < 150; yy += 7 {
					for xx := 30; xx < 270; xx += 11 {
						r, g, b, a := out.At(xx+dx, yy+dy).RGBA()
						if r>>8 != uint32(uint8(xx)) || g>>8 != uint32(yy) || b>>8 != 90 || a != 0xffff {
							t.Fatalf("car pixel (%d,%d) changed: got %d,%d,%d,%d", xx, yy, r>>8, g>>8, b>>8, a>>8)
						}
					}
				}
			}
		}
	}
	if !found {
		t.Fatal("the car's corner pixel is not in the output: the cut-out was altered")
	}
}

// Bad requests get the spec's code as JSON, in the spec's precedence, leave
// the balance alone and the service healthy.
func TestErrors(t *testing.T) {
	s := startService(t, map[string]string{"MAX_UPLOAD_BYTES": strconv.Itoa(25 << 20)})
	id, key := s.account(t, 3)
	_, emptyKey := s.account(t, 0)
	photo := carPhoto(t)
	truncated := photo[:len(photo)/3]
	tests := []struct {
		name   string
		path   string
		key    string
		parts  []part
		status int
		code   string
	}{
		{"no key", "/v1/blur-plates", "", []part{file("image", photo)}, 401, "invalid_api_key"},
		{"wrong key", "/v1/blur-plates", "cp_live_nope", []part{file("image", photo)}, 401, "invalid_api_key"},
		{"no key beats unknown tool", "/v1/remove-background", "", nil, 401, "invalid_api_key"},
		{"unknown tool", "/v1/remove-background", key, []part{file("image", photo)}, 400, "unknown_tool"},
		{"unknown tool beside real ones", "/v1/car-wash", key, []part{file("image", photo)}, 400, "unknown_tool"},
		{"missing image", "/v1/blur-plates", key, []part{field("style", "blur")}, 400, "missing_image"},
		{"missing image beats bad style", "/v1/blur-plates", key, []part{field("style", "sparkle")}, 400, "missing_image"},
		{"bad style", "/v1/blur-plates", key, []part{file("image", photo), field("style", "sparkle")}, 400, "invalid_params"},
		{"unknown field", "/v1/blur-plates", key, []part{file("image", photo), field("styel", "blur")}, 400, "invalid_params"},
		{"bad reflection", "/v1/car-shadow", key, []part{file("image", photo), field("reflection", "maybe")}, 400, "invalid_params"},
		{"logo and asset id", "/v1/plate-logo", key, []part{file("image", photo), file("logo", twoColourLogo(t)), field("logoAssetId", "x")}, 400, "invalid_params"},
		{"neither logo nor asset id", "/v1/plate-logo", key, []part{file("image", photo)}, 400, "invalid_params"},
		{"unknown asset id", "/v1/plate-logo", key, []part{file("image", photo), field("logoAssetId", "ast_nope")}, 400, "invalid_params"},
		{"empty image", "/v1/blur-plates", key, []part{file("image", nil)}, 400, "invalid_params"},
		{"text named jpg", "/v1/blur-plates", key, []part{{"image", "car.jpg", []byte("this is not a photo\n")}}, 400, "invalid_params"},
		{"jpeg cut at a third", "/v1/blur-plates", key, []part{file("image", truncated)}, 400, "invalid_params"},
		{"40000x40000 png header", "/v1/car-shadow", key, []part{file("image", hugePNGHeader())}, 400, "invalid_params"},
		{"bad params beat no credits", "/v1/blur-plates", emptyKey, []part{file("image", photo), field("style", "sparkle")}, 400, "invalid_params"},
		{"no credits", "/v1/blur-plates", emptyKey, []part{file("image", photo)}, 402, "insufficient_credits"},
		{"requirePlate with no plate", "/v1/blur-plates", key, []part{file("image", plainJPEG(t)), field("requirePlate", "true")}, 422, "plate_not_found"},
		{"car-cutout with no car", "/v1/car-cutout", key, []part{file("image", plainJPEG(t))}, 422, "car_not_found"},
		{"car-shadow with no car", "/v1/car-shadow", key, []part{file("image", plainJPEG(t)), field("crop", "true")}, 422, "car_not_found"},
		{"bad requirePlate", "/v1/plate-logo", key, []part{file("image", photo), file("logo", twoColourLogo(t)), field("requirePlate", "sure")}, 400, "invalid_params"},
		{"requirePlate=1", "/v1/blur-plates", key, []part{file("image", photo), field("requirePlate", "1")}, 400, "invalid_params"},
		{"requirePlate=TRUE", "/v1/blur-plates", key, []part{file("image", photo), field("requirePlate", "TRUE")}, 400, "invalid_params"},
		{"reflection=yes", "/v1/car-shadow", key, []part{file("image", photo), field("reflection", "yes")}, 400, "invalid_params"},
		{"reflection=1", "/v1/car-shadow", key, []part{file("image", photo), field("reflection", "1")}, 400, "invalid_params"},
		{"format=gif", "/v1/blur-plates", key, []part{file("image", photo), field("format", "gif")}, 400, "invalid_params"},
		{"format=JPEG", "/v1/car-shadow", key, []part{file("image", photo), field("format", "JPEG")}, 400, "invalid_params"},
		{"format=jpg", "/v1/plate-logo", key, []part{file("image", photo), file("logo", twoColourLogo(t)), field("format", "jpg")}, 400, "invalid_params"},
		{"car-cutout no key", "/v1/car-cutout", "", []part{file("image", photo)}, 401, "invalid_api_key"},
		{"car-cutout no credits", "/v1/car-cutout", emptyKey, []part{file("image", photo)}, 402, "insufficient_credits"},
		{"car-cutout missing image", "/v1/car-cutout", key, []part{field("crop", "true")}, 400, "missing_image"},
		{"car-cutout crop=yes", "/v1/car-cutout", key, []part{file("image", photo), field("crop", "yes")}, 400, "invalid_params"},
		{"car-cutout padding=-3", "/v1/car-cutout", key, []part{file("image", photo), field("padding", "-3")}, 400, "invalid_params"},
		{"car-cutout padding=120%", "/v1/car-cutout", key, []part{file("image", photo), field("padding", "120%")}, 400, "invalid_params"},
		{"car-cutout background=red", "/v1/car-cutout", key, []part{file("image", photo), field("background", "red")}, 400, "invalid_params"},
		{"car-cutout reflection", "/v1/car-cutout", key, []part{file("image", photo), field("reflection", "true")}, 400, "invalid_params"},
		{"car-shadow aspect=4x3", "/v1/car-shadow", key, []part{file("image", photo), field("aspect", "4x3")}, 400, "invalid_params"},
		{"car-shadow aspect=0:3", "/v1/car-shadow", key, []part{file("image", photo), field("aspect", "0:3")}, 400, "invalid_params"},
		{"logo-overlay no key", "/v1/logo-overlay", "", []part{file("image", photo)}, 401, "invalid_api_key"},
		{"logo-overlay no credits", "/v1/logo-overlay", emptyKey, []part{file("image", photo), file("logo", twoColourLogo(t))}, 402, "insufficient_credits"},
		{"logo-overlay no logo", "/v1/logo-overlay", key, []part{file("image", photo)}, 400, "invalid_params"},
		{"logo-overlay position=middle", "/v1/logo-overlay", key, []part{file("image", photo), file("logo", twoColourLogo(t)), field("position", "middle")}, 400, "invalid_params"},
		{"logo-overlay scale=0", "/v1/logo-overlay", key, []part{file("image", photo), file("logo", twoColourLogo(t)), field("scale", "0")}, 400, "invalid_params"},
		{"logo-overlay opacity=1.5", "/v1/logo-overlay", key, []part{file("image", photo), file("logo", twoColourLogo(t)), field("opacity", "1.5")}, 400, "invalid_params"},
		{"logo-overlay margin=NaN", "/v1/logo-overlay", key, []part{file("image", photo), file("logo", twoColourLogo(t)), field("margin", "NaN")}, 400, "invalid_params"},
		{"logo-overlay unknown asset", "/v1/logo-overlay", key, []part{file("image", photo), field("logoAssetId", "ast_nope")}, 400, "invalid_params"},
		{"logo-overlay logo not an image", "/v1/logo-overlay", key, []part{file("image", photo), {"logo", "logo.png", []byte("not a logo")}}, 400, "invalid_params"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := post(t, s.url+tt.path, tt.key, tt.parts...)
			wantError(t, status, h, body, tt.status, tt.code)
		})
	}
	t.Run("car_not_found says what to send", func(t *testing.T) {
		_, _, body := post(t, s.url+"/v1/car-shadow", key, file("image", plainJPEG(t)))
		if !strings.Contains(string(body), "a photo with a whole car in view") || !strings.Contains(string(body), "not charged") {
			t.Errorf("car_not_found message %s; want it to say what to send and that the call was not charged", body)
		}
	})
	t.Run("messages name the accepted values", func(t *testing.T) {
		_, _, body := post(t, s.url+"/v1/car-shadow", key, file("image", photo), field("reflection", "1"))
		if !strings.Contains(string(body), "exactly true or false") {
			t.Errorf("reflection=1: %s, want a message saying exactly true or false", body)
		}
		_, _, body = post(t, s.url+"/v1/blur-plates", key, file("image", photo), field("format", "gif"))
		if !strings.Contains(string(body), "jpeg, png, webp") {
			t.Errorf("format=gif: %s, want a message naming jpeg, png, webp", body)
		}
	})
	t.Run("60 MB upload", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			pw.Write([]byte("--b\r\nContent-Disposition: form-data; name=\"image\"; filename=\"big.jpg\"\r\n\r\n\xff\xd8\xff"))
			io.CopyN(pw, zeros{}, 60<<20)
			pw.Write([]byte("\r\n--b--\r\n"))
			pw.Close()
		}()
		status, h, body := do(t, http.MethodPost, s.url+"/v1/blur-plates", key, "multipart/form-data; boundary=b", pr)
		wantError(t, status, h, body, 413, "payload_too_large")
	})
	t.Run("not multipart", func(t *testing.T) {
		status, h, body := do(t, http.MethodPost, s.url+"/v1/blur-plates", key, "application/json", strings.NewReader(`{"image":"x"}`))
		wantError(t, status, h, body, 400, "missing_image")
	})
	t.Run("wrong method", func(t *testing.T) {
		status, h, body := do(t, http.MethodGet, s.url+"/v1/blur-plates", key, "", nil)
		wantError(t, status, h, body, 405, "method_not_allowed")
	})
	t.Run("unknown route", func(t *testing.T) {
		status, h, body := do(t, http.MethodGet, s.url+"/nope", "", "", nil)
		wantError(t, status, h, body, 404, "not_found")
	})

	if got := s.credits(t, id); got != 3 {
		t.Errorf("balance %d after only failed calls, want 3", got)
	}
	status, _, body := post(t, s.url+"/v1/blur-plates", key, file("image", photo))
	if status != http.StatusOK {
		t.Errorf("service unhealthy after bad input: status %d: %.300s", status, body)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// 16 concurrent calls on a balance of 5: exactly 5 succeed and are charged.
func TestConcurrentCallsChargeExactly(t *testing.T) {
	s := startService(t, map[string]string{"MAX_IN_FLIGHT_PER_KEY": "16"})
	id, key := s.account(t, 5)
	photo := carPhoto(t)
	counts := burst(t, 16, s.url+"/v1/blur-plates", key, photo)
	if counts[200] != 5 || counts[402] != 11 {
		t.Errorf("statuses %v, want 5×200 and 11×402", counts)
	}
	if got := s.credits(t, id); got != 0 {
		t.Errorf("balance %d, want 0", got)
	}
}

// A worker stopped with SIGTERM mid-task does not fail the request, and a
// worker killed with SIGKILL costs the client nothing: 500 at the deadline,
// uncharged, and the service keeps serving.
func TestWorkerStops(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	rs := redistest.New(t, redisDB)
	env := []string{rs.Env(), "PORT=0", "REQUEST_TIMEOUT=10s", "WORKER_CONCURRENCY=1", "MAX_IN_FLIGHT_PER_KEY=16"}
	web, s := startWeb(t, rs, env...)
	url := s.url
	if status, _, body := do(t, http.MethodGet, url+"/readyz", "", "", nil); status != 503 {
		t.Errorf("/readyz with no worker: %d %s, want 503", status, body)
	}
	if status, _, _ := do(t, http.MethodGet, url+"/healthz", "", "", nil); status != 200 {
		t.Errorf("/healthz: %d, want 200", status)
	}
	id, key := s.account(t, 10)
	photo := bigPhoto(t)

	// send posts the photo to blur-plates in the background; the channel
	// gets the answer's status.
	send := func() <-chan int {
		res := make(chan int, 1)
		go func() {
			status, _, body := post(t, url+"/v1/blur-plates", key, file("image", photo))
			if status != 200 {
				t.Logf("status %d: %.300s", status, body)
			}
			res <- status
		}()
		return res
	}
	// start sends one request and waits until worker w has begun its task.
	start := func(w *proc) <-chan int {
		before := strings.Count(w.stderr.String(), "task started")
		res := send()
		deadline := time.Now().Add(20 * time.Second)
		for strings.Count(w.stderr.String(), "task started") == before {
			if time.Now().After(deadline) {
				t.Fatalf("worker never started the task:\n%s", tail(w.stderr.String(), 2000))
			}
			time.Sleep(5 * time.Millisecond)
		}
		return res
	}

	t.Run("SIGTERM hands the task back", func(t *testing.T) {
		a := startProc(t, "worker", append(env, "WORKER_SHUTDOWN_TIMEOUT=1ms")...)
		waitReady(t, url)
		res := start(a)
		b := startProc(t, "worker", env...)
		a.cmd.Process.Signal(syscall.SIGTERM)
		if status := <-res; status != 200 {
			t.Errorf("status %d after SIGTERM with a second worker running, want 200", status)
		}
		if err := a.cmd.Wait(); err != nil {
			t.Errorf("worker exit after SIGTERM: %v", err)
		}
		b.cmd.Process.Signal(syscall.SIGTERM)
		b.cmd.Wait()
	})
	if got := s.credits(t, id); got != 9 {
		t.Fatalf("balance %d after one success, want 9", got)
	}

	t.Run("SIGKILL fails at the deadline uncharged", func(t *testing.T) {
		a := startProc(t, "worker", env...)
		waitReady(t, url)
		res := start(a)
		a.cmd.Process.Kill()
		// Its run again finds no worker: withdrawn unstarted before the
		// deadline (503), or failed at it (500).
		if status := <-res; status != 500 && status != 503 {
			t.Errorf("status %d after SIGKILL, want 500 processing_failed or 503 service_unavailable", status)
		}
		if got := s.credits(t, id); got != 9 {
			t.Errorf("balance %d after a killed task, want 9 (uncharged)", got)
		}
		b := startProc(t, "worker", env...)
		status, _, body := post(t, url+"/v1/blur-plates", key, file("image", carPhoto(t)))
		if status != 200 {
			t.Errorf("service did not keep serving: %d %.300s", status, body)
		}
		b.cmd.Process.Signal(syscall.SIGTERM)
		b.cmd.Wait()
	})

	t.Run("SIGKILL with a second worker running: the other answers, charged once", func(t *testing.T) {
		before := s.credits(t, id)
		ws := []*proc{startProc(t, "worker", env...), startProc(t, "worker", env...)}
		waitReady(t, url)
		started := func() []int {
			var n []int
			for _, w := range ws {
				n = append(n, strings.Count(w.stderr.String(), "task started"))
			}
			return n
		}
		was := started()
		res := send()
		var holder *proc
		for deadline := time.Now().Add(20 * time.Second); holder == nil; time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no worker started the task")
			}
			for i, n := range started() {
				if n > was[i] {
					holder = ws[i]
				}
			}
		}
		holder.cmd.Process.Kill()
		killed := time.Now()
		if status := <-res; status != 200 {
			t.Errorf("status %d after SIGKILL with a second worker running, want 200", status)
		}
		if d := time.Since(killed); d > 10*time.Second {
			t.Errorf("answered %v after the kill, want within 10 s", d)
		} else {
			t.Logf("answered %v after the kill", d.Round(time.Millisecond))
		}
		if got := s.credits(t, id); got != before-1 {
			t.Errorf("balance %d, want %d: charged once", got, before-1)
		}
		for _, w := range ws {
			if w != holder {
				w.cmd.Process.Signal(syscall.SIGTERM)
				w.cmd.Wait()
			}
		}
	})

	t.Run("16 concurrent calls on 5 credits with a worker killed", func(t *testing.T) {
		acct, k := s.account(t, 5)
		a := startProc(t, "worker", env...)
		startProc(t, "worker", env...)
		waitReady(t, url)
		mid := carPhotoScaled(t, 2)
		before := strings.Count(a.stderr.String(), "task started")
		res := make(chan map[int]int)
		go func() { res <- burst(t, 16, url+"/v1/blur-plates", k, mid) }()
		for strings.Count(a.stderr.String(), "task started") == before {
			time.Sleep(2 * time.Millisecond)
		}
		a.cmd.Process.Kill()
		counts := <-res
		t.Logf("statuses %v", counts)
		if counts[200]+counts[402]+counts[500]+counts[503] != 16 || counts[200] > 5 || counts[200] == 0 {
			t.Errorf("statuses %v: want only 200, 402, 500 and 503 (overload), at most 5 successes", counts)
		}
		if got, want := s.credits(t, acct), int64(5-counts[200]); got != want {
			t.Errorf("balance %d after %d successes from 5, want %d: a credit was lost or charged twice", got, counts[200], want)
		}
		// The charge is written once the client has the whole answer, so
		// the last call's capture may land just after its client returns:
		// the ledger gets a few seconds to settle.
		captures := 0
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			entries, err := s.b.Ledger(context.Background(), acct, 1000)
			if err != nil {
				t.Fatal(err)
			}
			captures = 0
			for _, e := range entries {
				if e.Kind == billing.KindCapture {
					captures++
				}
			}
			if captures >= counts[200] || time.Now().After(deadline) {
				break
			}
		}
		if captures != counts[200] {
			t.Errorf("ledger has %d captures for %d successful calls", captures, counts[200])
		}
		if got, want := s.credits(t, acct), int64(5-counts[200]); got != want {
			t.Errorf("balance %d once the ledger settled, want %d", got, want)
		}
	})

	t.Run("SIGTERM to serve finishes in-flight requests", func(t *testing.T) {
		before := s.credits(t, id)
		w := startProc(t, "worker", env...)
		res := start(w)
		web.cmd.Process.Signal(syscall.SIGTERM)
		if status := <-res; status != 200 {
			t.Errorf("in-flight request got %d after SIGTERM to serve, want 200", status)
		}
		if err := web.cmd.Wait(); err != nil {
			t.Errorf("serve exit after SIGTERM: %v", err)
		}
		if got := s.credits(t, id); got != before-1 {
			t.Errorf("balance %d, want %d: the finished request is charged once", got, before-1)
		}
	})
}

// carPhotoScaled is the car photo upscaled to about mp megapixels.
func carPhotoScaled(t *testing.T, mp float64) []byte {
	t.Helper()
	b, err := benchphoto.Enlarge(context.Background(), carPhoto(t), mp, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// bigPhoto is a 12-megapixel JPEG, slow enough to signal a worker mid-task.
func bigPhoto(t *testing.T) []byte {
	t.Helper()
	b, err := benchphoto.Enlarge(context.Background(), carPhoto(t), 12, 0)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// plainJPEG is a smooth sky-to-ground gradient: a photo with no plate.
func plainJPEG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 480, 320))
	for y := range 320 {
		for x := range 480 {
			img.Set(x, y, color.RGBA{uint8(100 + y/4), uint8(140 + y/5), uint8(200 - y/3), 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A burst larger than a web process's Redis pool waits for free slots
// instead of failing: 32 concurrent calls on a pool of 20 (4 photo slots).
func TestBurstBeyondPoolWaits(t *testing.T) {
	s := startService(t, map[string]string{"REDIS_POOL_SIZE": "20", "MAX_IN_FLIGHT_PER_KEY": "32"})
	id, key := s.account(t, 32)
	photo := carPhoto(t)
	counts := burst(t, 32, s.url+"/v1/blur-plates", key, photo)
	if counts[200] != 32 {
		t.Errorf("statuses %v, want 32×200", counts)
	}
	if got := s.credits(t, id); got != 0 {
		t.Errorf("balance %d, want 0", got)
	}
}

// burst sends n concurrent calls with photo and counts their statuses.
func burst(t *testing.T, n int, url, key string, photo []byte) map[int]int {
	t.Helper()
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			status, _, _ := post(t, url, key, file("image", photo))
			mu.Lock()
			counts[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	return counts
}

// A design saved in the Assets library is used by id, and only by its owner:
// another account's id fails exactly like an unknown one, uncharged.
func TestPlateLogoFromAssetLibrary(t *testing.T) {
	s := startService(t, nil)
	id, key := s.account(t, 3)
	otherID, otherKey := s.account(t, 3)
	status, _, body := post(t, s.url+"/v1/assets", key, part{"file", "dealer.png", twoColourLogo(t)})
	if status != http.StatusCreated {
		t.Fatalf("upload asset: %d %s", status, body)
	}
	var asset struct{ ID string }
	if err := json.Unmarshal(body, &asset); err != nil || asset.ID == "" {
		t.Fatalf("asset response %s: %v", body, err)
	}

	status, h, body := post(t, s.url+"/v1/plate-logo", key, file("image", carPhoto(t)), field("logoAssetId", asset.ID))
	if status != http.StatusOK || h.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("plate-logo with own asset: %d %s %.200s", status, h.Get("Content-Type"), body)
	}

	status, h, theirs := post(t, s.url+"/v1/plate-logo", otherKey, file("image", carPhoto(t)), field("logoAssetId", asset.ID))
	wantError(t, status, h, theirs, 400, "invalid_params")
	status, h, unknown := post(t, s.url+"/v1/plate-logo", otherKey, file("image", carPhoto(t)), field("logoAssetId", "ast_doesnotexist"))
	wantError(t, status, h, unknown, 400, "invalid_params")
	if strings.Replace(string(theirs), asset.ID, "ast_doesnotexist", 1) != string(unknown) {
		t.Errorf("another account's asset answers differently from an unknown one:\n%s\n%s", theirs, unknown)
	}
	if got := s.credits(t, id); got != 2 {
		t.Errorf("owner's balance %d, want 2", got)
	}
	if got := s.credits(t, otherID); got != 3 {
		t.Errorf("other account's balance %d, want 3 (uncharged)", got)
	}
}
