package resilience

// Hostile inputs: requests built to cost the service far more than they
// pay for, or to take its workers down. Each is answered fast with a clear
// {error, code}, uncharged, and leaves every worker process running.

import (
	"bufio"
	"bytes"
	"image"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"carphoto/internal/testenv/e2etest"
	"carphoto/internal/testenv/redistest"
	"carphoto/objstore"
	"carphoto/video"
)

// ffmpegClip runs ffmpeg with a lavfi source to make out.
func ffmpegClip(t *testing.T, src, out string, args ...string) []byte {
	t.Helper()
	cmdArgs := append([]string{"-v", "error", "-y", "-f", "lavfi", "-i", src}, args...)
	if b, err := exec.Command("ffmpeg", append(cmdArgs, out)...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %s: %v: %s", src, err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// peakRSS is p's peak resident memory so far, in MB (VmHWM).
func peakRSS(t *testing.T, p *e2etest.Proc) int {
	t.Helper()
	f, err := os.Open("/proc/" + strconv.Itoa(p.Cmd.Process.Pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return kb >> 10
		}
	}
	return 0
}

// Every hostile request of issue 46 against a web process and two worker
// processes: 400 invalid_params naming the limit, within a few seconds,
// uncharged; both workers still running and under their memory bound
// after, and an honest call still answered.
func TestHostileInputsRefusedBeforeWork(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	rs := redistest.New(t, redisDB)
	videoDir := t.TempDir()
	env := []string{rs.Env(), "PORT=0", "WORKER_CONCURRENCY=1", "VIDEO_DIR=" + videoDir,
		"MAX_IN_FLIGHT_PER_KEY=16", "RATE_LIMIT_PER_MINUTE=1000"}
	_, s := e2etest.StartWeb(t, rs, env...)
	workers := []*e2etest.Proc{e2etest.StartProc(t, "worker", env...), e2etest.StartProc(t, "worker", env...)}
	e2etest.WaitReady(t, s.URL)
	id, key := s.Account(t, 100)
	photo := e2etest.CarPhoto(t)

	type hostile struct {
		name, path string
		parts      []e2etest.Part
		says       string // in the error message
	}
	tests := []hostile{
		{"canvas: padding=10000 aspect=100:1 (164 GB asked for)", "/v1/car-shadow",
			[]e2etest.Part{e2etest.File("image", photo), e2etest.Field("crop", "true"), e2etest.Field("padding", "10000"), e2etest.Field("aspect", "100:1")}, "canvas"},
		{"canvas: padding=10000 (416 MP asked for)", "/v1/car-cutout",
			[]e2etest.Part{e2etest.File("image", photo), e2etest.Field("crop", "true"), e2etest.Field("padding", "10000")}, "the limit is 60 MP"},
	}
	strip, long := e2etest.GrayPNG(t, 59_999_999, 1), e2etest.GrayPNG(t, 20000, 100)
	for _, op := range []string{"blur-plates", "car-shadow", "car-cutout", "logo-overlay"} {
		parts := []e2etest.Part{e2etest.File("image", strip)}
		if op == "logo-overlay" {
			parts = append(parts, e2etest.File("logo", e2etest.TwoColourLogo(t)))
		}
		tests = append(tests, hostile{"59999999×1 PNG to " + op, "/v1/" + op, parts, "each side may be at most 20000 pixels"})
	}
	tests = append(tests,
		hostile{"59999999×1 PNG as a plate design", "/v1/plate-logo",
			[]e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", strip)}, "logo: image is 59999999×1; each side may be at most 20000 pixels"},
		hostile{"20000×100 PNG", "/v1/blur-plates", []e2etest.Part{e2etest.File("image", long)}, "its longer side is 200 times its shorter; the limit is 20 times"},
		hostile{"59999999×1 PNG saved as a design", "/v1/assets", []e2etest.Part{e2etest.File("file", strip)}, "each side may be at most 20000 pixels"},
		hostile{"20000×100 PNG as a plate design", "/v1/plate-logo",
			[]e2etest.Part{e2etest.File("image", photo), e2etest.File("logo", long)}, "logo: image is 20000×100"},
		hostile{"59999999×1 PNG as a studio call's plate design", "/v1/car-shadow",
			[]e2etest.Part{e2etest.File("image", photo), e2etest.Field("plates", "logo"), e2etest.File("logo", strip)}, "logo: image is 59999999×1; each side may be at most 20000 pixels"},
		hostile{"20000×100 PNG as a studio call's plate design", "/v1/car-cutout",
			[]e2etest.Part{e2etest.File("image", photo), e2etest.Field("plates", "logo"), e2etest.File("logo", long)}, "logo: image is 20000×100"},
		hostile{"59999999×1 PNG as a backdrop", "/v1/car-shadow",
			[]e2etest.Part{e2etest.File("image", photo), e2etest.File("backgroundImage", strip)}, "backgroundImage: image is 59999999×1; each side may be at most 20000 pixels"},
		hostile{"20000×100 PNG as a backdrop", "/v1/car-cutout",
			[]e2etest.Part{e2etest.File("image", photo), e2etest.File("backgroundImage", long)}, "backgroundImage: image is 20000×100"},
		hostile{"5000×4000 PNG as a backdrop (20 MP)", "/v1/car-shadow",
			[]e2etest.Part{e2etest.File("image", photo), e2etest.File("backgroundImage", e2etest.GrayPNG(t, 5000, 4000))}, "a backdrop may have at most 16.0 MP"},
		hostile{"59999999×1 PNG saved as a backdrop", "/v1/assets",
			[]e2etest.Part{e2etest.File("file", strip), e2etest.Field("kind", "backdrop")}, "each side may be at most 20000 pixels"},
	)
	if err := video.Available(); err == nil {
		dir := t.TempDir()
		// Another account's finished job, where the store keeps it.
		os.MkdirAll(filepath.Join(videoDir, objstore.Videos), 0o700)
		victim := filepath.Join(videoDir, objstore.Videos, video.ResultKey("vid_victim"))
		ffmpegClip(t, "testsrc=size=64x48:rate=10:duration=60", victim, "-c:v", "libx264", "-preset", "ultrafast")
		playlist := "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXTINF:0.1,\nfile:" + victim + "\n#EXT-X-ENDLIST\n"
		concat := "ffconcat version 1.0\nfile " + victim + "\nduration 0.1\n"
		big := ffmpegClip(t, "color=c=gray:s=8192x8192:rate=1:duration=2", filepath.Join(dir, "big.mkv"), "-c:v", "mjpeg", "-q:v", "31")
		tests = append(tests,
			hostile{"HLS playlist naming another job's video", "/v1/video-blur", []e2etest.Part{e2etest.File("video", []byte(playlist))}, "MP4, MOV, WebM or MKV"},
			hostile{"concat list naming another job's video", "/v1/video-blur", []e2etest.Part{e2etest.File("video", []byte(concat))}, "MP4, MOV, WebM or MKV"},
			hostile{"8192×8192 frames", "/v1/video-blur", []e2etest.Part{e2etest.File("video", big)}, "the limit is 8.8 MP a frame"},
		)
	} else {
		t.Log("video cases skipped:", err)
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			status, h, body := e2etest.Post(t, s.URL+tc.path, key, tc.parts...)
			took := time.Since(start)
			t.Logf("%d in %v: %s", status, took.Round(time.Millisecond), body)
			e2etest.WantError(t, status, h, body, http.StatusBadRequest, "invalid_params")
			if !strings.Contains(string(body), tc.says) {
				t.Errorf("message %s does not say %q", body, tc.says)
			}
			if took > 3*time.Second {
				t.Errorf("answered in %v, want a refusal before any work (under 3 s)", took.Round(time.Millisecond))
			}
			if got := s.Credits(t, id); got != 100 {
				t.Errorf("balance %d, want 100: a refused call was charged", got)
			}
			for i, w := range workers {
				if !e2etest.Running(w) {
					t.Fatalf("worker %d is gone", i)
				}
			}
		})
	}

	// Within the limits, a canvas grown far past 16 MP is answered, scaled
	// to fit: a 300×160 cut-out with 3000 px of padding asks for ~38 MP.
	t.Run("canvas within the web's bound is scaled to 16 MP by the worker", func(t *testing.T) {
		status, _, body := e2etest.Post(t, s.URL+"/v1/car-cutout", key, e2etest.File("image", transparentCar(t)),
			e2etest.Field("crop", "true"), e2etest.Field("padding", "3000"))
		if status != http.StatusOK {
			t.Fatalf("status %d: %.300s", status, body)
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(body))
		if err != nil || cfg.Width*cfg.Height > 16_000_000 || cfg.Width < 3000 {
			t.Errorf("answer %d×%d (%v), want a canvas of at most 16 MP", cfg.Width, cfg.Height, err)
		}
	})

	status, _, body := e2etest.Post(t, s.URL+"/v1/blur-plates", key, e2etest.File("image", photo))
	if status != http.StatusOK {
		t.Errorf("an honest call after the hostile ones: %d %.300s", status, body)
	}
	if got := s.Credits(t, id); got != 98 {
		t.Errorf("balance %d, want 98: only the two answered calls charged", got)
	}
	for i, w := range workers {
		if !e2etest.Running(w) {
			t.Errorf("worker %d is gone", i)
		} else if mb := peakRSS(t, w); mb > 700 {
			t.Errorf("worker %d peaked at %d MB, over the 600 MB a task may take", i, mb)
		} else {
			t.Logf("worker %d peaked at %d MB", i, mb)
		}
	}
}

// transparentCar is a 300×160 transparent PNG with an opaque car-shaped
// block: a ready cut-out, used as it is.
func transparentCar(t *testing.T) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 300, 160))
	for y := 40; y < 150; y++ {
		for x := 30; x < 270; x++ {
			i := img.PixOffset(x, y)
			copy(img.Pix[i:i+4], []byte{uint8(x), uint8(y), 90, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// tasksStarted counts the tasks of op a worker has started.
func tasksStarted(w *e2etest.Proc, op string) int {
	n := 0
	for _, l := range e2etest.Lines(w.Stderr.String()) {
		if strings.Contains(l, `"message":"task started"`) && strings.Contains(l, `"op":"`+op+`"`) {
			n++
		}
	}
	return n
}

// A task that kills the worker process running it (SIGKILL, as the
// kernel's OOM killer does) is run once more by another worker; when that
// one dies too, the call ends 500 processing_failed, uncharged, its
// parameters in the log, and the task is not run a third time, while the
// third worker goes on answering other calls.
func TestHostileTaskKillingWorkersIsEnded(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	rs := redistest.New(t, redisDB)
	// A death is seen within 4 heartbeats (HEARTBEAT_INTERVAL): 2 s, not 4.
	env := []string{rs.Env(), "PORT=0", "WORKER_CONCURRENCY=1", "MAX_IN_FLIGHT_PER_KEY=16", "HEARTBEAT_INTERVAL=500ms"}
	web, s := e2etest.StartWeb(t, rs, env...)
	workers := []*e2etest.Proc{e2etest.StartProc(t, "worker", env...), e2etest.StartProc(t, "worker", env...), e2etest.StartProc(t, "worker", env...)}
	e2etest.WaitReady(t, s.URL)
	id, key := s.Account(t, 10)
	photo := e2etest.CarPhoto(t)

	type answer struct {
		status int
		h      http.Header
		body   []byte
	}
	send := func(op string, parts ...e2etest.Part) <-chan answer {
		c := make(chan answer, 1)
		go func() {
			status, h, body := e2etest.Post(t, s.URL+"/v1/"+op, key, parts...)
			c <- answer{status, h, body}
		}()
		return c
	}
	start := time.Now()
	killer := send("car-shadow", e2etest.File("image", photo), e2etest.Field("crop", "true"), e2etest.Field("padding", "4%"))
	var honest <-chan answer
	var dead []*e2etest.Proc
	for len(dead) < 2 {
		if time.Since(start) > 25*time.Second {
			t.Fatalf("after %d deaths, no worker started the task again", len(dead))
		}
		for _, w := range workers {
			// A SIGKILLed process takes a moment to exit (longer on a
			// busy machine): one killed already is not counted again.
			if !slices.Contains(dead, w) && e2etest.Running(w) && tasksStarted(w, "car-shadow") > 0 {
				w.Cmd.Process.Kill()
				dead = append(dead, w)
				t.Logf("worker %d killed at its task, %v in", len(dead), time.Since(start).Round(time.Millisecond))
				if honest == nil {
					honest = send("blur-plates", e2etest.File("image", photo))
				}
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	a := <-killer
	took := time.Since(start)
	e2etest.WantError(t, a.status, a.h, a.body, http.StatusInternalServerError, "processing_failed")
	if !strings.Contains(string(a.body), "not charged") {
		t.Errorf("message %s does not say the call was not charged", a.body)
	}
	if took > 25*time.Second {
		t.Errorf("ended %v after the call, want within 25 s", took.Round(time.Millisecond))
	}
	t.Logf("ended 500 %v after the call: %s", took.Round(time.Millisecond), a.body)
	if a := <-honest; a.status != http.StatusOK {
		t.Errorf("a call sent while the task was killing workers: %d %.300s", a.status, a.body)
	}
	if a := <-send("blur-plates", e2etest.File("image", photo)); a.status != http.StatusOK {
		t.Errorf("a call after the task was ended: %d %.300s", a.status, a.body)
	}
	time.Sleep(time.Second) // a third run, were there one, would have started by now
	runs := 0
	for _, w := range workers {
		runs += tasksStarted(w, "car-shadow")
	}
	if runs != 2 {
		t.Errorf("the task ran %d times, want 2: once, and once more after its worker died", runs)
	}
	survivor := 0
	for _, w := range workers {
		if e2etest.Running(w) {
			survivor++
		}
	}
	if survivor != 1 {
		t.Errorf("%d workers running, want the one the task never reached", survivor)
	}
	if got := s.Credits(t, id); got != 8 {
		t.Errorf("balance %d, want 8: the two honest calls charged, the ended one not", got)
	}
	logged := false
	for _, l := range e2etest.Lines(web.Stderr.String()) {
		if strings.Contains(l, "task ended: the worker processes running it died") && strings.Contains(l, `"padding":0.04`) {
			logged = true
		}
	}
	if !logged {
		t.Errorf("the web log does not record the ended task with its parameters:\n%s", e2etest.Tail(web.Stderr.String(), 2000))
	}
}
