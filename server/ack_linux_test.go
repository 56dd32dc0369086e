package server

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// pair returns the two ends of a loopback TCP connection: the server's
// and a client's whose receive buffer is rcvbuf bytes (0: the kernel's).
func pair(t *testing.T, rcvbuf int) (server, client *net.TCPConn) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	d := net.Dialer{}
	if rcvbuf > 0 {
		d.Control = func(_, _ string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcvbuf) })
		}
	}
	c, err := d.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return s.(*net.TCPConn), c.(*net.TCPConn)
}

// An answer read in full is acknowledged, also once its client reset the
// connection; an earlier answer on the connection does not count for it.
func TestAwaitReadInFullThenReset(t *testing.T) {
	srv, cli := pair(t, 0)
	earlier := make([]byte, 1000)
	if _, err := srv.Write(earlier); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(cli, earlier); err != nil {
		t.Fatal(err)
	}
	w, err := beginAnswer(srv)
	if err != nil {
		t.Fatal(err)
	}
	answer := make([]byte, 300<<10)
	go func() {
		_, _ = srv.Write(answer)
	}()
	if _, err := io.ReadFull(cli, make([]byte, len(answer))); err != nil {
		t.Fatal(err)
	}
	_ = cli.SetLinger(0)
	cli.Close()
	// The write has returned once the client read it all.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if p, err := position(srv); err == nil && p.written >= w.start+uint64(len(answer)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the answer's write did not finish")
		}
	}
	if err := w.written(len(answer)); err != nil {
		t.Fatal(err)
	}
	if got := w.end - w.start; got != uint64(len(answer)) {
		t.Errorf("the answer spans %d bytes of the connection, want %d", got, len(answer))
	}
	if got := w.await(time.Now().Add(5 * time.Second)); got != ackAcknowledged {
		t.Errorf("an answer read in full, then reset: %s, want %s", got, ackAcknowledged)
	}
}

// A client that reads nothing (a small receive buffer: its kernel cannot
// take the answer in) leaves it unacknowledged at the deadline: aborted,
// and the reset drops the rest, so the client never gets all of it.
func TestAwaitStalledClientIsCutOff(t *testing.T) {
	srv, cli := pair(t, 4<<10)
	w, err := beginAnswer(srv)
	if err != nil {
		t.Fatal(err)
	}
	answer := make([]byte, 200<<10) // fits in the server's send buffer
	if _, err := srv.Write(answer); err != nil {
		t.Fatal(err)
	}
	if err := w.written(len(answer)); err != nil {
		t.Fatal(err)
	}
	if got := w.await(time.Now().Add(300 * time.Millisecond)); got != ackAborted {
		t.Fatalf("a client that reads nothing: %s, want %s", got, ackAborted)
	}
	w.reset()
	n, err := io.Copy(io.Discard, cli)
	if n >= int64(len(answer)) || !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("after the reset the client read %d of %d bytes (%v), want fewer and a reset", n, len(answer), err)
	}
}

// A client that closes without reading is seen closed, not acknowledged.
func TestAwaitClosedClient(t *testing.T) {
	srv, cli := pair(t, 4<<10)
	w, err := beginAnswer(srv)
	if err != nil {
		t.Fatal(err)
	}
	answer := make([]byte, 200<<10)
	if _, err := srv.Write(answer); err != nil {
		t.Fatal(err)
	}
	if err := w.written(len(answer)); err != nil {
		t.Fatal(err)
	}
	cli.Close() // unread data: the kernel resets
	if got := w.await(time.Now().Add(10 * time.Second)); got != ackClosed {
		t.Errorf("a client that closed without reading: %s, want %s", got, ackClosed)
	}
}
