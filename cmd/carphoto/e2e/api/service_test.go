package api

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
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
	"testing"

	"carphoto/internal/service"
	"carphoto/internal/testenv/e2etest"
)

// A newcomer runs `carphoto` with no setup, pastes the printed curl lines
// as they are, from the repository's root, and gets the sample photo
// processed: each line names the committed samples and fails with the
// error's body rather than writing it into the image file.
func TestDevModePrintsWorkingCurlExample(t *testing.T) {
	out := &e2etest.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	getenv := func(k string) string {
		if k == "PORT" {
			return "0"
		}
		return ""
	}
	go func() { done <- service.Run(ctx, nil, getenv, out, io.Discard) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	m := regexp.MustCompile(`curl -sS --fail-with-body -X POST (http://\S+/v1/blur-plates) -H "Authorization: Bearer (\S+)" -F image=@docs/samples/car.jpg -o car-blurred.jpg`)
	e2etest.WaitFor(t, out, regexp.MustCompile(`Or try every operation in a browser`))
	got := m.FindStringSubmatch(out.String())
	if got == nil {
		t.Fatalf("no blur-plates line on the sample photo in:\n%s", out)
	}
	if !strings.Contains(out.String(), "Embedded Redis: redis://127.0.0.1:") {
		t.Errorf("banner does not show the embedded Redis URL:\n%s", out)
	}
	e2etest.WaitReady(t, strings.TrimSuffix(got[1], "/v1/blur-plates"))

	var curls []string
	for _, l := range e2etest.Lines(out.String()) {
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
	docs, err := filepath.Abs(e2etest.RepoPath("docs"))
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
	s := e2etest.StartService(t, map[string]string{"LOG_LEVEL": "info"})
	const credits = 20
	id, key := s.Account(t, credits)
	photo := e2etest.CarPhoto(t)
	tests := []struct {
		path   string
		parts  []e2etest.Part
		ctype  string
		format string
	}{
		{"/v1/blur-plates", []e2etest.Part{e2etest.File("image", photo)}, "image/jpeg", "jpeg"},
		{"/v1/blur-plates", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("style", "pixelate")}, "image/jpeg", "jpeg"},
		{"/v1/blur-plates", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("style", "black")}, "image/jpeg", "jpeg"},
		{"/v1/plate-logo", []e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", e2etest.TwoColourLogo(t))}, "image/jpeg", "jpeg"},
		{"/v1/car-shadow", []e2etest.Part{e2etest.File("image", photo)}, "image/png", "png"},
		{"/v1/car-shadow", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("reflection", "true")}, "image/png", "png"},
		{"/v1/blur-plates", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("format", "jpeg"), e2etest.Field("requirePlate", "false")}, "image/jpeg", "jpeg"},
		{"/v1/car-cutout", []e2etest.Part{e2etest.File("image", photo)}, "image/png", "png"},
		{"/v1/car-cutout", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("crop", "true"), e2etest.Field("padding", "5%"), e2etest.Field("background", "#FFFFFF")}, "image/jpeg", "jpeg"},
		{"/v1/car-shadow", []e2etest.Part{e2etest.File("image", photo), e2etest.Field("crop", "true"), e2etest.Field("aspect", "4:3"), e2etest.Field("background", "#ffffff")}, "image/jpeg", "jpeg"},
		{"/v1/logo-overlay", []e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", e2etest.TwoColourLogo(t)), e2etest.Field("position", "top-left"), e2etest.Field("opacity", "0.8")}, "image/jpeg", "jpeg"},
	}
	for i, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			status, h, body := e2etest.Post(t, s.URL+tt.path, key, tt.parts...)
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
			line := e2etest.WaitFor(t, s.Log, regexp.MustCompile(`(\{[^\n]*"request_id":"`+rid+`"[^\n]*"message":"request"[^\n]*\})`))
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
	if got := s.Credits(t, id); got != credits-int64(len(tests)) {
		t.Errorf("balance %d after %d successful calls from %d", got, len(tests), credits)
	}
}

