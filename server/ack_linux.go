package server

import (
	"net"

	"golang.org/x/sys/unix"
)

// position asks the kernel where conn's output stands. TCP_INFO's
// tcpi_bytes_acked is the bytes the peer acknowledged, and SIOCOUTQ those
// written but not yet acknowledged (sent or not); both stay as they were
// once the connection is reset. They are two calls: read again until the
// acknowledged count did not move between them, so that their sum is
// where the written bytes end.
func position(conn *net.TCPConn) (sendPos, error) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return sendPos{}, errCannotTell
	}
	var (
		p    sendPos
		perr = errCannotTell
	)
	cerr := rc.Control(func(fd uintptr) {
		for range 100 {
			before, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
			if err != nil {
				return
			}
			out, err := unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
			if err != nil {
				return
			}
			after, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
			if err != nil {
				return
			}
			if before.Bytes_acked != after.Bytes_acked {
				continue
			}
			p = sendPos{
				acked:   after.Bytes_acked,
				written: after.Bytes_acked + uint64(max(out, 0)),
				open:    after.State == tcpEstablished || after.State == tcpCloseWait,
			}
			perr = nil
			return
		}
	})
	if cerr != nil {
		return sendPos{}, errCannotTell // the socket is closed on our side
	}
	return p, perr
}

// Linux's TCP states (include/net/tcp_states.h) in which the peer still
// acknowledges what it receives: open, or closed for sending on its side.
const (
	tcpEstablished = 1
	tcpCloseWait   = 8
)
