package main

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
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"carphoto/internal/testenv/apitest"
	"carphoto/internal/testenv/redistest"
	"carphoto/internal/testenv/videotest"
	"carphoto/video"
)

// jobStatus is GET /v1/jobs/{id}'s answer.
type jobStatus struct {
	ID       string
	Status   string
	Progress struct{ FramesDone, FramesTotal int }
	Credits  int64
	Result   string `json:"resultUrl"`
	Code     string
	Error    string
}

func getJob(t *testing.T, url, key, id string) (int, jobStatus) {
	t.Helper()
	status, _, body := do(t, http.MethodGet, url+"/v1/jobs/"+id, key, "", nil)
	var j jobStatus
	if status == 200 {
		if err := json.Unmarshal(body, &j); err != nil {
			t.Fatalf("job status is not JSON: %s", body)
		}
	}
	return status, j
}

// A video goes in, 202 with a job; the job runs on the worker's video
// queue, reports progress, ends done with an MP4 of the same length, frame
// rate and audio; it is charged per started 10 seconds, once; the webhook
// is called, signed; and the errors are the photo operations' own.
func TestVideoBlur(t *testing.T) {
	clip, data := testVideo(t)
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

	s := startService(t, map[string]string{"VIDEO_DIR": t.TempDir(), "WEBHOOK_SECRET": secret,
		"WEBHOOK_ALLOW_PRIVATE": "true", "MAX_VIDEO_SECONDS": "20", "LOG_LEVEL": "info"})
	id, key := s.account(t, 5)
	_, poor := s.account(t, 0)
	_, other := s.account(t, 5)

	status, h, body := post(t, s.url+"/v1/video-blur", key, file("video", data), field("webhookUrl", hook.URL+"/done"))
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
	if got := s.credits(t, id); got != 4 {
		t.Errorf("balance %d while the job runs, want 4 (1 held)", got)
	}
	if st, _, _ := do(t, http.MethodGet, s.url+"/v1/jobs/"+sub.ID, other, "", nil); st != 404 {
		t.Errorf("another account's GET of the job: %d, want 404", st)
	}
	var j jobStatus
	// The poll loop an integrator writes: wait what Retry-After says (every
	// /v1 call counts toward the key's 60 a minute). An unfinished job
	// answers 2 to 30 s, from its progress; a finished one none.
	var steps []string
	for deadline := time.Now().Add(90 * time.Second); ; {
		status, h, body := do(t, http.MethodGet, s.url+"/v1/jobs/"+sub.ID, key, "", nil)
		j = jobStatus{}
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
	status, h, mp4 := do(t, http.MethodGet, s.url+j.Result, key, "", nil)
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
	if got := s.credits(t, id); got != 4 {
		t.Errorf("balance %d after the job, want 4: charged once, 1 credit", got)
	}
	// video-blur is priced in /v1/account (per started 10 s), offered in
	// unknown_tool's list and counted in the credits metric.
	_, _, acct := do(t, http.MethodGet, s.url+"/v1/account", key, "", nil)
	var account struct {
		Cost map[string]int64 `json:"costPerOperation"`
	}
	if err := json.Unmarshal(acct, &account); err != nil || account.Cost["video-blur"] != 1 {
		t.Errorf("/v1/account %s: want video-blur priced 1 (per started 10 s)", acct)
	}
	status, h, body = post(t, s.url+"/v1/video-blurs", key, file("video", data))
	wantError(t, status, h, body, 400, "unknown_tool")
	if !strings.Contains(string(body), "video-blur") {
		t.Errorf("unknown_tool %s does not list video-blur", body)
	}
	if got := value(scrape(t, http.DefaultClient, s.url+"/metrics"), "carphoto_credits_charged_total", "op", "video-blur"); got != 1 {
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
	checkWebhooks(t, hooks...)
	mu.Unlock()

	for _, tt := range []struct {
		name   string
		key    string
		parts  []part
		status int
		code   string
	}{
		{"no key", "", []part{file("video", data)}, 401, "invalid_api_key"},
		{"no credits", poor, []part{file("video", data)}, 402, "insufficient_credits"},
		{"no video", key, []part{field("style", "blur")}, 400, "missing_image"},
		{"not a video", key, []part{file("video", []byte("this is not a video"))}, 400, "invalid_params"},
		{"bad style", key, []part{file("video", data), field("style", "sparkle")}, 400, "invalid_params"},
		{"unknown field", key, []part{file("video", data), field("image", "x")}, 400, "invalid_params"},
		{"webhook to ftp", key, []part{file("video", data), field("webhookUrl", "ftp://example.com/x")}, 400, "invalid_params"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := post(t, s.url+"/v1/video-blur", tt.key, tt.parts...)
			wantError(t, status, h, body, tt.status, tt.code)
		})
	}
	if st, _, _ := do(t, http.MethodGet, s.url+"/v1/jobs/vid_nope", key, "", nil); st != 404 {
		t.Errorf("unknown job: %d, want 404", st)
	}
	if got := s.credits(t, id); got != 4 {
		t.Errorf("balance %d after refused videos, want 4 (uncharged)", got)
	}
}

// A video over MAX_VIDEO_SECONDS is refused before any work, uncharged.
func TestVideoTooLong(t *testing.T) {
	_, data := testVideo(t)
	s := startService(t, map[string]string{"VIDEO_DIR": t.TempDir(), "MAX_VIDEO_SECONDS": "2"})
	id, key := s.account(t, 5)
	status, h, body := post(t, s.url+"/v1/video-blur", key, file("video", data))
	wantError(t, status, h, body, 400, "invalid_params")
	if !strings.Contains(string(body), "limit") {
		t.Errorf("message %s does not name the limit", body)
	}
	if got := s.credits(t, id); got != 5 {
		t.Errorf("balance %d, want 5", got)
	}
}

// testVideo skips t where ffmpeg is missing, else makes the short test
// clip (a car with a plate) and returns its path and bytes.
// checkWebhooks holds webhook bodies to openapi.json's videoJobEnded.
func checkWebhooks(t *testing.T, bodies ...string) {
	t.Helper()
	c, err := apitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bodies {
		if err := c.CheckWebhook("videoJobEnded", []byte(b)); err != nil {
			t.Errorf("a webhook's body does not match openapi.json: %v", err)
		}
	}
}

func testVideo(t *testing.T) (string, []byte) {
	t.Helper()
	if err := video.Available(); err != nil {
		t.Skip(err.Error())
	}
	clip := videotest.Make(t, t.TempDir())
	data, err := os.ReadFile(clip)
	if err != nil {
		t.Fatal(err)
	}
	return clip, data
}

// The two worker-killing video tests wait on Asynq's recovery of a dead
// worker's task (recoverable): about a minute a death, mostly idle. They run side by side, after the package's other
// tests, each on a database of its own; not on a cluster, whose one
// database each test empties at its start. The two hang-up tests (about
// a minute of 200 clients each) run beside them, in those idle minutes.
const (
	killedDB      = 11
	killedTwiceDB = 12
	hangupsDB     = 13
	hangupsKillDB = 14
)

// recoverable is how long after a worker's death Asynq's recoverer can
// take its task back: the task's lease (extended every few seconds while
// the worker lives) lapses within 30 s, and the recoverer takes only tasks
// whose lease lapsed 30 s before. A worker runs the recoverer as it
// starts, a running one once a minute: the worker-killing tests start a
// replacement then, as a supervisor restarting the dead process would,
// so each death costs them about a minute, not one to two.
const recoverable = 62 * time.Second

// sideBySide lets a long, mostly waiting test run beside the other such
// tests, unless they share a Redis Cluster.
func sideBySide(t *testing.T) {
	if !redistest.ClusterWanted() {
		t.Parallel()
	}
}

// A worker killed in the middle of a video job: Asynq takes the task back
// once the dead worker's lease on it has lapsed (recoverable: in the other
// worker within a minute more, or in a replacement as it starts) and
// another worker runs it again; it ends done, charged once.
func TestVideoWorkerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	sideBySide(t)
	_, data := testVideo(t)
	rs := redistest.New(t, killedDB)
	env := []string{rs.Env(), "PORT=0", "VIDEO_DIR=" + t.TempDir(), "WORKER_CONCURRENCY=1"}
	_, s := startWeb(t, rs, env...)
	url := s.url
	ws := []*proc{startProc(t, "worker", env...), startProc(t, "worker", env...)}
	waitReady(t, url)
	id, key := s.account(t, 5)
	status, _, body := post(t, url+"/v1/video-blur", key, file("video", data))
	if status != http.StatusAccepted {
		t.Fatalf("submit: %d %s", status, body)
	}
	var sub struct{ ID string }
	json.Unmarshal(body, &sub)
	var holder *proc
	for deadline := time.Now().Add(30 * time.Second); holder == nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no worker started the video job")
		}
		for _, w := range ws {
			if strings.Contains(w.stderr.String(), "video job started") {
				holder = w
			}
		}
	}
	holder.cmd.Process.Kill()
	killed := time.Now()
	var j jobStatus
	// Asynq's recoverer takes the task back once it is recoverable: in the
	// replacement as it starts, or in the other worker, then the run.
	replaced := false
	for deadline := time.Now().Add(180 * time.Second); ; time.Sleep(time.Second) {
		if !replaced && time.Since(killed) > recoverable {
			startProc(t, "worker", env...)
			replaced = true
		}
		_, j = getJob(t, url, key, sub.ID)
		if j.Status == "done" || j.Status == "failed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job still %s 180 s after its worker was killed", j.Status)
		}
	}
	t.Logf("job %s %v after its worker was killed", j.Status, time.Since(killed).Round(100*time.Millisecond))
	if j.Status != "done" {
		t.Errorf("job ended %+v, want done by the other worker", j)
	}
	if got := s.credits(t, id); got != 4 {
		t.Errorf("balance %d, want 4: charged once", got)
	}
}

