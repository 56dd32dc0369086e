package money

// Issue 55: a call is charged only for an answer that reached its client,
// and every hold is settled once whatever ends the call. A web process
// and two worker processes on one Redis; clients on raw TCP that hang up
// at random moments.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"carphoto/internal/testenv/benchphoto"
	"carphoto/internal/testenv/e2etest"
	"carphoto/internal/testenv/redistest"
)

// hangup is how a call's client behaves.
type hangup int

const (
	completes      hangup = iota // reads the whole answer
	midUpload                    // closes after part of the body
	atRandom                     // sends it all, closes at a random moment while it waits or reads
	midDownload                  // reads the headers and part of a large answer, then closes
	hangupsCounted               // (the number of kinds)
)

// callPlan is one call of the run: its account, what it sends, and when
// its client hangs up.
type callPlan struct {
	account, key string
	path         string
	body         []byte
	contentType  string
	how          hangup
	cut          int           // midUpload: bytes of the body sent; midDownload: bytes of the answer read
	after        time.Duration // atRandom: when the client closes, from the end of its upload
	header       string        // more header lines, each ending in \r\n
}

// callSeen is what the client got.
type callSeen struct {
	headers bool // the status line and headers arrived
	full    bool // the whole body, as long as Content-Length said
	status  int
	code    string // a failure's error code
	header  http.Header
	err     error
}

// smallReceiveBuffer keeps a client's socket receive buffer small, so that
// a large answer cannot land whole in the kernel's buffers before the
// client reads it: a client that closes after part of it really leaves
// the rest unsent.
func smallReceiveBuffer(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 32<<10)
	})
	if err != nil {
		return err
	}
	return serr
}

// call runs one planned call on a raw connection to addr (host:port).
func (p callPlan) call(addr string) (seen callSeen) {
	d := net.Dialer{Timeout: 5 * time.Second}
	if p.how == midDownload {
		d.Control = smallReceiveBuffer
	}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		seen.err = err
		return seen
	}
	defer conn.Close()
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n%s\r\n",
		p.path, addr, p.key, p.contentType, len(p.body), p.header)
	body := p.body
	if p.how == midUpload {
		body = body[:p.cut]
	}
	if _, err := conn.Write(append([]byte(head), body...)); err != nil {
		seen.err = err
		return seen
	}
	if p.how == midUpload {
		return seen
	}
	// The answer is read as it comes; an atRandom client closes the
	// connection at its moment, from another goroutine, whatever the
	// reading has got by then.
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			mu.Lock()
			seen.err = err
			mu.Unlock()
			return
		}
		defer res.Body.Close()
		mu.Lock()
		seen.headers, seen.status, seen.header = true, res.StatusCode, res.Header
		mu.Unlock()
		var r io.Reader = res.Body
		if p.how == midDownload && res.StatusCode == http.StatusOK {
			r = io.LimitReader(res.Body, int64(p.cut))
		}
		var w io.Writer = io.Discard
		var failure bytes.Buffer
		if res.StatusCode != http.StatusOK {
			w = &failure
		}
		n, err := io.Copy(w, r)
		mu.Lock()
		defer mu.Unlock()
		if failure.Len() > 0 {
			var e struct{ Code string }
			_ = json.Unmarshal(failure.Bytes(), &e)
			seen.code = e.Code
		}
		seen.err = err
		seen.full = err == nil && res.ContentLength >= 0 && n == res.ContentLength
	}()
	switch p.how {
	case atRandom:
		select {
		case <-done:
		case <-time.After(p.after):
			conn.Close()
			<-done
		}
	default:
		<-done
	}
	mu.Lock()
	defer mu.Unlock()
	return seen
}

// hangupRun is the randomised run of the acceptance: calls of blur-plates
// and car-shadow whose clients hang up mid-upload, while queued, while
// processed and mid-download of a large answer, and calls that complete,
// each on an account of its own so that its charge is its balance's
// change.
type hangupRun struct {
	plans      []callPlan
	seen       []callSeen
	start, end []time.Time // when each call began and ended
}

const hangupCredits = 3