// A transparent PNG cut-out keeps its car pixels: the output is larger (the
// canvas grew for the shadow) and the car's opaque pixels come back intact.
func TestCarShadowKeepsTransparentCutout(t *testing.T) {
	s := e2etest.StartService(t, nil)
	_, key := s.Account(t, 5)
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
	status, _, body := e2etest.Post(t, s.URL+"/v1/car-shadow", key, e2etest.File("image", in.Bytes()))
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
	s := e2etest.StartService(t, map[string]string{"MAX_UPLOAD_BYTES": strconv.Itoa(25 << 20)})
	id, key := s.Account(t, 3)
	_, emptyKey := s.Account(t, 0)
	photo := e2etest.CarPhoto(t)
	truncated := photo[:len(photo)/3]
	tests := []struct {
		name   string
		path   string
		key    string
		parts  []e2etest.Part
		status int
		code   string
	}{
		{"no key", "/v1/blur-plates", "", []e2etest.Part{e2etest.File("image", photo)}, 401, "invalid_api_key"},
		{"wrong key", "/v1/blur-plates", "cp_live_nope", []e2etest.Part{e2etest.File("image", photo)}, 401, "invalid_api_key"},
		{"no key beats unknown tool", "/v1/remove-background", "", nil, 401, "invalid_api_key"},
		{"unknown tool", "/v1/remove-background", key, []e2etest.Part{e2etest.File("image", photo)}, 400, "unknown_tool"},
		{"unknown tool beside real ones", "/v1/car-wash", key, []e2etest.Part{e2etest.File("image", photo)}, 400, "unknown_tool"},
		{"missing image", "/v1/blur-plates", key, []e2etest.Part{e2etest.Field("style", "blur")}, 400, "missing_image"},
		{"missing image beats bad style", "/v1/blur-plates", key, []e2etest.Part{e2etest.Field("style", "sparkle")}, 400, "missing_image"},
		{"bad style", "/v1/blur-plates", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("style", "sparkle")}, 400, "invalid_params"},
		{"unknown field", "/v1/blur-plates", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("styel", "blur")}, 400, "invalid_params"},
		{"bad reflection", "/v1/car-shadow", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("reflection", "maybe")}, 400, "invalid_params"},
		{"logo and asset id", "/v1/plate-logo", key, []e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", e2etest.TwoColourLogo(t)), e2etest.Field("logoAssetId", "x")}, 400, "invalid_params"},
		{"neither logo nor asset id", "/v1/plate-logo", key, []e2etest.Part{e2etest.File("image", photo)}, 400, "invalid_params"},
		{"unknown asset id", "/v1/plate-logo", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("logoAssetId", "ast_nope")}, 400, "invalid_params"},
		{"empty image", "/v1/blur-plates", key, []e2etest.Part{e2etest.File("image", nil)}, 400, "invalid_params"},
		{"text named jpg", "/v1/blur-plates", key, []e2etest.Part{{Name: "image", Filename: "car.jpg", Data: []byte("this is not a photo\n")}}, 400, "invalid_params"},
		{"jpeg cut at a third", "/v1/blur-plates", key, []e2etest.Part{e2etest.File("image", truncated)}, 400, "invalid_params"},
		{"40000x40000 png header", "/v1/car-shadow", key, []e2etest.Part{e2etest.File("image", e2etest.HugePNGHeader())}, 400, "invalid_params"},
		{"bad params beat no credits", "/v1/blur-plates", emptyKey, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("style", "sparkle")}, 400, "invalid_params"},
		{"no credits", "/v1/blur-plates", emptyKey, []e2etest.Part{e2etest.File("image", photo)}, 402, "insufficient_credits"},
		{"requirePlate with no plate", "/v1/blur-plates", key, []e2etest.Part{e2etest.File("image", e2etest.PlainJPEG(t)), e2etest.Field("requirePlate", "true")}, 422, "plate_not_found"},
		{"car-cutout with no car", "/v1/car-cutout", key, []e2etest.Part{e2etest.File("image", e2etest.PlainJPEG(t))}, 422, "car_not_found"},
		{"car-shadow with no car", "/v1/car-shadow", key, []e2etest.Part{e2etest.File("image", e2etest.PlainJPEG(t)), e2etest.Field("crop", "true")}, 422, "car_not_found"},
		{"bad requirePlate", "/v1/plate-logo", key, []e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", e2etest.TwoColourLogo(t)), e2etest.Field("requirePlate", "sure")}, 400, "invalid_params"},
		{"requirePlate=1", "/v1/blur-plates", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("requirePlate", "1")}, 400, "invalid_params"},
		{"requirePlate=TRUE", "/v1/blur-plates", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("requirePlate", "TRUE")}, 400, "invalid_params"},
		{"reflection=yes", "/v1/car-shadow", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("reflection", "yes")}, 400, "invalid_params"},
		{"reflection=1", "/v1/car-shadow", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("reflection", "1")}, 400, "invalid_params"},
		{"format=gif", "/v1/blur-plates", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("format", "gif")}, 400, "invalid_params"},
		{"format=JPEG", "/v1/car-shadow", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("format", "JPEG")}, 400, "invalid_params"},
		{"format=jpg", "/v1/plate-logo", key, []e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", e2etest.TwoColourLogo(t)), e2etest.Field("format", "jpg")}, 400, "invalid_params"},
		{"car-cutout no key", "/v1/car-cutout", "", []e2etest.Part{e2etest.File("image", photo)}, 401, "invalid_api_key"},
		{"car-cutout no credits", "/v1/car-cutout", emptyKey, []e2etest.Part{e2etest.File("image", photo)}, 402, "insufficient_credits"},
		{"car-cutout missing image", "/v1/car-cutout", key, []e2etest.Part{e2etest.Field("crop", "true")}, 400, "missing_image"},
		{"car-cutout crop=yes", "/v1/car-cutout", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("crop", "yes")}, 400, "invalid_params"},
		{"car-cutout padding=-3", "/v1/car-cutout", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("padding", "-3")}, 400, "invalid_params"},
		{"car-cutout padding=120%", "/v1/car-cutout", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("padding", "120%")}, 400, "invalid_params"},
		{"car-cutout background=red", "/v1/car-cutout", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("background", "red")}, 400, "invalid_params"},
		{"car-cutout reflection", "/v1/car-cutout", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("reflection", "true")}, 400, "invalid_params"},
		{"car-shadow aspect=4x3", "/v1/car-shadow", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("aspect", "4x3")}, 400, "invalid_params"},
		{"car-shadow aspect=0:3", "/v1/car-shadow", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("aspect", "0:3")}, 400, "invalid_params"},
		{"logo-overlay no key", "/v1/logo-overlay", "", []e2etest.Part{e2etest.File("image", photo)}, 401, "invalid_api_key"},
		{"logo-overlay no credits", "/v1/logo-overlay", emptyKey, []e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", e2etest.TwoColourLogo(t))}, 402, "insufficient_credits"},
		{"logo-overlay no logo", "/v1/logo-overlay", key, []e2etest.Part{e2etest.File("image", photo)}, 400, "invalid_params"},
		{"logo-overlay position=middle", "/v1/logo-overlay", key, []e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", e2etest.TwoColourLogo(t)), e2etest.Field("position", "middle")}, 400, "invalid_params"},
		{"logo-overlay scale=0", "/v1/logo-overlay", key, []e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", e2etest.TwoColourLogo(t)), e2etest.Field("scale", "0")}, 400, "invalid_params"},
		{"logo-overlay opacity=1.5", "/v1/logo-overlay", key, []e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", e2etest.TwoColourLogo(t)), e2etest.Field("opacity", "1.5")}, 400, "invalid_params"},
		{"logo-overlay margin=NaN", "/v1/logo-overlay", key, []e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", e2etest.TwoColourLogo(t)), e2etest.Field("margin", "NaN")}, 400, "invalid_params"},
		{"logo-overlay unknown asset", "/v1/logo-overlay", key, []e2etest.Part{e2etest.File("image", photo), e2etest.Field("logoAssetId", "ast_nope")}, 400, "invalid_params"},
		{"logo-overlay logo not an image", "/v1/logo-overlay", key, []e2etest.Part{e2etest.File("image", photo), {Name: "logo", Filename: "logo.png", Data: []byte("not a logo")}}, 400, "invalid_params"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := e2etest.Post(t, s.URL+tt.path, tt.key, tt.parts...)
			e2etest.WantError(t, status, h, body, tt.status, tt.code)
		})
	}
	t.Run("car_not_found says what to send", func(t *testing.T) {
		_, _, body := e2etest.Post(t, s.URL+"/v1/car-shadow", key, e2etest.File("image", e2etest.PlainJPEG(t)))
		if !strings.Contains(string(body), "a photo with a whole car in view") || !strings.Contains(string(body), "not charged") {
			t.Errorf("car_not_found message %s; want it to say what to send and that the call was not charged", body)
		}
	})
	t.Run("messages name the accepted values", func(t *testing.T) {
		_, _, body := e2etest.Post(t, s.URL+"/v1/car-shadow", key, e2etest.File("image", photo), e2etest.Field("reflection", "1"))
		if !strings.Contains(string(body), "exactly true or false") {
			t.Errorf("reflection=1: %s, want a message saying exactly true or false", body)
		}
		_, _, body = e2etest.Post(t, s.URL+"/v1/blur-plates", key, e2etest.File("image", photo), e2etest.Field("format", "gif"))
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
		status, h, body := e2etest.Do(t, http.MethodPost, s.URL+"/v1/blur-plates", key, "multipart/form-data; boundary=b", pr)
		e2etest.WantError(t, status, h, body, 413, "payload_too_large")
	})
	t.Run("not multipart", func(t *testing.T) {
		status, h, body := e2etest.Do(t, http.MethodPost, s.URL+"/v1/blur-plates", key, "application/json", strings.NewReader(`{"image":"x"}`))
		e2etest.WantError(t, status, h, body, 400, "missing_image")
	})
	t.Run("wrong method", func(t *testing.T) {
		status, h, body := e2etest.Do(t, http.MethodGet, s.URL+"/v1/blur-plates", key, "", nil)
		e2etest.WantError(t, status, h, body, 405, "method_not_allowed")
	})
	t.Run("unknown route", func(t *testing.T) {
		status, h, body := e2etest.Do(t, http.MethodGet, s.URL+"/nope", "", "", nil)
		e2etest.WantError(t, status, h, body, 404, "not_found")
	})

	if got := s.Credits(t, id); got != 3 {
		t.Errorf("balance %d after only failed calls, want 3", got)
	}
	status, _, body := e2etest.Post(t, s.URL+"/v1/blur-plates", key, e2etest.File("image", photo))
	if status != http.StatusOK {
		t.Errorf("service unhealthy after bad input: status %d: %.300s", status, body)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// A design saved in the Assets library is used by id, and only by its owner:
// another account's id fails exactly like an unknown one, uncharged.
func TestPlateLogoFromAssetLibrary(t *testing.T) {
	s := e2etest.StartService(t, nil)
	id, key := s.Account(t, 3)
	otherID, otherKey := s.Account(t, 3)
	status, _, body := e2etest.Post(t, s.URL+"/v1/assets", key, e2etest.Part{Name: "file", Filename: "dealer.png", Data: e2etest.TwoColourLogo(t)})
	if status != http.StatusCreated {
		t.Fatalf("upload asset: %d %s", status, body)
	}
	var asset struct{ ID string }
	if err := json.Unmarshal(body, &asset); err != nil || asset.ID == "" {
		t.Fatalf("asset response %s: %v", body, err)
	}

	status, h, body := e2etest.Post(t, s.URL+"/v1/plate-logo", key, e2etest.File("image", e2etest.CarPhoto(t)), e2etest.Field("logoAssetId", asset.ID))
	if status != http.StatusOK || h.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("plate-logo with own asset: %d %s %.200s", status, h.Get("Content-Type"), body)
	}

	status, h, theirs := e2etest.Post(t, s.URL+"/v1/plate-logo", otherKey, e2etest.File("image", e2etest.CarPhoto(t)), e2etest.Field("logoAssetId", asset.ID))
	e2etest.WantError(t, status, h, theirs, 400, "invalid_params")
	status, h, unknown := e2etest.Post(t, s.URL+"/v1/plate-logo", otherKey, e2etest.File("image", e2etest.CarPhoto(t)), e2etest.Field("logoAssetId", "ast_doesnotexist"))
	e2etest.WantError(t, status, h, unknown, 400, "invalid_params")
	if strings.Replace(string(theirs), asset.ID, "ast_doesnotexist", 1) != string(unknown) {
		t.Errorf("another account's asset answers differently from an unknown one:\n%s\n%s", theirs, unknown)
	}
	if got := s.Credits(t, id); got != 2 {
		t.Errorf("owner's balance %d, want 2", got)
	}
	if got := s.Credits(t, otherID); got != 3 {
		t.Errorf("other account's balance %d, want 3 (uncharged)", got)
	}
}
