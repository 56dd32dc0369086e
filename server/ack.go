package server

import (
	"context"
	"net"
	"time"
)

// What "delivered" means: an answer whose every byte the client's TCP stack
// acknowledged. A write that returned only means the kernel took the
// bytes; a multi-megabyte answer fits in the send and receive buffers
// while the client has read none of it, or hung up. So after the last
// write the server waits, at most until the call's deadline, for the
// connection to have no unacknowledged output (awaitAcked), and charges
// only then. Behind a proxy, the proxy is the client.

// ackOutcome is how the wait for the client's acknowledgement ended.
type ackOutcome string

const (
	ackAcknowledged ackOutcome = "acknowledged" // every byte acknowledged: delivered
	ackClosed       ackOutcome = "closed"       // the connection closed or failed first
	ackDeadline     ackOutcome = "deadline"     // still unacknowledged at the deadline
	ackUnknown      ackOutcome = "unknown"      // the transport cannot tell (another OS, no socket)
)

type connKey struct{}

// ConnContext is for http.Server.ConnContext: it keeps each connection in
// the context of its requests, so that an answer's delivery can be asked
// of the connection's socket.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// connOf returns the connection ConnContext kept in ctx, nil if none.
func connOf(ctx context.Context) net.Conn {
	c, _ := ctx.Value(connKey{}).(net.Conn)
	return c
}

// ackPollFirst and ackPollMost pace the wait: on a nearby client the
// acknowledgement is there within a millisecond or two; a slow one is
// asked again at most every ackPollMost.
const (
	ackPollFirst = 500 * time.Microsecond
	ackPollMost  = 20 * time.Millisecond
)

// awaitAcked waits until the client acknowledged every byte written on
// conn, the connection closed, or until passed. Where it cannot be known
// it says so at once (ackUnknown): the customer wins.
func awaitAcked(conn net.Conn, until time.Time) ackOutcome {
	sc := socketOf(conn)
	if sc == nil {
		return ackUnknown
	}
	poll := ackPollFirst
	for {
		switch unacked(sc) {
		case sendAcked:
			return ackAcknowledged
		case sendClosed:
			return ackClosed
		case sendUnknown:
			return ackUnknown
		}
		if !time.Now().Add(poll).Before(until) {
			return ackDeadline
		}
		time.Sleep(poll)
		poll = min(2*poll, ackPollMost)
	}
}

// sendState is what a socket says of the bytes written to it.
type sendState int

const (
	sendPending sendState = iota // bytes still unacknowledged
	sendAcked                    // none: the peer has everything
	sendClosed                   // the connection is closed or reset
	sendUnknown                  // the socket cannot say
)

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