func newHangupRun(t *testing.T, s *e2etest.Service, rng *rand.Rand, hangups, completing int) *hangupRun {
	t.Helper()
	photo := e2etest.CarPhoto(t)
	large, err := benchphoto.Enlarge(context.Background(), photo, 3, 80)
	if err != nil {
		t.Fatal(err)
	}
	blur, blurCT := e2etest.MultipartBody(t, e2etest.File("image", photo))
	shadow, shadowCT := e2etest.MultipartBody(t, e2etest.File("image", photo))
	big, bigCT := e2etest.MultipartBody(t, e2etest.File("image", large), e2etest.Field("format", "png"))
	r := &hangupRun{}
	add := func(how hangup) {
		_, key := s.Account(t, hangupCredits)
		p := callPlan{key: key, how: how, path: "/v1/blur-plates", body: blur, contentType: blurCT}
		if rng.IntN(2) == 1 {
			p.path, p.body, p.contentType = "/v1/car-shadow", shadow, shadowCT
		}
		switch how {
		case midUpload:
			p.cut = rng.IntN(len(p.body))
		case atRandom:
			p.after = time.Duration(rng.Int64N(int64(2500 * time.Millisecond)))
		case midDownload:
			p.path, p.body, p.contentType = "/v1/blur-plates", big, bigCT
			p.cut = rng.IntN(256 << 10)
		}
		r.plans = append(r.plans, p)
	}
	for range completing {
		add(completes)
	}
	for i := range hangups {
		// A fifth mid-upload, a twentieth mid-download, the rest at random.
		switch {
		case i%20 == 0:
			add(midDownload)
		case i%5 == 1:
			add(midUpload)
		default:
			add(atRandom)
		}
	}
	rng.Shuffle(len(r.plans), func(i, j int) { r.plans[i], r.plans[j] = r.plans[j], r.plans[i] })
	for i := range r.plans {
		r.plans[i].account = s.AccountOf(t, r.plans[i].key)
	}
	r.seen = make([]callSeen, len(r.plans))
	r.start, r.end = make([]time.Time, len(r.plans)), make([]time.Time, len(r.plans))
	return r
}

// Run makes calls first to last, conc at a time, on the web process whose
// address addr returns (it may change: a web process killed and another
// started), and calls between(i) before starting call i.
func (r *hangupRun) run(conc int, addr func() string, between func(i int)) {
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	for i := range r.plans {
		between(i)
		sem <- struct{}{}
		wg.Add(1)
		r.start[i] = time.Now()
		go func() {
			defer func() { <-sem; wg.Done() }()
			r.seen[i] = r.plans[i].call(addr())
			r.end[i] = time.Now()
		}()
	}
	wg.Wait()
}

// check asserts the acceptance on every call's balance: an answer received
// in full is charged once; a call whose client left before the answer's
// headers is not charged; at most one call is charged without its answer
// received in full (a small answer the kernel took as the client left).
// An answer received in full may go uncharged only where free(i) says so:
// a web process killed between its write and its capture.
func (r *hangupRun) check(t *testing.T, s *e2etest.Service, free func(i int) bool) {
	t.Helper()
	var kinds [hangupsCounted]int
	full, unpaidMiss := 0, 0
	for i, p := range r.plans {
		seen := r.seen[i]
		charged := hangupCredits - s.Credits(t, p.account)
		kinds[p.how]++
		switch {
		case charged < 0 || charged > 1:
			t.Errorf("call %d (%s, hang-up %d): charged %d credits", i, p.path, p.how, charged)
		case seen.full && seen.status == http.StatusOK:
			full++
			if charged != 1 && !free(i) {
				t.Errorf("call %d (%s, hang-up %d): answer received in full, charged %d, want 1", i, p.path, p.how, charged)
			}
		case seen.full:
			if charged != 0 {
				t.Errorf("call %d (%s): failed with %d, charged %d", i, p.path, seen.status, charged)
			}
		case charged == 1:
			unpaidMiss++
			t.Logf("call %d (%s, hang-up %d, headers %v, %v): charged without its answer received in full", i, p.path, p.how, seen.headers, seen.err)
		}
		// A call that completes gets its answer in full: the image, or on a
		// machine too busy to start or finish it within REQUEST_TIMEOUT,
		// 503 service_unavailable (overload), or 500 processing_failed for
		// one cut off by the web process's death (uncharged, as checked
		// above).
		if p.how == completes && !free(i) && !(seen.full && (seen.status == http.StatusOK || seen.code == "service_unavailable" || seen.code == "processing_failed")) {
			t.Errorf("call %d (%s) should complete: status %d %s, full %v, %v", i, p.path, seen.status, seen.code, seen.full, seen.err)
		}
	}
	t.Logf("%d calls (%d complete, %d mid-upload, %d at random, %d mid-download): %d answers received in full; %d charged without",
		len(r.plans), kinds[completes], kinds[midUpload], kinds[atRandom], kinds[midDownload], full, unpaidMiss)
	if unpaidMiss > 1 {
		t.Errorf("%d calls charged without their answer received in full, want at most 1", unpaidMiss)
	}
}

