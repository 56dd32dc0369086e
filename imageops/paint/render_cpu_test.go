//go:build unix

package paint

import (
	"syscall"
	"testing"
	"time"
)

// renderCPUTime is the CPU time (user + system) this process has used.
func renderCPUTime(tb testing.TB) time.Duration {
	tb.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// renderReportCPU runs the benchmark loop and reports, next to wall time,
// the CPU time per operation: on a machine shared with other work, wall
// time measures the neighbours as much as the code.
func renderReportCPU(b *testing.B, op func()) {
	b.Helper()
	start := renderCPUTime(b)
	n := 0
	for b.Loop() {
		op()
		n++
	}
	b.ReportMetric(float64(renderCPUTime(b)-start)/float64(time.Millisecond)/float64(n), "cpu-ms/op")
}
