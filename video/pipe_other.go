//go:build !linux

package video

// widenPipe leaves the pipe as it is where F_SETPIPE_SZ does not exist.
func widenPipe(p any, size int) {}
