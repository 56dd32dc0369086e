//go:build linux

package money

// Issue 77: nothing free for a client that cheats. An answer is charged
// once its client's TCP stack acknowledged all of it, or cut off: the
// connection reset, so that what was not acknowledged is never sent.
// Clients on raw sockets that misbehave on purpose, each on an account
// of its own, so that its charge is its balance's change.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"carphoto/internal/testenv/benchphoto"
	"carphoto/internal/testenv/e2etest"
)

// cheat is how a client reads its answer.
type cheat int

const (
	readLate      cheat = iota // reads the headers, pauses until `resume`, reads on
	readThenReset              // reads the whole answer, then resets (SO_LINGER 0)
	headersClose               // reads the headers, then closes
	halfClose                  // reads half the answer, then closes
	headersReset               // reads the headers, then resets
	stalled                    // reads the headers, then nothing until the server resets, then what is left
	cheats                     // (the number of kinds)
)

var cheatNames = [cheats]string{"read late", "read then reset", "headers then close", "half then close", "headers then reset", "stalled"}

// cheatCall is one call of a cheating client.
type cheatCall struct {
	account, key string
	path         string
	body         []byte
	contentType  string
	header       string // more header lines, each ending in \r\n
	how          cheat
	rcvbuf       int       // the client's SO_RCVBUF, 0 for the kernel's default
	resume       time.Time // readLate: when it reads on
}

// cheatSeen is what the client got.
type cheatSeen struct {
	status   int
	length   int64 // Content-Length
	read     int64 // bytes of the body read
	full     bool  // the whole body, as long as Content-Length said
	replayed bool
	err      error
}

// receiveBuffer sets a client socket's receive buffer to n bytes before it
// connects, so that its kernel cannot acknowledge much ahead of its reading.
func receiveBuffer(n int) func(string, string, syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
		}); err != nil {
			return err
		}
		return serr
	}
}