// A video job whose worker processes are SIGKILLed at it twice (as the
// kernel's OOM killer does) is run once more by Asynq after the first
// death and ended after the second: failed, processing_failed, uncharged,
// its webhook called, with nobody polling the job in between; the worker
// it never reached stays up.
func TestVideoWorkerKilledTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	sideBySide(t)
	_, data := testVideo(t)
	const secret = "test-webhook-secret-0123"
	hooks := make(chan string, 4)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		hooks <- string(body)
	}))
	defer hook.Close()
	rs := redistest.New(t, killedTwiceDB)
	env := []string{rs.Env(), "PORT=0", "VIDEO_DIR=" + t.TempDir(), "WORKER_CONCURRENCY=1",
		"WEBHOOK_SECRET=" + secret, "WEBHOOK_ALLOW_PRIVATE=true"}
	_, s := startWeb(t, rs, env...)
	ws := []*proc{startProc(t, "worker", env...), startProc(t, "worker", env...), startProc(t, "worker", env...)}
	waitReady(t, s.url)
	id, key := s.account(t, 5)
	status, _, body := post(t, s.url+"/v1/video-blur", key, file("video", data), field("webhookUrl", hook.URL+"/done"))
	if status != http.StatusAccepted {
		t.Fatalf("submit: %d %s", status, body)
	}
	var sub struct{ ID string }
	json.Unmarshal(body, &sub)
	runs := func(w *proc) int { return strings.Count(w.stderr.String(), "video job started") }

	start := time.Now()
	var dead []*proc
	var lastDeath time.Time
	// replace starts a worker in place of the last one killed once its
	// task is recoverable (recoverable), once per death.
	replace := func() {
		if len(ws) < 3+len(dead) && time.Since(lastDeath) > recoverable {
			ws = append(ws, startProc(t, "worker", env...))
		}
	}
	for deadline := time.Now().Add(200 * time.Second); len(dead) < 2; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("after %d deaths, no worker started the video job again", len(dead))
		}
		if len(dead) > 0 {
			replace()
		}
		for _, w := range ws {
			if !slices.Contains(dead, w) && runs(w) > 0 {
				w.cmd.Process.Kill()
				dead = append(dead, w)
				lastDeath = time.Now()
				t.Logf("worker %d killed at the video job, %v in", len(dead), time.Since(start).Round(time.Millisecond))
			}
		}
	}
	var hooked string
	for deadline := time.Now().Add(200 * time.Second); hooked == ""; {
		select {
		case hooked = <-hooks:
		case <-time.After(time.Second):
			replace()
			if time.Now().After(deadline) {
				t.Fatal("no webhook 200 s after the second worker was killed")
			}
		}
	}
	t.Logf("webhook %v after the submit: %s", time.Since(start).Round(time.Second), hooked)
	var end struct{ ID, Status, Code, Error string }
	if err := json.Unmarshal([]byte(hooked), &end); err != nil || end.ID != sub.ID || end.Status != "failed" ||
		end.Code != "processing_failed" || !strings.Contains(end.Error, "not charged") {
		t.Errorf("webhook %s, want job %s failed, processing_failed, not charged", hooked, sub.ID)
	}
	if _, j := getJob(t, s.url, key, sub.ID); j.Status != "failed" || j.Code != "processing_failed" {
		t.Errorf("job %+v, want failed, processing_failed", j)
	}
	if got := s.credits(t, id); got != 5 {
		t.Errorf("balance %d, want 5: uncharged", got)
	}
	time.Sleep(2 * time.Second) // a third run, were there one, would have started by now
	total := 0
	for _, w := range ws {
		total += runs(w)
	}
	if total != 2 {
		t.Errorf("the job ran %d times, want 2: once, and once more after its worker died", total)
	}
	for _, w := range ws {
		if !slices.Contains(dead, w) && !running(w) {
			t.Errorf("the worker the job never reached is not running:\n%s", tail(w.stderr.String(), 2000))
		}
	}
}

