package video

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"carphoto/internal/testenv/e2etest"
	"carphoto/internal/testenv/videotest"
	"carphoto/video"
)

// A video goes in, 202 with a job; the job runs on the worker's video
// queue, reports progress, ends done with an MP4 of the same length, frame
// rate and audio; it is charged per started 10 seconds, once; the webhook
// is called, signed; and the errors are the photo operations' own.
func TestVideoBlur(t *testing.T) {
	clip, data := e2etest.VideoClip(t)
	const secret = "test-webhook-secret-0123"
	var mu sync.Mutex
	var hooks []string
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sig := r.Header.Get("Carphoto-Signature")
		ts, v1, _ := strings.Cut(strings.TrimPrefix(sig, "t="), ",v1=")
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(ts + "."))
		m.Write(body)
		mu.Lock()
		defer mu.Unlock()
		if hex.EncodeToString(m.Sum(nil)) != v1 {
			hooks = append(hooks, "BAD SIGNATURE "+string(body))
			return
		}
		hooks = append(hooks, string(body))
	}))
	defer hook.Close()

	s := e2etest.StartService(t, map[string]string{"VIDEO_DIR": t.TempDir(), "WEBHOOK_SECRET": secret,
		"WEBHOOK_ALLOW_PRIVATE": "true", "MAX_VIDEO_SECONDS": "20", "LOG_LEVEL": "info"})
	id, key := s.Account(t, 5)
	_, poor := s.Account(t, 0)
	_, other := s.Account(t, 5)

	status, h, body := e2etest.Post(t, s.URL+"/v1/video-blur", key, e2etest.File("video", data), e2etest.Field("webhookUrl", hook.URL+"/done"))
	if status != http.StatusAccepted {
		t.Fatalf("submit: %d %s", status, body)
	}
	var sub struct {
		ID      string
		Status  string
		Credits int64
	}
	json.Unmarshal(body, &sub)
	if sub.Status != "queued" || sub.Credits != 1 || h.Get("Location") != "/v1/jobs/"+sub.ID {
		t.Errorf("submit answer %s, Location %q: want queued, 1 credit (3 s started 10 s), Location of the job", body, h.Get("Location"))
	}
	if got := s.Credits(t, id); got != 4 {
		t.Errorf("balance %d while the job runs, want 4 (1 held)", got)
	}
	if st, _, _ := e2etest.Do(t, http.MethodGet, s.URL+"/v1/jobs/"+sub.ID, other, "", nil); st != 404 {
		t.Errorf("another account's GET of the job: %d, want 404", st)
	}
	var j e2etest.JobStatus
	// The poll loop an integrator writes: wait what Retry-After says (every
	// /v1 call counts toward the key's 60 a minute). An unfinished job
	// answers 2 to 30 s, from its progress; a finished one none.
	var steps []string
	for deadline := time.Now().Add(90 * time.Second); ; {
		status, h, body := e2etest.Do(t, http.MethodGet, s.URL+"/v1/jobs/"+sub.ID, key, "", nil)
		j = e2etest.JobStatus{}
		if status != 200 || json.Unmarshal(body, &j) != nil {
			t.Fatalf("job status: %d %s", status, body)
		}
		ra := h.Get("Retry-After")
		steps = append(steps, fmt.Sprintf("%s %d/%d: Retry-After %q", j.Status, j.Progress.FramesDone, j.Progress.FramesTotal, ra))
		if j.Status == "done" || j.Status == "failed" {
			if ra != "" {
				t.Errorf("a %s job answers Retry-After %q, want none", j.Status, ra)
			}
			break
		}
		wait, err := strconv.Atoi(ra)
		if err != nil || wait < 2 || wait > 30 {
			t.Fatalf("a %s job answers Retry-After %q, want 2 to 30 seconds", j.Status, ra)
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still %s after 90 s", j.Status)
		}
		time.Sleep(time.Duration(wait) * time.Second)
	}
	t.Logf("%d polls following Retry-After: %s", len(steps), strings.Join(steps, "; "))
	if j.Status != "done" || j.Result != "/v1/jobs/"+sub.ID+"/result" || j.Progress.FramesDone != j.Progress.FramesTotal || j.Progress.FramesTotal < videotest.Frames {
		t.Fatalf("job ended %+v", j)
	}
	status, h, mp4 := e2etest.Do(t, http.MethodGet, s.URL+j.Result, key, "", nil)
	if status != 200 || h.Get("Content-Type") != "video/mp4" {
		t.Fatalf("result: %d %q", status, h.Get("Content-Type"))
	}
	out := filepath.Join(t.TempDir(), "out.mp4")
	os.WriteFile(out, mp4, 0o600)
	in, _ := video.Probe(context.Background(), clip)
	got, err := video.Probe(context.Background(), out)
	if err != nil || got.Width != in.Width || got.Height != in.Height || math.Abs(got.FPS-in.FPS) > 0.01 ||
		math.Abs(got.Duration-in.Duration) > 0.25 || !got.Audio {
		t.Errorf("result %+v (%v), input %+v: size, frame rate, duration or audio not kept", got, err, in)
	}
	if got := s.Credits(t, id); got != 4 {
		t.Errorf("balance %d after the job, want 4: charged once, 1 credit", got)
	}
	// video-blur is priced in /v1/account (per started 10 s), offered in
	// unknown_tool's list and counted in the credits metric.
	_, _, acct := e2etest.Do(t, http.MethodGet, s.URL+"/v1/account", key, "", nil)
	var account struct {
		Cost map[string]int64 `json:"costPerOperation"`
	}
	if err := json.Unmarshal(acct, &account); err != nil || account.Cost["video-blur"] != 1 {
		t.Errorf("/v1/account %s: want video-blur priced 1 (per started 10 s)", acct)
	}
	status, h, body = e2etest.Post(t, s.URL+"/v1/video-blurs", key, e2etest.File("video", data))
	e2etest.WantError(t, status, h, body, 400, "unknown_tool")
	if !strings.Contains(string(body), "video-blur") {
		t.Errorf("unknown_tool %s does not list video-blur", body)
	}
	if got := e2etest.Value(e2etest.Scrape(t, http.DefaultClient, s.URL+"/metrics"), "carphoto_credits_charged_total", "op", "video-blur"); got != 1 {
		t.Errorf("carphoto_credits_charged_total{op=video-blur} = %v, want 1", got)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		n := len(hooks)
		mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
	}
	mu.Lock()
	if len(hooks) != 1 || !strings.Contains(hooks[0], `"status":"done"`) || !strings.Contains(hooks[0], sub.ID) {
		t.Errorf("webhook calls %q, want one signed call saying the job is done", hooks)
	}
	e2etest.CheckWebhooks(t, hooks...)
	mu.Unlock()

	for _, tt := range []struct {
		name   string
		key    string
		parts  []e2etest.Part
		status int
		code   string
	}{
		{"no key", "", []e2etest.Part{e2etest.File("video", data)}, 401, "invalid_api_key"},
		{"no credits", poor, []e2etest.Part{e2etest.File("video", data)}, 402, "insufficient_credits"},
		{"no video", key, []e2etest.Part{e2etest.Field("style", "blur")}, 400, "missing_image"},
		{"not a video", key, []e2etest.Part{e2etest.File("video", []byte("this is not a video"))}, 400, "invalid_params"},
		{"bad style", key, []e2etest.Part{e2etest.File("video", data), e2etest.Field("style", "sparkle")}, 400, "invalid_params"},
		{"unknown field", key, []e2etest.Part{e2etest.File("video", data), e2etest.Field("image", "x")}, 400, "invalid_params"},
		{"webhook to ftp", key, []e2etest.Part{e2etest.File("video", data), e2etest.Field("webhookUrl", "ftp://example.com/x")}, 400, "invalid_params"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := e2etest.Post(t, s.URL+"/v1/video-blur", tt.key, tt.parts...)
			e2etest.WantError(t, status, h, body, tt.status, tt.code)
		})
	}
	if st, _, _ := e2etest.Do(t, http.MethodGet, s.URL+"/v1/jobs/vid_nope", key, "", nil); st != 404 {
		t.Errorf("unknown job: %d, want 404", st)
	}
	if got := s.Credits(t, id); got != 4 {
		t.Errorf("balance %d after refused videos, want 4 (uncharged)", got)
	}
}

