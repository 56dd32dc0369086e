package textdet

import (
	"bytes"
	"carphoto/imageops/internal/nn"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"syscall"
	"testing"
	"time"
)

// BenchmarkFind times Find on a 1280×960 photo (a parity photo enlarged,
// then JPEG-encoded and decoded, as the service receives photos) at
// the working sizes a plate search would use: long side 640 (640×480) and
// 960 (960×736), all in float and with the integer layers, one after the
// other. Besides the wall time it reports cpu-ms/op, the process's
// CPU time an operation (the garbage collector's included): on a shared
// machine the wall time also counts the waits for a core. Run it with
// -cpu 1 for the time of one core.
func BenchmarkFind(b *testing.B) {
	src := readPNG(b, "testdata/plates-web-cc0-0002.png")
	sb := src.Bounds()
	rgba := image.NewRGBA(image.Rect(0, 0, 1280, 960))
	for y := range 960 {
		for x := range 1280 {
			rgba.Set(x, y, src.At(sb.Min.X+x*sb.Dx()/1280, sb.Min.Y+y*sb.Dy()/960))
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, rgba, &jpeg.Options{Quality: 90}); err != nil {
		b.Fatal(err)
	}
	img, err := jpeg.Decode(&buf)
	if err != nil {
		b.Fatal(err)
	}
	for _, side := range []int{640, 960} {
		for _, on := range []bool{false, true} {
			b.Run(fmt.Sprintf("%d/%s", side, map[bool]string{false: "float", true: "int"}[on]), func(b *testing.B) {
				defer nn.SetIntegers(on)()
				start := cpuTime()
				for b.Loop() {
					if _, err := Find(context.Background(), img, side); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
			})
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
