package video

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// widenPipe asks the kernel for a pipe buffer of up to size bytes on p
// (one of exec's pipes to an ffmpeg), so that a frame crosses it in a few
// reads and writes instead of one a 64 KiB default buffer, each waking the
// other side. Where the kernel refuses (over /proc/sys/fs/pipe-max-size,
// or p is not a pipe) the pipe stays as it was: a matter of speed only.
func widenPipe(p any, size int) {
	f, ok := p.(interface {
		SyscallConn() (syscall.RawConn, error)
	})
	if !ok {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		for s := size; s >= 64<<10; s /= 2 {
			if _, err := unix.FcntlInt(fd, unix.F_SETPIPE_SZ, s); err == nil {
				return
			}
		}
	})
}
