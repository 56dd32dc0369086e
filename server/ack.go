package server

import (
	"context"
	"errors"
	"net"
	"time"
)

// What "delivered" means: an answer whose every byte the client's TCP stack
// acknowledged. A write that returned only means the kernel took the
// bytes; a multi-megabyte answer fits in the send and receive buffers
// while the client has read none of it, or hung up. So the server notes
// where the answer begins in the connection's output before its first
// byte (a keep-alive connection carries earlier answers) and where it ends
// after its last (answerWire), then waits, up to the answer's write
// deadline, for the peer to have acknowledged that far (TCP_INFO's
// tcpi_bytes_acked on Linux, which a reset leaves in place). Acknowledged:
// charged. Not by the deadline: the connection is reset, its unsent queue
// dropped, so what was not acknowledged is never sent, and the answer is
// not charged. net/http's own write timeout and a normal close are no cut:
// the kernel goes on sending what is queued. Behind a proxy, the proxy is
// the client.

// ackOutcome is how the wait for the client's acknowledgement ended.
type ackOutcome string

const (
	ackAcknowledged ackOutcome = "acknowledged" // every byte acknowledged: delivered
	ackClosed       ackOutcome = "closed"       // the client closed or reset the connection first
	ackAborted      ackOutcome = "aborted"      // not acknowledged by the write deadline: the connection reset
	ackUnknown      ackOutcome = "unknown"      // the transport cannot tell (another OS, no socket)
)

type connKey struct{}

// ConnContext is for http.Server.ConnContext: it keeps each connection in
// the context of its requests, so that an answer's delivery can be asked
// of the connection's socket, and the connection reset.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// connOf returns the connection ConnContext kept in ctx, nil if none.
func connOf(ctx context.Context) net.Conn {
	c, _ := ctx.Value(connKey{}).(net.Conn)
	return c
}

// minReadRate is the slowest a client may read an answer and still get
// all of it: an answer's write deadline leaves it answerGrace plus its
// length at this rate, up to AnswerWindowMost.
const (
	minReadRate = 64 << 10 // bytes a second
	answerGrace = 5 * time.Second
)

// AnswerWindowMost is the longest an answer's write may take past the
// call's deadline (at minReadRate, the answers of up to 7.5 MB); holds
// and idempotency claims must outlast REQUEST_TIMEOUT by more than this.
const AnswerWindowMost = 2 * time.Minute

// answerDeadline is when writing an answer of n bytes, and waiting for its
// acknowledgement, ends: the call's deadline, or later when the answer
// needs longer to be read at minReadRate from now.
func answerDeadline(callDeadline time.Time, n int) time.Time {
	window := answerGrace + time.Duration(n)*time.Second/minReadRate
	return later(callDeadline, time.Now().Add(min(window, AnswerWindowMost)))
}

// ackPollFirst and ackPollMost pace the wait: on a nearby client the
// acknowledgement is there within a millisecond or two; a slow one is
// asked again at most every ackPollMost.
const (
	ackPollFirst = 500 * time.Microsecond
	ackPollMost  = 20 * time.Millisecond
)

// sendPos is where a connection's output stands, in bytes from its start
// (the unit of tcpi_bytes_acked): how far the peer acknowledged, how far
// the server has written, and whether the peer can still acknowledge.
type sendPos struct {
	acked, written uint64
	open           bool
}

// errCannotTell is position's answer where the kernel cannot be asked.
var errCannotTell = errors.New("the socket cannot say what its peer acknowledged")

// answerWire follows one answer through its connection's output.
type answerWire struct {
	conn       net.Conn     // the connection as accepted (TLS or not)
	tcp        *net.TCPConn // its socket
	start, end uint64       // the answer's first and after-last bytes (written positions)
}

// beginAnswer notes where an answer about to be written on conn begins.
// It fails where the platform or the transport cannot tell.
func beginAnswer(conn net.Conn) (*answerWire, error) {
	tcp := socketOf(conn)
	if tcp == nil {
		return nil, errCannotTell
	}
	p, err := position(tcp)
	if err != nil {
		return nil, err
	}
	return &answerWire{conn: conn, tcp: tcp, start: p.written}, nil
}

// written notes where the answer, whose body is n bytes, ends: called
// after its last byte was flushed. It fails when the kernel says the
// answer took fewer bytes than its body, which it cannot have.
func (w *answerWire) written(n int) error {
	p, err := position(w.tcp)
	if err != nil {
		return err
	}
	if p.written < w.start+uint64(n) {
		return errCannotTell
	}
	w.end = p.written
	return nil
}

// await waits until the peer acknowledged the answer's last byte, closed
// the connection without doing so, or until passed. What the peer
// acknowledged is read on every poll and once more once the connection
// closed or the time passed: an answer read in full and then reset is
// delivered.
func (w *answerWire) await(until time.Time) ackOutcome {
	poll := ackPollFirst
	for {
		p, err := position(w.tcp)
		switch {
		case err != nil:
			return ackUnknown
		case p.acked >= w.end:
			return ackAcknowledged
		case !p.open || !time.Now().Add(poll).Before(until):
			if p, err := position(w.tcp); err == nil && p.acked >= w.end {
				return ackAcknowledged
			}
			if !p.open {
				return ackClosed
			}
			return ackAborted
		}
		time.Sleep(poll)
		poll = min(2*poll, ackPollMost)
	}
}

// reset ends the connection with a reset: what the kernel still queued for
// the peer is dropped, never sent. A plain close would send it all.
func (w *answerWire) reset() { resetConn(w.conn) }

// resetConn resets conn's socket (SO_LINGER 0, then close); without one it
// closes conn.
func resetConn(conn net.Conn) {
	if tcp := socketOf(conn); tcp != nil {
		_ = tcp.SetLinger(0)
		_ = tcp.Close()
		return
	}
	if conn != nil {
		_ = conn.Close()
	}
}

// socketOf returns the TCP connection under conn (a TLS connection's
// too), nil when there is none.
func socketOf(conn net.Conn) *net.TCPConn {
	for conn != nil {
		switch c := conn.(type) {
		case *net.TCPConn:
			return c
		case interface{ NetConn() net.Conn }:
			conn = c.NetConn()
		default:
			return nil
		}
	}
	return nil
}