func hostPort(t *testing.T, url string) string {
	t.Helper()
	hp, ok := strings.CutPrefix(url, "http://")
	if !ok {
		t.Fatalf("url %q is not http://host:port", url)
	}
	return hp
}

// hangupService starts, on database db, a web process and two workers
// (one task at a time each) with the rate limit out of the way, extra
// added to their environment. It returns the web process, the service, its
// Redis and the environment, to start a web process again.
func hangupService(t *testing.T, db int, extra ...string) (*e2etest.Proc, *e2etest.Service, *redistest.Server, []string) {
	t.Helper()
	rs := redistest.New(t, db)
	env := append([]string{rs.Env(), "PORT=0", "WORKER_CONCURRENCY=1", "RATE_LIMIT_PER_MINUTE=10000"}, extra...)
	web, s := e2etest.StartWeb(t, rs, env...)
	e2etest.StartProc(t, "worker", env...)
	e2etest.StartProc(t, "worker", env...)
	e2etest.WaitReady(t, s.URL)
	return web, s, rs, env
}

func hangupSeed(t *testing.T) *rand.Rand {
	seed := uint64(time.Now().UnixNano())
	if s := strings.TrimSpace(os.Getenv("HANGUP_SEED")); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (HANGUP_SEED=%d repeats this run)", seed, seed)
	return rand.New(rand.NewPCG(seed, 55))
}

// TestHangupsChargeOnlyDelivered is issue 55's randomised run: 200 calls
// whose clients hang up at random moments and 50 that complete.
func TestHangupsChargeOnlyDelivered(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	e2etest.SideBySide(t)
	_, s, _, _ := hangupService(t, redisDB)
	r := newHangupRun(t, s, hangupSeed(t), 200, 50)
	addr := hostPort(t, s.URL)
	start := time.Now()
	r.run(12, func() string { return addr }, func(int) {})
	t.Logf("run took %v", time.Since(start))
	e2etest.WaitNoHolds(t, s)
	r.check(t, s, func(int) bool { return false })
}

// TestHangupsWithWebKilled is the run again with the web process SIGKILLed
// once during it, and another started: the holds of the calls it had in
// flight are released by the sweep, never captured; the calls after go to
// the new process, under the same rules.
func TestHangupsWithWebKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	e2etest.SideBySide(t)
	// The new web process sweeps the dead one's holds within a second
	// (HOLD_SWEEP_INTERVAL), not 30 s.
	web, s, rs, env := hangupService(t, redisDB, "HOLD_SWEEP_INTERVAL=1s")
	rng := hangupSeed(t)
	r := newHangupRun(t, s, rng, 200, 50)
	var mu sync.Mutex
	addr := hostPort(t, s.URL)
	killAt := len(r.plans)/3 + rng.IntN(len(r.plans)/3)
	var killed time.Time
	r.run(12, func() string {
		mu.Lock()
		defer mu.Unlock()
		return addr
	}, func(i int) {
		if i != killAt {
			return
		}
		if err := web.Cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = web.Cmd.Wait()
		killed = time.Now()
		_, s2 := e2etest.StartWeb(t, rs, env...)
		e2etest.WaitReady(t, s2.URL)
		ctx := context.Background()
		// Every hold open now is the dead process's (no call has gone to
		// the new one yet): never captured. The sweep returns a hold once
		// HoldTTL (REQUEST_TIMEOUT + 3 min) has passed; that time is
		// skipped here by moving their expiry to now. They are read once
		// the new process is ready, not at the kill: a hold the dead
		// process sent just before it may still be in Redis's socket
		// buffer then, and be placed after (the likely cause of one hold
		// left open, its call counted as charged, in a whole-suite run on
		// the embedded Redis, whose connections each have a goroutine:
		// Zen 3, 4 Dec). The sweep's turn the dead process took
		// lapses in half a HOLD_SWEEP_INTERVAL, so the new web process
		// sweeps within one.
		keys, err := rs.Client.Keys(ctx, "cp:holds:*").Result()
		if err != nil {
			t.Fatal(err)
		}
		open := 0
		for _, k := range keys {
			for _, m := range rs.Client.ZRange(ctx, k, 0, -1).Val() {
				rs.Client.ZAddXX(ctx, k, redis.Z{Score: float64(time.Now().UnixMilli()), Member: m})
				open++
			}
		}
		t.Logf("web process killed before call %d with %d holds open; a new one started", i, open)
		mu.Lock()
		addr = hostPort(t, s2.URL)
		mu.Unlock()
	})
	e2etest.WaitNoHolds(t, s)
	// A call in flight when the process died may have had its answer
	// written, not captured: the customer wins.
	r.check(t, s, func(i int) bool { return r.start[i].Before(killed) && r.end[i].After(killed.Add(-time.Second)) })
}

