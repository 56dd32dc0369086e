package server

import (
	"net"

	"golang.org/x/sys/unix"
)

// unacked asks the kernel about conn's output: SIOCOUTQ is the bytes not
// yet acknowledged by the peer (sent or not), and the connection's state
// read after it tells whether a zero came from the peer's acknowledgement
// or from a reset that dropped the queue (the socket then is closed).
func unacked(conn *net.TCPConn) sendState {
	rc, err := conn.SyscallConn()
	if err != nil {
		return sendUnknown
	}
	state := sendUnknown
	cerr := rc.Control(func(fd uintptr) {
		out, err := unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
		if err != nil {
			return
		}
		info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		if err != nil {
			return
		}
		switch {
		case info.State != tcpEstablished && info.State != tcpCloseWait:
			state = sendClosed
		case out == 0:
			state = sendAcked
		default:
			state = sendPending
		}
	})
	if cerr != nil {
		return sendClosed // the connection is closed on our side
	}
	return state
}

// Linux's TCP states (include/net/tcp_states.h) in which the peer still
// acknowledges what it receives: open, or closed for sending on its side.
const (
	tcpEstablished = 1
	tcpCloseWait   = 8
)