// resetBy waits until conn was reset by its peer (its TCP state is CLOSE),
// at most until deadline, and reports whether it was.
func resetBy(conn *net.TCPConn, deadline time.Time) bool {
	rc, err := conn.SyscallConn()
	if err != nil {
		return false
	}
	for time.Now().Before(deadline) {
		closed := false
		_ = rc.Control(func(fd uintptr) {
			info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
			closed = err == nil && info.State == 7 // TCP_CLOSE
		})
		if closed {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// call runs the call on a raw connection to addr (host:port).
func (p cheatCall) call(addr string) (seen cheatSeen) {
	d := net.Dialer{Timeout: 5 * time.Second}
	if p.rcvbuf > 0 {
		d.Control = receiveBuffer(p.rcvbuf)
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		seen.err = err
		return seen
	}
	conn := c.(*net.TCPConn)
	defer conn.Close()
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n%s\r\n",
		p.path, addr, p.key, p.contentType, len(p.body), p.header)
	if _, err := conn.Write(append([]byte(head), p.body...)); err != nil {
		seen.err = err
		return seen
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		seen.err = err
		return seen
	}
	seen.status, seen.length, seen.replayed = res.StatusCode, res.ContentLength, res.Header.Get("Idempotent-Replayed") == "true"
	if res.StatusCode != http.StatusOK {
		seen.read, seen.err = io.Copy(io.Discard, res.Body)
		return seen
	}
	reset := func() {
		_ = conn.SetLinger(0)
		_ = conn.Close()
	}
	switch p.how {
	case readLate:
		time.Sleep(time.Until(p.resume))
		seen.read, seen.err = io.Copy(io.Discard, res.Body)
	case readThenReset:
		seen.read, seen.err = io.Copy(io.Discard, res.Body)
		reset()
	case headersClose:
		conn.Close()
	case halfClose:
		seen.read, seen.err = io.CopyN(io.Discard, res.Body, res.ContentLength/2)
		conn.Close()
	case headersReset:
		reset()
	case stalled:
		// Whatever the server does, this client reads no more until its
		// connection is reset, then reads what its kernel kept.
		wasReset := resetBy(conn, time.Now().Add(4*time.Minute))
		seen.read, seen.err = io.Copy(io.Discard, res.Body)
		if !wasReset {
			seen.full = seen.err == nil && seen.read == seen.length
			seen.err = fmt.Errorf("the server never reset the connection of a client that stopped reading (then read: %v)", seen.err)
			return seen
		}
	}
	seen.full = seen.err == nil && seen.read == seen.length
	return seen
}

// cheatsService is hangupService with a short deadline and /metrics.
func cheatsService(t *testing.T, db int, timeout time.Duration) *e2etest.Service {
	t.Helper()
	_, s, _, _ := hangupService(t, db, "REQUEST_TIMEOUT="+timeout.String(), "METRICS_TOKEN="+e2etest.MetricsToken)
	return s
}

// TestCheatsPayForWhatTheyRead: clients that read their answer after the
// deadline, read it in full and reset, or leave as today's hang-up tests
// do. No account is charged fewer credits than the answers it received in
// full; the leavers are never charged, and none receives a full answer.
func TestCheatsPayForWhatTheyRead(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	e2etest.SideBySide(t)
	const timeout = 20 * time.Second
	s := cheatsService(t, redisDB, timeout)
	addr := hostPort(t, s.URL)
	photo := e2etest.CarPhoto(t)
	enlarged, err := benchphoto.Enlarge(context.Background(), photo, 1, 80)
	if err != nil {
		t.Fatal(err)
	}
	small, smallCT := e2etest.MultipartBody(t, e2etest.File("image", photo))
	big, bigCT := e2etest.MultipartBody(t, e2etest.File("image", enlarged), e2etest.Field("format", "png"))
	type run struct {
		p    cheatCall
		seen cheatSeen
	}
	var runs []*run
	add := func(how cheat, large bool, rcvbuf int, resumeAfter time.Duration) {
		id, key := s.Account(t, hangupCredits)
		p := cheatCall{account: id, key: key, path: "/v1/blur-plates", body: small, contentType: smallCT, how: how, rcvbuf: rcvbuf}
		if large {
			p.body, p.contentType = big, bigCT
		}
		p.resume = time.Now().Add(resumeAfter) // from about when the call starts
		runs = append(runs, &run{p: p})
	}
	for i := range 4 {
		// Past the call's deadline by 3 s; two of them with a receive
		// buffer of 4 KB, so that their kernel cannot take the answer in.
		add(readLate, i%2 == 1, []int{4 << 10, 0}[i/2], timeout+3*time.Second)
	}
	for i := range 4 {
		add(readThenReset, i%2 == 1, 0, 0)
	}
	for _, how := range []cheat{headersClose, halfClose, headersReset, stalled} {
		for range 2 {
			add(how, true, 32<<10, 0)
		}
	}
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.seen = r.p.call(addr)
		}()
	}
	wg.Wait()
	e2etest.WaitNoHolds(t, s)
	var free, fullCount, cut [cheats]int
	for i, r := range runs {
		charged := hangupCredits - s.Credits(t, r.p.account)
		seen, name := r.seen, cheatNames[r.p.how]
		t.Logf("call %d (%s, rcvbuf %d): status %d, read %d of %d, full %v, charged %d (%v)", i, name, r.p.rcvbuf, seen.status, seen.read, seen.length, seen.full, charged, seen.err)
		switch {
		case seen.status != http.StatusOK:
			if charged != 0 {
				t.Errorf("call %d (%s): failed with %d, charged %d", i, name, seen.status, charged)
			}
			continue
		case charged < 0 || charged > 1:
			t.Errorf("call %d (%s): charged %d credits for one answer", i, name, charged)
		case seen.full && charged == 0:
			free[r.p.how]++
			t.Errorf("call %d (%s): received its answer in full (%d bytes), not charged", i, name, seen.length)
		}
		if seen.full {
			fullCount[r.p.how]++
		} else {
			cut[r.p.how]++
		}
		if r.p.how >= headersClose {
			if charged != 0 || seen.full {
				t.Errorf("call %d (%s): charged %d, answer received in full %v; a client that left is charged nothing and has no full answer", i, name, charged, seen.full)
			}
		}
		if r.p.how == readThenReset && !seen.full {
			t.Errorf("call %d (%s): read %d of %d bytes: it reads the whole answer", i, name, seen.read, seen.length)
		}
	}
	for how := range cheats {
		t.Logf("%s: %d answers in full (%d free), %d cut short", cheatNames[how], fullCount[how], free[how], cut[how])
	}
	f := e2etest.Scrape(t, http.DefaultClient, s.URL+"/metrics")
	if got := e2etest.Value(f, "carphoto_answer_delivery_total", "outcome", "aborted"); got < float64(cut[stalled]) {
		t.Errorf("carphoto_answer_delivery_total{outcome=aborted} = %v, want at least the %d stalled clients", got, cut[stalled])
	}
}

