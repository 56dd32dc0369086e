package vehicles

import (
	"bytes"
	"context"
	"image/jpeg"
	"syscall"
	"testing"
	"time"

	"carphoto/imageops/internal/nn"
	"carphoto/internal/testenv/benchphoto"
	"carphoto/internal/testenv/imgtest"
)

// BenchmarkDetect12MP times Detect on the sample car enlarged to 12 MP
// (grained, JPEG-encoded and decoded as the service receives photos): the
// shrink to 320×320 and the network, in float. Besides the wall time it
// reports cpu-ms/op, the process's CPU time an operation (the garbage
// collector's included). Run it with -cpu 1 for the time of one core.
// BenchmarkDetect320 is the network and the decoding alone.
func BenchmarkDetect12MP(b *testing.B) {
	data, err := benchphoto.Enlarge(context.Background(), imgtest.Sample(b, "car.jpg"), 12, 6)
	if err != nil {
		b.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("photo %v", img.Bounds())
	start := cpuTime()
	for b.Loop() {
		if _, err := Detect(context.Background(), img); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

func BenchmarkDetect320(b *testing.B) {
	var gain, offset [3]float32
	for c := range 3 {
		gain[c], offset[c] = 1/std[c], -mean[c]/std[c]
	}
	x := nn.Photo(imgtest.DecodeFile(b, imgtest.SamplePath("car.jpg")), Side, Side, gain, offset)
	start := cpuTime()
	for b.Loop() {
		if _, err := detect(context.Background(), x); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
