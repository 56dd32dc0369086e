package resilience

import (
	"context"
	_ "image/jpeg"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"carphoto/billing"
	"carphoto/internal/testenv/e2etest"
	"carphoto/internal/testenv/redistest"
)

// A worker stopped with SIGTERM mid-task does not fail the request, and a
// worker killed with SIGKILL costs the client nothing: 500 at the deadline,
// uncharged, and the service keeps serving.
func TestWorkerStops(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	e2etest.SideBySide(t)
	rs := redistest.New(t, redisDB)
	// A worker's death is seen within 4 heartbeats (HEARTBEAT_INTERVAL): 2 s, not 4.
	env := []string{rs.Env(), "PORT=0", "REQUEST_TIMEOUT=10s", "WORKER_CONCURRENCY=1", "MAX_IN_FLIGHT_PER_KEY=16", "HEARTBEAT_INTERVAL=500ms"}
	web, s := e2etest.StartWeb(t, rs, env...)
	url := s.URL
	if status, _, body := e2etest.Do(t, http.MethodGet, url+"/readyz", "", "", nil); status != 503 {
		t.Errorf("/readyz with no worker: %d %s, want 503", status, body)
	}
	if status, _, _ := e2etest.Do(t, http.MethodGet, url+"/healthz", "", "", nil); status != 200 {
		t.Errorf("/healthz: %d, want 200", status)
	}
	id, key := s.Account(t, 10)
	photo := e2etest.BigPhoto(t)

	// send posts the photo to blur-plates in the background; the channel
	// gets the answer's status.
	send := func() <-chan int {
		res := make(chan int, 1)
		go func() {
			status, _, body := e2etest.Post(t, url+"/v1/blur-plates", key, e2etest.File("image", photo))
			if status != 200 {
				t.Logf("status %d: %.300s", status, body)
			}
			res <- status
		}()
		return res
	}
	// start sends one request and waits until worker w has begun its task.
	start := func(w *e2etest.Proc) <-chan int {
		before := strings.Count(w.Stderr.String(), "task started")
		res := send()
		deadline := time.Now().Add(20 * time.Second)
		for strings.Count(w.Stderr.String(), "task started") == before {
			if time.Now().After(deadline) {
				t.Fatalf("worker never started the task:\n%s", e2etest.Tail(w.Stderr.String(), 2000))
			}
			time.Sleep(5 * time.Millisecond)
		}
		return res
	}

	t.Run("SIGTERM hands the task back", func(t *testing.T) {
		a := e2etest.StartProc(t, "worker", append(env, "WORKER_SHUTDOWN_TIMEOUT=1ms")...)
		e2etest.WaitReady(t, url)
		res := start(a)
		b := e2etest.StartProc(t, "worker", env...)
		a.Cmd.Process.Signal(syscall.SIGTERM)
		if status := <-res; status != 200 {
			t.Errorf("status %d after SIGTERM with a second worker running, want 200", status)
		}
		if err := a.Cmd.Wait(); err != nil {
			t.Errorf("worker exit after SIGTERM: %v", err)
		}
		b.Cmd.Process.Signal(syscall.SIGTERM)
		b.Cmd.Wait()
	})
	if got := s.Credits(t, id); got != 9 {
		t.Fatalf("balance %d after one success, want 9", got)
	}

	t.Run("SIGKILL fails at the deadline uncharged", func(t *testing.T) {
		a := e2etest.StartProc(t, "worker", env...)
		e2etest.WaitReady(t, url)
		res := start(a)
		a.Cmd.Process.Kill()
		// Its run again finds no worker: withdrawn unstarted before the
		// deadline (503), or failed at it (500).
		if status := <-res; status != 500 && status != 503 {
			t.Errorf("status %d after SIGKILL, want 500 processing_failed or 503 service_unavailable", status)
		}
		if got := s.Credits(t, id); got != 9 {
			t.Errorf("balance %d after a killed task, want 9 (uncharged)", got)
		}
		b := e2etest.StartProc(t, "worker", env...)
		status, _, body := e2etest.Post(t, url+"/v1/blur-plates", key, e2etest.File("image", e2etest.CarPhoto(t)))
		if status != 200 {
			t.Errorf("service did not keep serving: %d %.300s", status, body)
		}
		b.Cmd.Process.Signal(syscall.SIGTERM)
		b.Cmd.Wait()
	})

	t.Run("SIGKILL with a second worker running: the other answers, charged once", func(t *testing.T) {
		before := s.Credits(t, id)
		ws := []*e2etest.Proc{e2etest.StartProc(t, "worker", env...), e2etest.StartProc(t, "worker", env...)}
		e2etest.WaitReady(t, url)
		started := func() []int {
			var n []int
			for _, w := range ws {
				n = append(n, strings.Count(w.Stderr.String(), "task started"))
			}
			return n
		}
		was := started()
		res := send()
		var holder *e2etest.Proc
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
		holder.Cmd.Process.Kill()
		killed := time.Now()
		if status := <-res; status != 200 {
			t.Errorf("status %d after SIGKILL with a second worker running, want 200", status)
		}
		if d := time.Since(killed); d > 10*time.Second {
			t.Errorf("answered %v after the kill, want within 10 s", d)
		} else {
			t.Logf("answered %v after the kill", d.Round(time.Millisecond))
		}
		if got := s.Credits(t, id); got != before-1 {
			t.Errorf("balance %d, want %d: charged once", got, before-1)
		}
		for _, w := range ws {
			if w != holder {
				w.Cmd.Process.Signal(syscall.SIGTERM)
				w.Cmd.Wait()
			}
		}
	})

	t.Run("16 concurrent calls on 5 credits with a worker killed", func(t *testing.T) {
		acct, k := s.Account(t, 5)
		a := e2etest.StartProc(t, "worker", env...)
		e2etest.StartProc(t, "worker", env...)
		e2etest.WaitReady(t, url)
		mid := e2etest.CarPhotoScaled(t, 2)
		before := strings.Count(a.Stderr.String(), "task started")
		res := make(chan map[int]int)
		go func() { res <- e2etest.Burst(t, 16, url+"/v1/blur-plates", k, mid) }()
		for strings.Count(a.Stderr.String(), "task started") == before {
			time.Sleep(2 * time.Millisecond)
		}
		a.Cmd.Process.Kill()
		counts := <-res
		t.Logf("statuses %v", counts)
		if counts[200]+counts[402]+counts[500]+counts[503] != 16 || counts[200] > 5 || counts[200] == 0 {
			t.Errorf("statuses %v: want only 200, 402, 500 and 503 (overload), at most 5 successes", counts)
		}
		if got, want := s.Credits(t, acct), int64(5-counts[200]); got != want {
			t.Errorf("balance %d after %d successes from 5, want %d: a credit was lost or charged twice", got, counts[200], want)
		}
		// The charge is written once the client has the whole answer, so
		// the last call's capture may land just after its client returns:
		// the ledger gets a few seconds to settle.
		captures := 0
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			entries, err := s.Billing.Ledger(context.Background(), acct, 1000)
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
		if got, want := s.Credits(t, acct), int64(5-counts[200]); got != want {
			t.Errorf("balance %d once the ledger settled, want %d", got, want)
		}
	})

	t.Run("SIGTERM to serve finishes in-flight requests", func(t *testing.T) {
		before := s.Credits(t, id)
		w := e2etest.StartProc(t, "worker", env...)
		res := start(w)
		web.Cmd.Process.Signal(syscall.SIGTERM)
		if status := <-res; status != 200 {
			t.Errorf("in-flight request got %d after SIGTERM to serve, want 200", status)
		}
		if err := web.Cmd.Wait(); err != nil {
			t.Errorf("serve exit after SIGTERM: %v", err)
		}
		if got := s.Credits(t, id); got != before-1 {
			t.Errorf("balance %d, want %d: the finished request is charged once", got, before-1)
		}
	})
}

// A burst larger than a web process's Redis pool waits for free slots
// instead of failing: 32 concurrent calls on a pool of 20 (4 photo slots).
func TestBurstBeyondPoolWaits(t *testing.T) {
	s := e2etest.StartService(t, map[string]string{"REDIS_POOL_SIZE": "20", "MAX_IN_FLIGHT_PER_KEY": "32"})
	id, key := s.Account(t, 32)
	photo := e2etest.CarPhoto(t)
	counts := e2etest.Burst(t, 32, s.URL+"/v1/blur-plates", key, photo)
	if counts[200] != 32 {
		t.Errorf("statuses %v, want 32×200", counts)
	}
	if got := s.Credits(t, id); got != 0 {
		t.Errorf("balance %d, want 0", got)
	}
}
