//go:build linux

package resilience

// Issue 77's Redis killed mid-call: a Redis whose append-only file takes
// seconds to load, SIGKILLed and started again during the calls.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"carphoto/internal/testenv/e2etest"
	"carphoto/internal/testenv/redistest"
	"carphoto/jobs"
)

// killableRedis starts a redis-server of the test's own with an
// append-only file (fsync always) whose base holds filler keys (in
// database 15), so that loading it after a restart takes seconds, as a
// production Redis with data does. kill SIGKILLs it and starts it again on
// the same port at once; it returns when the new one accepts connections,
// still loading.
//
// The load is slowed by Redis's own key-load-delay (negative: a
// microsecond's sleep, some 60–90 µs of a real one, every that many keys),
// so that it takes seconds on a fast machine too, not only on a slow one:
// 1 M keys at -15 load in about 6–8 s.
func killableRedis(t *testing.T, filler, keyLoadDelay int) (url string, kill func()) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed (apt-get install redis-server): this test kills a Redis of its own")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	probe := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { probe.Close() })
	var cmd *exec.Cmd
	start := func() {
		cmd = exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "",
			"--appendonly", "yes", "--appendfsync", "always", "--enable-debug-command", "local",
			"--key-load-delay", fmt.Sprint(keyLoadDelay))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			err := probe.Ping(context.Background()).Err()
			if err == nil || strings.HasPrefix(err.Error(), "LOADING") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("redis-server did not start: %v", err)
			}
		}
	}
	start()
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	ctx := context.Background()
	fill := redis.NewClient(&redis.Options{Addr: addr, DB: 15, ReadTimeout: 2 * time.Minute})
	defer fill.Close()
	if err := fill.Do(ctx, "DEBUG", "POPULATE", filler, "filler", 64).Err(); err != nil {
		t.Fatalf("DEBUG POPULATE: %v", err)
	}
	// DEBUG POPULATE is not logged: a rewrite puts the keys in the file.
	if err := fill.BgRewriteAOF(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		info, err := fill.Info(ctx, "persistence").Result()
		if err == nil && strings.Contains(info, "aof_rewrite_in_progress:0") && strings.Contains(info, "aof_rewrite_scheduled:0") &&
			strings.Contains(info, "aof_last_bgrewrite_status:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the AOF rewrite did not finish: %v", err)
		}
	}
	return "redis://" + addr + "/0", func() {
		cmd.Process.Kill()
		cmd.Wait()
		start()
	}
}

// TestRedisKilledDuringCalls: 40 blur-plates calls in flight and Redis
// SIGKILLed, started again at once on its append-only file, which takes
// seconds to load (1 M filler keys, slowed to 5 s or more): while it loads, every command and
// transaction is refused with LOADING (a transaction's EXEC with
// EXECABORT). Every call is answered 200 within its deadline, charged
// exactly, and no hold stays open.
func TestRedisKilledDuringCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	t.Parallel() // on a redis-server of its own: beside the package's other tests
	url, kill := killableRedis(t, 1_000_000, -15)
	const timeout = 45 * time.Second
	env := []string{"REDIS_URL=" + url, "PORT=0", "REQUEST_TIMEOUT=" + timeout.String(), "MAX_IN_FLIGHT_PER_KEY=40"}
	rs := &redistest.Server{URL: url, Client: redis.NewClient(&redis.Options{Addr: strings.TrimSuffix(strings.TrimPrefix(url, "redis://"), "/0")})}
	defer rs.Client.Close()
	_, s := e2etest.StartWeb(t, rs, env...)
	e2etest.StartProc(t, "worker", env...)
	e2etest.StartProc(t, "worker", env...)
	e2etest.WaitReady(t, s.URL)
	const n = 40
	id, key := s.Account(t, n)
	photo := e2etest.CarPhoto(t)

	statuses := make([]int, n)
	took := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			status, _, body := e2etest.Post(t, s.URL+"/v1/blur-plates", key, e2etest.File("image", photo))
			took[i] = time.Since(start)
			if status != http.StatusOK {
				t.Logf("call %d: %d after %v: %.300s", i, status, took[i].Round(time.Millisecond), body)
			}
			statuses[i] = status
		}()
	}
	for deadline := time.Now().Add(60 * time.Second); !startedTask(s); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no task started")
		}
	}
	// Some answered, some in the workers' hands: the first answer is out.
	for deadline := time.Now().Add(60 * time.Second); s.Credits(t, id) == n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no call was answered")
		}
	}
	killed := time.Now()
	kill()
	// A worker handing a result over while Redis loads (its transaction
	// refused, EXECABORT): it waits for Redis, as the workers' do now.
	delivered := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		p := jobs.Payload{RequestID: "issue-77-probe", Deadline: time.Now().Add(timeout)}
		delivered <- jobs.Deliver(ctx, rs.Client, p, &jobs.Result{ContentType: "image/jpeg", Body: []byte("probe")})
	}()
	loading := false
	for {
		err := rs.Client.Ping(context.Background()).Err()
		if err == nil {
			break
		}
		loading = loading || strings.HasPrefix(err.Error(), "LOADING")
		time.Sleep(10 * time.Millisecond)
	}
	back := time.Since(killed)
	t.Logf("Redis killed and back after %v (loading seen: %v)", back.Round(time.Millisecond), loading)
	if !loading || back < 5*time.Second {
		t.Errorf("Redis was back after %v (loading seen: %v): the test did not cover a restart whose load takes 5 s or more", back, loading)
	}
	if err := <-delivered; err != nil {
		t.Errorf("jobs.Deliver while Redis loaded its data: %v, want it to wait for Redis", err)
	} else if n, _ := rs.Client.LLen(context.Background(), jobs.ResultKey("issue-77-probe")).Result(); n != 1 {
		t.Errorf("jobs.Deliver returned, but the result list has %d entries, want 1", n)
	}
	wg.Wait()
	t.Logf("calls took %v", slices.Sorted(slices.Values(took)))
	ok := 0
	for i, st := range statuses {
		if st == http.StatusOK {
			ok++
		}
		if took[i] >= timeout {
			t.Errorf("call %d took %v: past its deadline", i, took[i])
		}
	}
	if ok != n {
		t.Errorf("statuses %v: want all %d answered 200 through a SIGKILL and a reload", statuses, n)
	}
	e2etest.WaitNoHolds(t, s)
	if got := s.Credits(t, id); got != n-int64(ok) {
		t.Errorf("balance %d after %d answers from %d: a credit was lost, held or charged twice", got, ok, n)
	}
}