// A video over MAX_VIDEO_SECONDS is refused before any work, uncharged.
func TestVideoTooLong(t *testing.T) {
	_, data := e2etest.VideoClip(t)
	s := e2etest.StartService(t, map[string]string{"VIDEO_DIR": t.TempDir(), "MAX_VIDEO_SECONDS": "2"})
	id, key := s.Account(t, 5)
	status, h, body := e2etest.Post(t, s.URL+"/v1/video-blur", key, e2etest.File("video", data))
	e2etest.WantError(t, status, h, body, 400, "invalid_params")
	if !strings.Contains(string(body), "limit") {
		t.Errorf("message %s does not name the limit", body)
	}
	if got := s.Credits(t, id); got != 5 {
		t.Errorf("balance %d, want 5", got)
	}
}

// The newer operations share the photo operations' rate limit per key: past
// it, 429 with Retry-After, uncharged.
func TestNewOperationsRateLimited(t *testing.T) {
	s := e2etest.StartService(t, map[string]string{"RATE_LIMIT_PER_MINUTE": "2", "VIDEO_DIR": t.TempDir()})
	id, key := s.Account(t, 10)
	photo := e2etest.CarPhoto(t)
	for i, path := range []string{"/v1/logo-overlay", "/v1/car-cutout", "/v1/car-cutout", "/v1/video-blur"} {
		parts := []e2etest.Part{e2etest.File("image", photo)}
		if path == "/v1/logo-overlay" {
			parts = append(parts, e2etest.File("logo", e2etest.TwoColourLogo(t)))
		}
		status, h, body := e2etest.Post(t, s.URL+path, key, parts...)
		if i < 2 {
			if status != 200 {
				t.Fatalf("call %d to %s: %d %s", i+1, path, status, body)
			}
			continue
		}
		e2etest.WantError(t, status, h, body, 429, "rate_limited")
		if h.Get("Retry-After") == "" {
			t.Errorf("%s past the limit: no Retry-After", path)
		}
	}
	if got := s.Credits(t, id); got != 8 {
		t.Errorf("balance %d after 2 successes from 10, want 8", got)
	}
}

