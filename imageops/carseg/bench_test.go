package carseg

import (
	"context"
	"fmt"
	"image"
	"os"
	"syscall"
	"testing"
	"time"

	"carphoto/imageops/internal/nn"
)

// BenchmarkSegment times SegmentAt on docs/samples/listing.jpg (4000×2672,
// 10.7 MP, decoded once) at several sides, in float and with the integer layers, with the best kernels this CPU
// has and (/avx2) with the AVX2 ones only, its shrinking included. Besides
// the wall time it reports cpu-ms/op, the process's CPU time an operation:
// on a shared machine the wall time also counts the waits for a core. Run
// it with -cpu 1 for the time of one core.
func BenchmarkSegment(b *testing.B) {
	f, err := os.Open("../../docs/samples/listing.jpg")
	if err != nil {
		b.Fatal(err)
	}
	img, _, err := image.Decode(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	for _, side := range []int{257, 321, 385, 513} {
		for _, on := range []bool{false, true} {
			for _, avx2 := range []bool{false, true} {
				name := fmt.Sprintf("%d/%s", side, map[bool]string{false: "float", true: "int"}[on])
				if avx2 {
					name += "/avx2"
				}
				b.Run(name, func(b *testing.B) {
					defer nn.SetIntegers(on)()
					if avx2 {
						defer nn.SetFloatKernels("avx2")()
						restore, err := nn.SetIntKernel(nn.IntKernelAVX2)
						if err != nil {
							b.Skip(err)
						}
						defer restore()
					}
					start := cpuTime()
					for b.Loop() {
						if _, err := SegmentAt(context.Background(), img, side); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
				})
			}
		}
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
