package videokill

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"carphoto/internal/testenv/e2etest"
	"carphoto/internal/testenv/redistest"
)

// The two worker-killing video tests wait on Asynq's recovery of a dead
// worker's task (recoverable): about a minute a death, mostly idle. They run
// side by side, each on a database of its own; not on a cluster, whose one
// database each test empties at its start.
const (
	killedDB      = 11
	killedTwiceDB = 12
)

// recoverable is how long after a worker's death Asynq's recoverer can
// take its task back: the task's lease (extended every few seconds while
// the worker lives) lapses within 30 s, and the recoverer takes only tasks
// whose lease lapsed 30 s before. A worker runs the recoverer as it
// starts, a running one once a minute: the worker-killing tests start a
// replacement then, as a supervisor restarting the dead process would,
// so each death costs them about a minute, not one to two.
const recoverable = 62 * time.Second

// A worker killed in the middle of a video job: Asynq takes the task back
// once the dead worker's lease on it has lapsed (recoverable: in the other
// worker within a minute more, or in a replacement as it starts) and
// another worker runs it again; it ends done, charged once.
func TestVideoWorkerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	e2etest.SideBySide(t)
	_, data := e2etest.VideoClip(t)
	rs := redistest.New(t, killedDB)
	env := []string{rs.Env(), "PORT=0", "VIDEO_DIR=" + t.TempDir(), "WORKER_CONCURRENCY=1"}
	_, s := e2etest.StartWeb(t, rs, env...)
	url := s.URL
	ws := []*e2etest.Proc{e2etest.StartProc(t, "worker", env...), e2etest.StartProc(t, "worker", env...)}
	e2etest.WaitReady(t, url)
	id, key := s.Account(t, 5)
	status, _, body := e2etest.Post(t, url+"/v1/video-blur", key, e2etest.File("video", data))
	if status != http.StatusAccepted {
		t.Fatalf("submit: %d %s", status, body)
	}
	var sub struct{ ID string }
	json.Unmarshal(body, &sub)
	var holder *e2etest.Proc
	for deadline := time.Now().Add(30 * time.Second); holder == nil; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no worker started the video job")
		}
		for _, w := range ws {
			if strings.Contains(w.Stderr.String(), "video job started") {
				holder = w
			}
		}
	}
	holder.Cmd.Process.Kill()
	killed := time.Now()
	var j e2etest.JobStatus
	// Asynq's recoverer takes the task back once it is recoverable: in the
	// replacement as it starts, or in the other worker, then the run.
	replaced := false
	for deadline := time.Now().Add(180 * time.Second); ; time.Sleep(time.Second) {
		if !replaced && time.Since(killed) > recoverable {
			e2etest.StartProc(t, "worker", env...)
			replaced = true
		}
		_, j = e2etest.GetJob(t, url, key, sub.ID)
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
	if got := s.Credits(t, id); got != 4 {
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
	e2etest.SideBySide(t)
	_, data := e2etest.VideoClip(t)
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
	_, s := e2etest.StartWeb(t, rs, env...)
	ws := []*e2etest.Proc{e2etest.StartProc(t, "worker", env...), e2etest.StartProc(t, "worker", env...), e2etest.StartProc(t, "worker", env...)}
	e2etest.WaitReady(t, s.URL)
	id, key := s.Account(t, 5)
	status, _, body := e2etest.Post(t, s.URL+"/v1/video-blur", key, e2etest.File("video", data), e2etest.Field("webhookUrl", hook.URL+"/done"))
	if status != http.StatusAccepted {
		t.Fatalf("submit: %d %s", status, body)
	}
	var sub struct{ ID string }
	json.Unmarshal(body, &sub)
	runs := func(w *e2etest.Proc) int { return strings.Count(w.Stderr.String(), "video job started") }

	start := time.Now()
	var dead []*e2etest.Proc
	var lastDeath time.Time
	// replace starts a worker in place of the last one killed once its
	// task is recoverable (recoverable), once per death.
	replace := func() {
		if len(ws) < 3+len(dead) && time.Since(lastDeath) > recoverable {
			ws = append(ws, e2etest.StartProc(t, "worker", env...))
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
				w.Cmd.Process.Kill()
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
	if _, j := e2etest.GetJob(t, s.URL, key, sub.ID); j.Status != "failed" || j.Code != "processing_failed" {
		t.Errorf("job %+v, want failed, processing_failed", j)
	}
	if got := s.Credits(t, id); got != 5 {
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
		if !slices.Contains(dead, w) && !e2etest.Running(w) {
			t.Errorf("the worker the job never reached is not running:\n%s", e2etest.Tail(w.Stderr.String(), 2000))
		}
	}
}