// TestFloodOneKey: a flood of car-shadow calls from one key (rate limit
// raised), most of which cannot start before their deadline behind the
// key's own line, some of them refused just as they hold their credits or
// start reading their upload. Those are answered 503 service_unavailable
// (overload), none 408 (each upload arrived whole), no hold is left held,
// and the balance is charged once per answer.
func TestFloodOneKey(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	e2etest.SideBySide(t)
	_, s, _, _ := hangupService(t, redisDB, "REQUEST_TIMEOUT=8s")
	id, key := s.Account(t, 1000)
	body, ct := e2etest.MultipartBody(t, e2etest.File("image", e2etest.CarPhoto(t)))
	const n = 200
	statuses := make([]int, n)
	codes := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := callPlan{key: key, path: "/v1/car-shadow", body: body, contentType: ct, how: completes}
			seen := p.call(hostPort(t, s.URL))
			statuses[i], codes[i] = seen.status, seen.code
			if seen.err != nil {
				codes[i] = seen.err.Error()
			}
		}()
	}
	wg.Wait()
	count := map[int]int{}
	for i, st := range statuses {
		count[st]++
		// Every upload was sent whole at once: one that cannot start in
		// time behind the key's own line is answered 503 at once or
		// withdrawn before its deadline, never 408 (its upload had
		// arrived); a task that started and overran its deadline on a
		// loaded machine is overload too, 503 at its deadline.
		overloaded := st == http.StatusServiceUnavailable && codes[i] == "service_unavailable"
		if st != http.StatusOK && !overloaded {
			t.Errorf("call %d: status %d %s, want 200 or 503 service_unavailable", i, st, codes[i])
		}
	}
	t.Logf("%d calls of one key: %v", n, count)
	e2etest.WaitNoHolds(t, s)
	if got, want := s.Credits(t, id), int64(1000-count[http.StatusOK]); got != want {
		t.Errorf("balance %d, want %d (1000 less one per answer)", got, want)
	}
}

// An answer whose client hung up during its download is not charged, and
// is kept for the call's Idempotency-Key unpaid: the retry that gets it is
// charged for it, once, and a further retry is not.
func TestIdempotentRetryPaysUndelivered(t *testing.T) {
	e2etest.SideBySide(t)
	s := e2etest.StartService(t, nil)
	id, key := s.Account(t, 5)
	large, err := benchphoto.Enlarge(context.Background(), e2etest.CarPhoto(t), 3, 80)
	if err != nil {
		t.Fatal(err)
	}
	body, ct := e2etest.MultipartBody(t, e2etest.File("image", large), e2etest.Field("format", "png"))
	p := callPlan{key: key, path: "/v1/blur-plates", body: body, contentType: ct, how: midDownload, cut: 1000,
		header: "Idempotency-Key: issue-55\r\n"}
	addr := hostPort(t, s.URL)
	if seen := p.call(addr); seen.status != http.StatusOK || seen.full {
		t.Fatalf("the first call: status %d, full %v, %v; want 200 cut short by its client", seen.status, seen.full, seen.err)
	}
	// The server's write fails once the client's socket is gone; the hold
	// is released then.
	e2etest.WaitNoHolds(t, s)
	if got := s.Credits(t, id); got != 5 {
		t.Fatalf("balance %d after an answer cut short, want 5 (not charged)", got)
	}
	p.how = completes
	for try, want := range []int64{4, 4} {
		seen := p.call(addr)
		if seen.status != http.StatusOK || !seen.full || seen.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry %d: status %d, full %v, replayed %q, %v; want the kept answer", try, seen.status, seen.full, seen.header.Get("Idempotent-Replayed"), seen.err)
		}
		// The client has the last byte before the server has its
		// acknowledgement and marks the answer paid: a retry sent at once
		// may still find it unpaid, and holds a credit until it learns that
		// another retry paid for it.
		e2etest.WaitNoHolds(t, s)
		if got := s.Credits(t, id); got != want {
			t.Errorf("retry %d: balance %d, want %d (charged once, on the first retry)", try, got, want)
		}
	}
}

