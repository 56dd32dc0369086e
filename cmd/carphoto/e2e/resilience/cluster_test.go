package resilience

// The service on a real Redis Cluster, through the failover of a master.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"carphoto/internal/testenv/e2etest"
	"carphoto/internal/testenv/redistest"
)

// TestClusterFailover runs concurrent calls on one account through
// `carphoto all` on a 3-master, 3-replica cluster and SIGKILLs, mid-traffic,
// the master that holds both the account's keys and the photo queue. Its
// replica takes over (node timeout 1.5 s); every call must still answer
// 200 within its deadline, and the balance must be exact: the credits
// charged are the calls that succeeded, no hold left open. Money writes
// wait for a replica (REDIS_WAIT_REPLICAS defaults to 1 on a cluster), so
// a hold or capture acknowledged before the kill is on the new master.
func TestClusterFailover(t *testing.T) {
	redistest.SkipUnlessCluster(t)
	t.Parallel() // on a cluster of its own: beside the package's other tests
	c := redistest.NewCluster(t)
	ctx := context.Background()
	rs := &redistest.Server{URL: c.URL, Client: c.Client, Cluster: c}
	const timeout = 20 * time.Second
	s := e2etest.StartServiceOn(t, rs, map[string]string{
		"REQUEST_TIMEOUT": timeout.String(), "WORKER_CONCURRENCY": "2",
		"MAX_IN_FLIGHT_PER_KEY": "16", "RATE_LIMIT_PER_MINUTE": "100000",
	})

	// An account on the same master as the photo queue: the kill takes
	// both money and tasks with it.
	queueMaster, err := c.MasterOf(ctx, "asynq:{photos}:pending")
	if err != nil {
		t.Fatal(err)
	}
	const credits = 1000
	var id, key string
	for range 100 {
		id, key = s.Account(t, credits)
		if m, _ := c.MasterOf(ctx, "cp:acct:{"+id+"}"); m == queueMaster {
			break
		}
		id = ""
	}
	if id == "" {
		t.Fatal("no account landed on the queue's master in 100 tries")
	}

	photo := e2etest.PlainJPEG(t)
	type call struct {
		status  int
		latency time.Duration
		err     error
		at      time.Time
	}
	var (
		mu    sync.Mutex
		calls []call
	)
	stop := make(chan struct{})
	client := &http.Client{Timeout: timeout + 10*time.Second}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				status, err := postPhoto(client, s.URL+"/v1/blur-plates", key, photo)
				mu.Lock()
				calls = append(calls, call{status, time.Since(start), err, start})
				mu.Unlock()
			}
		})
	}
	time.Sleep(2 * time.Second)
	killed := time.Now()
	if err := c.Kill(queueMaster); err != nil {
		t.Fatal(err)
	}
	took, err := c.WaitPromoted(ctx, queueMaster)
	if err != nil {
		t.Fatalf("the replica of %s was never promoted: %v", queueMaster, err)
	}
	time.Sleep(4 * time.Second)
	close(stop)
	wg.Wait()

	ok, during := 0, 0
	var worst time.Duration
	for _, cl := range calls {
		if cl.err != nil || cl.status != http.StatusOK {
			t.Errorf("call at %v after the kill: status %d, %v; want 200", cl.at.Sub(killed).Round(time.Millisecond), cl.status, cl.err)
			continue
		}
		ok++
		worst = max(worst, cl.latency)
		if cl.at.Before(killed.Add(took)) && cl.at.Add(cl.latency).After(killed) {
			during++
		}
	}
	if worst >= timeout {
		t.Errorf("slowest call %v, want within the %v deadline", worst, timeout)
	}
	// The test's own client learns the new master as the service's did:
	// billing tries again while Redis fails over.
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	a, err := s.Billing.Account(rctx, id)
	if err != nil {
		t.Fatalf("read the balance: %v", err)
	}
	balance := a.Credits
	// A hold whose call ended is captured or released, never left to
	// expire.
	e2etest.WaitNoHolds(t, s)
	if balance != credits-int64(ok) {
		t.Errorf("balance %d after %d calls answered 200 from %d: %d credits off", balance, ok, credits, credits-int64(ok)-balance)
	}
	lat := make([]time.Duration, 0, len(calls))
	for _, cl := range calls {
		lat = append(lat, cl.latency)
		if testing.Verbose() {
			t.Logf("call at %8v: %d in %v", cl.at.Sub(killed).Round(time.Millisecond), cl.status, cl.latency.Round(time.Millisecond))
		}
	}
	slices.Sort(lat)
	t.Logf("failover of %s: replica promoted %v after the kill; %d calls, %d answered 200, %d in flight across the failover; latency p50 %v, max %v; balance %d = %d - %d",
		queueMaster, took.Round(time.Millisecond), len(calls), ok, during, lat[len(lat)/2].Round(time.Millisecond), worst.Round(time.Millisecond),
		balance, credits, ok)
	if t.Failed() {
		t.Logf("the service's log:\n%s", e2etest.Tail(s.Log.String(), 6000))
	}
	if during == 0 {
		t.Errorf("no call was in flight while the master was down: the test proved nothing")
	}
}

// postPhoto sends one photo call and returns its status, reading the
// whole answer; it never fails the test itself (it runs in goroutines).
func postPhoto(client *http.Client, url, key string, photo []byte) (int, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("image", "car.jpg")
	w.Write(photo)
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, url, &body)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, err
	}
	if res.StatusCode != http.StatusOK {
		return res.StatusCode, fmt.Errorf("%s", b)
	}
	return res.StatusCode, nil
}