// TestReplayedAnswerPaidOnce: an answer whose first client reset after the
// headers is kept unpaid; each retry reads it in full and resets at once,
// which ends the request's context on the server just as it marks the
// answer paid. The first retry that gets it is charged, once; the next
// ones are not charged again.
func TestReplayedAnswerPaidOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	e2etest.SideBySide(t)
	s := cheatsService(t, redisDB, 30*time.Second)
	addr := hostPort(t, s.URL)
	large, err := benchphoto.Enlarge(context.Background(), e2etest.CarPhoto(t), 1, 80)
	if err != nil {
		t.Fatal(err)
	}
	body, ct := e2etest.MultipartBody(t, e2etest.File("image", large), e2etest.Field("format", "png"))
	const accounts, retries = 6, 3
	fullRetries, freeRetries := 0, 0
	// One account after the other, so that no hold is open once an
	// account's call is settled.
	for i := range accounts {
		id, key := s.Account(t, hangupCredits)
		func() {
			p := cheatCall{key: key, path: "/v1/blur-plates", body: body, contentType: ct, how: headersReset, rcvbuf: 32 << 10,
				header: fmt.Sprintf("Idempotency-Key: issue-77-%d\r\n", i)}
			first := p.call(addr)
			if first.status != http.StatusOK || first.full {
				t.Errorf("account %d, first call: status %d, full %v, %v; want 200 cut short by its client", i, first.status, first.full, first.err)
				return
			}
			// Its hold released: the balance back whole (an event in Redis).
			for deadline := time.Now().Add(10 * time.Second); s.Credits(t, id) != hangupCredits; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Errorf("account %d: balance %d after an answer cut short, want %d", i, s.Credits(t, id), hangupCredits)
					return
				}
			}
			p.how, p.rcvbuf = readThenReset, 0
			got := 0
			for try := range retries {
				seen := p.call(addr)
				if seen.status != http.StatusOK || !seen.replayed {
					t.Errorf("account %d, retry %d: status %d, replayed %v, %v; want the kept answer", i, try, seen.status, seen.replayed, seen.err)
					continue
				}
				if seen.full {
					got++
				}
				// The charge is made as the answer is acknowledged: settled
				// once no hold is open for the account.
				waitSettled(t, s)
				charged := hangupCredits - s.Credits(t, id)
				if seen.full {
					fullRetries++
					if charged == 0 {
						freeRetries++
					}
				}
				if want := int64(min(got, 1)); charged != want {
					t.Errorf("account %d, retry %d (%d answers in full so far): charged %d, want %d", i, try, got, charged, want)
				}
			}
		}()
	}
	t.Logf("%d retries of %d accounts received the kept answer in full; %d of them with the account not charged for it", fullRetries, accounts, freeRetries)
	e2etest.WaitNoHolds(t, s)
}

// waitSettled waits, at most 10 s, until no hold is open (the calls
// are made one at a time): a retry's capture may land just after its
// client read the last byte.
func waitSettled(t *testing.T, s *e2etest.Service) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if n, err := s.Billing.OpenHolds(context.Background()); err == nil && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("holds still open 10 s after a retry")
			return
		}
	}
}

// TestSlowHonestReader: a client that reads a 6 MB answer at 64 KB/s, as
// slowly as the service promises to wait for, gets all of it and is
// charged once.
func TestSlowHonestReader(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test (a minute and a half of reading)")
	}
	e2etest.SideBySide(t)
	_, s, _, _ := hangupService(t, slowReaderDB, "REQUEST_TIMEOUT=60s", "METRICS_TOKEN="+e2etest.MetricsToken)
	// A 2 MP photo with grain: its blur-plates answer in PNG is a file of
	// about 6 MB.
	large, err := benchphoto.Enlarge(context.Background(), e2etest.CarPhoto(t), 2, 80)
	if err != nil {
		t.Fatal(err)
	}
	body, ct := e2etest.MultipartBody(t, e2etest.File("image", large), e2etest.Field("format", "png"))
	id, key := s.Account(t, hangupCredits)
	addr := hostPort(t, s.URL)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := fmt.Sprintf("POST /v1/blur-plates HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n",
		addr, key, ct, len(body))
	if _, err := conn.Write(append([]byte(head), body...)); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.ContentLength < 5<<20 {
		t.Fatalf("status %d, %d bytes: the test needs a 200 of 5 MB or more", res.StatusCode, res.ContentLength)
	}
	const rate = 64 << 10
	start := time.Now()
	read, err := readPaced(res.Body, rate)
	t.Logf("%d bytes read at %d KB/s in %v", read, rate>>10, time.Since(start).Round(time.Millisecond))
	if err != nil || read != res.ContentLength {
		t.Fatalf("read %d of %d bytes: %v; a client reading at 64 KB/s gets its whole answer", read, res.ContentLength, err)
	}
	e2etest.WaitNoHolds(t, s)
	if charged := hangupCredits - s.Credits(t, id); charged != 1 {
		t.Errorf("charged %d for an answer read in full, want 1", charged)
	}
}

// slowReaderDB is TestSlowHonestReader's database, beside the package's
// other tests (redisDB).
const slowReaderDB = 4

// readPaced reads r to its end at no more than rate bytes a second.
func readPaced(r io.Reader, rate int) (int64, error) {
	buf := make([]byte, 8<<10)
	start := time.Now()
	var n int64
	for {
		m, err := r.Read(buf)
		n += int64(m)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		time.Sleep(time.Until(start.Add(time.Duration(n) * time.Second / time.Duration(rate))))
	}
}