// TestLargeAnswersChargedOnAcknowledgement: a 12 MP car-shadow answer (a
// PNG of megabytes) fits in the kernel's send and receive buffers, so a
// write that returned does not mean the client has it. Eight clients
// read the status line and headers, wait a second and hang up; two read
// the answer in full. The two are charged; at most one of the eight (the
// customer wins what the server cannot know, never more), and /metrics
// counts the answers not acknowledged.
func TestLargeAnswersChargedOnAcknowledgement(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	e2etest.SideBySide(t)
	_, s, _, _ := hangupService(t, redisDB, "REQUEST_TIMEOUT=60s", "METRICS_TOKEN="+e2etest.MetricsToken)
	// The sample photo the repository ships: a real car, whose 12 MP
	// car-shadow is a PNG of megabytes.
	sample, err := os.ReadFile(e2etest.RepoPath("docs", "samples", "car.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	large, err := benchphoto.Enlarge(context.Background(), sample, 12, 0)
	if err != nil {
		t.Fatal(err)
	}
	body, ct := e2etest.MultipartBody(t, e2etest.File("image", large), e2etest.Field("format", "png"))
	addr := hostPort(t, s.URL)
	const headerOnly, whole = 8, 2
	type result struct {
		account string
		status  int
		length  int64 // Content-Length
		read    int64 // bytes of the body read
		whole   bool
	}
	results := make([]result, headerOnly+whole)
	var wg sync.WaitGroup
	for i := range results {
		results[i].whole = i >= headerOnly
		id, key := s.Account(t, hangupCredits)
		results[i].account = id
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := &results[i]
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			head := fmt.Sprintf("POST /v1/car-shadow HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n",
				addr, key, ct, len(body))
			if _, err := conn.Write(append([]byte(head), body...)); err != nil {
				t.Error(err)
				return
			}
			res, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			r.status, r.length = res.StatusCode, res.ContentLength
			if r.whole {
				r.read, _ = io.Copy(io.Discard, res.Body)
				return
			}
			time.Sleep(time.Second)
		}()
	}
	wg.Wait()
	e2etest.WaitNoHolds(t, s)
	chargedHeaderOnly := 0
	for i, r := range results {
		if r.status != http.StatusOK {
			t.Fatalf("call %d: status %d, want 200", i, r.status)
		}
		if r.length < 2<<20 {
			t.Fatalf("call %d: a %d-byte answer; the test needs one of megabytes", i, r.length)
		}
		charged := hangupCredits - s.Credits(t, r.account)
		switch {
		case r.whole && (r.read != r.length || charged != 1):
			t.Errorf("call %d read %d of %d bytes: charged %d, want 1", i, r.read, r.length, charged)
		case !r.whole:
			chargedHeaderOnly += int(charged)
		}
	}
	t.Logf("%d-byte answers: %d of %d clients that hung up after the headers charged", results[0].length, chargedHeaderOnly, headerOnly)
	if chargedHeaderOnly > 1 {
		t.Errorf("%d of %d clients that read only the headers were charged, want at most 1", chargedHeaderOnly, headerOnly)
	}
	f := e2etest.Scrape(t, http.DefaultClient, s.URL+"/metrics")
	unacked := e2etest.Value(f, "carphoto_answer_delivery_total", "outcome", "closed") + max(0, e2etest.Value(f, "carphoto_answer_delivery_total", "outcome", "deadline"))
	if want := float64(headerOnly - chargedHeaderOnly); unacked < want {
		t.Errorf("carphoto_answer_delivery_total counts %v answers closed or late, want %v", unacked, want)
	}
	if got := e2etest.Value(f, "carphoto_answer_delivery_total", "outcome", "acknowledged"); got != float64(whole+chargedHeaderOnly) {
		t.Errorf("carphoto_answer_delivery_total{outcome=acknowledged} = %v, want %d", got, whole+chargedHeaderOnly)
	}
}