// The newer operations share the photo operations' rate limit per key: past
// it, 429 with Retry-After, uncharged.
func TestNewOperationsRateLimited(t *testing.T) {
	s := startService(t, map[string]string{"RATE_LIMIT_PER_MINUTE": "2", "VIDEO_DIR": t.TempDir()})
	id, key := s.account(t, 10)
	photo := carPhoto(t)
	for i, path := range []string{"/v1/logo-overlay", "/v1/car-cutout", "/v1/car-cutout", "/v1/video-blur"} {
		parts := []part{file("image", photo)}
		if path == "/v1/logo-overlay" {
			parts = append(parts, file("logo", twoColourLogo(t)))
		}
		status, h, body := post(t, s.url+path, key, parts...)
		if i < 2 {
			if status != 200 {
				t.Fatalf("call %d to %s: %d %s", i+1, path, status, body)
			}
			continue
		}
		wantError(t, status, h, body, 429, "rate_limited")
		if h.Get("Retry-After") == "" {
			t.Errorf("%s past the limit: no Retry-After", path)
		}
	}
	if got := s.credits(t, id); got != 8 {
		t.Errorf("balance %d after 2 successes from 10, want 8", got)
	}
}

// A video may take longer to upload than a photo request's whole
// deadline: it has VIDEO_UPLOAD_TIMEOUT, and its answer still gets out.
func TestVideoSlowUpload(t *testing.T) {
	_, data := testVideo(t)
	s := startService(t, map[string]string{"VIDEO_DIR": t.TempDir(), "REQUEST_TIMEOUT": "2s", "VIDEO_UPLOAD_TIMEOUT": "30s"})
	_, key := s.account(t, 5)
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
	status, _, body := do(t, http.MethodPost, s.url+"/v1/video-blur", key, mw.FormDataContentType(), pr)
	if status != http.StatusAccepted {
		t.Fatalf("a video uploaded over %v: %d %s, want 202", time.Since(start).Round(time.Millisecond), status, body)
	}
}

