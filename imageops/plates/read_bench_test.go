package plates_test

import (
	"context"
	"testing"

	"carphoto/imageops/plates"
)

// BenchmarkDetect12MPUnread is BenchmarkDetect12MP without the text
// reader (plates.DetectUnread): the difference of the two is the reader's
// cost on that photo.
func BenchmarkDetect12MPUnread(b *testing.B) {
	img := twelveMP(b)
	ctx := context.Background()
	start := cpuTime()
	for b.Loop() {
		if _, err := plates.DetectUnread(ctx, img); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// BenchmarkDetectWebUnread is BenchmarkDetectWeb without the reader.
func BenchmarkDetectWebUnread(b *testing.B) {
	photos := loadHeldOut(b, "plates-web-cc0", 10)
	ctx := context.Background()
	start := cpuTime()
	i := 0
	for b.Loop() {
		if _, err := plates.DetectUnread(ctx, photos[i%len(photos)].img); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
