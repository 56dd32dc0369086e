//go:build unix

package codec_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time (user + system) this process has used. On the
// shared two-core machine wall time swings with the neighbours' load; CPU
// time with -cpu 1 is what an operation costs one core.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds a cpu-ns/op metric for the b.N operations run since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}