// video-blur honours Idempotency-Key like the photo operations: a retry of
// the same upload gets the same job, charged once; another video under the
// same key is 422 idempotency_key_reused.
func TestVideoBlurIdempotent(t *testing.T) {
	_, data := testVideo(t)
	s := startService(t, map[string]string{"VIDEO_DIR": t.TempDir(), "MAX_VIDEO_SECONDS": "20"})
	id, key := s.account(t, 5)
	type sub struct {
		ID      string
		Credits int64
	}
	var first, again sub
	status, h1, body := postIdem(t, s.url+"/v1/video-blur", key, "video-1", file("video", data))
	if status != http.StatusAccepted {
		t.Fatalf("submit: %d %s", status, body)
	}
	json.Unmarshal(body, &first)
	status, h2, body2 := postIdem(t, s.url+"/v1/video-blur", key, "video-1", file("video", data))
	if status != http.StatusAccepted {
		t.Fatalf("retry: %d %s", status, body2)
	}
	json.Unmarshal(body2, &again)
	if again.ID != first.ID || h2.Get("Idempotent-Replayed") != "true" || h2.Get("Location") != h1.Get("Location") {
		t.Errorf("retry: job %s (replayed %q, Location %q), want the first job %s again (Location %q)",
			again.ID, h2.Get("Idempotent-Replayed"), h2.Get("Location"), first.ID, h1.Get("Location"))
	}
	if got := s.credits(t, id); got != 5-first.Credits {
		t.Errorf("balance %d after a call and its retry, want %d: charged once", got, 5-first.Credits)
	}
	other := append(bytes.Clone(data), 0) // another upload under the same key
	status, h, body3 := postIdem(t, s.url+"/v1/video-blur", key, "video-1", file("video", other))
	wantError(t, status, h, body3, http.StatusUnprocessableEntity, "idempotency_key_reused")
}