// A video may take longer to upload than a photo request's whole
// deadline: it has VIDEO_UPLOAD_TIMEOUT, and its answer still gets out.
func TestVideoSlowUpload(t *testing.T) {
	_, data := e2etest.VideoClip(t)
	s := e2etest.StartService(t, map[string]string{"VIDEO_DIR": t.TempDir(), "REQUEST_TIMEOUT": "2s", "VIDEO_UPLOAD_TIMEOUT": "30s"})
	_, key := s.Account(t, 5)
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		fw, _ := mw.CreateFormFile("video", "clip.mp4")
		// The clip in 8 pieces over about 4 s: twice the photo deadline.
		for i := range 8 {
			fw.Write(data[i*len(data)/8 : (i+1)*len(data)/8])
			time.Sleep(500 * time.Millisecond)
		}
		mw.Close()
		pw.Close()
	}()
	start := time.Now()
	status, _, body := e2etest.Do(t, http.MethodPost, s.URL+"/v1/video-blur", key, mw.FormDataContentType(), pr)
	if status != http.StatusAccepted {
		t.Fatalf("a video uploaded over %v: %d %s, want 202", time.Since(start).Round(time.Millisecond), status, body)
	}
}

// video-blur honours Idempotency-Key like the photo operations: a retry of
// the same upload gets the same job, charged once; another video under the
// same key is 422 idempotency_key_reused.
func TestVideoBlurIdempotent(t *testing.T) {
	_, data := e2etest.VideoClip(t)
	s := e2etest.StartService(t, map[string]string{"VIDEO_DIR": t.TempDir(), "MAX_VIDEO_SECONDS": "20"})
	id, key := s.Account(t, 5)
	type sub struct {
		ID      string
		Credits int64
	}
	var first, again sub
	status, h1, body := e2etest.PostIdem(t, s.URL+"/v1/video-blur", key, "video-1", e2etest.File("video", data))
	if status != http.StatusAccepted {
		t.Fatalf("submit: %d %s", status, body)
	}
	json.Unmarshal(body, &first)
	status, h2, body2 := e2etest.PostIdem(t, s.URL+"/v1/video-blur", key, "video-1", e2etest.File("video", data))
	if status != http.StatusAccepted {
		t.Fatalf("retry: %d %s", status, body2)
	}
	json.Unmarshal(body2, &again)
	if again.ID != first.ID || h2.Get("Idempotent-Replayed") != "true" || h2.Get("Location") != h1.Get("Location") {
		t.Errorf("retry: job %s (replayed %q, Location %q), want the first job %s again (Location %q)",
			again.ID, h2.Get("Idempotent-Replayed"), h2.Get("Location"), first.ID, h1.Get("Location"))
	}
	if got := s.Credits(t, id); got != 5-first.Credits {
		t.Errorf("balance %d after a call and its retry, want %d: charged once", got, 5-first.Credits)
	}
	other := append(bytes.Clone(data), 0) // another upload under the same key
	status, h, body3 := e2etest.PostIdem(t, s.URL+"/v1/video-blur", key, "video-1", e2etest.File("video", other))
	e2etest.WantError(t, status, h, body3, http.StatusUnprocessableEntity, "idempotency_key_reused")
}
