package worker

import (
	"carphoto/imageops"
	"carphoto/internal/testenv/datasets"
	"context"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"carphoto/imageops/codec"
	"carphoto/imageops/shadow"
	"carphoto/internal/testenv/benchphoto"
	"carphoto/internal/testenv/imgtest"
)

// cameraPhoto is cars-seg-0095 (a car on a street, 480×360) upscaled to
// 4000×3000 with Catmull-Rom and given ±6 levels of noise, so that it codes
// about as densely as a camera's 12 MP photo (2–3 MB at quality 90; the
// upscaled photo alone codes in a fraction of that). Made once a run; the
// error is os.ErrNotExist where the shared data set is absent.
var cameraPhoto = sync.OnceValues(func() ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(datasets.Dir(), "cars-seg", "images", "cars-seg-0095.jpg"))
	if err != nil {
		return nil, err
	}
	return benchphoto.Enlarge(context.Background(), data, 12, 6)
})

// listingPhoto12MP is the shipped listing-size sample
// (docs/samples/listing.jpg, 4000×2672) resampled to 12 MP with ±6 levels of
// noise (benchphoto.Enlarge), about 2.5 MB as a camera's photo: a real
// whole car, in every clone. Made once a run.
var listingPhoto12MP = sync.OnceValues(func() ([]byte, error) {
	data, err := os.ReadFile(imgtest.SamplePath("listing.jpg"))
	if err != nil {
		return nil, err
	}
	return benchphoto.Enlarge(context.Background(), data, 12, 6)
})

// cameraPhoto12MP is cameraPhoto, or skips where the data set is absent.
func cameraPhoto12MP(tb testing.TB) []byte {
	tb.Helper()
	data, err := cameraPhoto()
	if os.IsNotExist(err) {
		tb.Skipf("shared data set cars-seg not found (CARPHOTO_DATASETS names the folder of the shared sets: README.md, \"Data sets\"): %v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// usage is the process's CPU time (user and system, in ms) and minor page
// faults so far.
type usage struct{ user, sys, faults float64 }

func usageNow() usage {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return usage{float64(ru.Utime.Nano()) / 1e6, float64(ru.Stime.Nano()) / 1e6, float64(ru.Minflt)}
}

// BenchmarkShadow12MP runs the full-decode operations of the worker on a
// camera-like 12 MP JPEG (cameraPhoto) as a worker does, memory handed
// back after each task as handle does when no other task is running, and
// reports what one core pays per call: CPU time (user+system, getrusage;
// the machine is shared, so wall time is not the figure), the system part
// of it, and minor page faults. car-shadow-back-to-back is car-shadow on a
// busy worker, the next task starting before memory is handed back.
//
//	go test ./worker -run '^$' -bench Shadow12MP -benchtime 5x -count 3 -cpu 1
func BenchmarkShadow12MP(b *testing.B) {
	photo := cameraPhoto12MP(b)
	ctx := context.Background()
	cut, err := process(ctx, imageops.Input{Photo: photo, Limits: codec.Limits{}}, imageops.Params{Op: imageops.CarCutout})
	if err != nil {
		b.Fatal(err)
	}
	listing, err := listingPhoto12MP()
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		photo  []byte
		params imageops.Params
		busy   bool
	}{
		{"car-shadow", photo, imageops.Params{Op: imageops.CarShadow}, false},
		{"car-shadow-back-to-back", photo, imageops.Params{Op: imageops.CarShadow}, true},
		{"car-shadow-reflection", photo, imageops.Params{Op: imageops.CarShadow, Reflection: true}, false},
		{"car-shadow-listing", photo, imageops.Params{Op: imageops.CarShadow, Canvas: shadow.Canvas{Crop: true, Padding: 0.04, PaddingShare: true, Aspect: [2]int{4, 3}}, Background: &imageops.Colour{R: 255, G: 255, B: 255, A: 255}}, false},
		{"car-cutout", photo, imageops.Params{Op: imageops.CarCutout}, false},
		{"car-shadow-of-png", cut.Body, imageops.Params{Op: imageops.CarShadow}, false},
		// The listing sample at 12 MP, whose plate is found: plates kept,
		// and blurred in the same call.
		{"car-shadow-listing-photo", listing, imageops.Params{Op: imageops.CarShadow}, false},
		{"car-shadow-listing-photo-plates-blur", listing, imageops.Params{Op: imageops.CarShadow, Plates: imageops.Plates{Hide: imageops.StyleBlur}}, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			u0 := usageNow()
			for b.Loop() {
				if _, err := process(ctx, imageops.Input{Photo: c.photo}, c.params); err != nil {
					b.Fatal(err)
				}
				if !c.busy {
					releaseMemory()
				}
			}
			u1 := usageNow()
			n := float64(b.N)
			b.ReportMetric((u1.user-u0.user+u1.sys-u0.sys)/n, "cpu-ms/op")
			b.ReportMetric((u1.sys-u0.sys)/n, "sys-ms/op")
			b.ReportMetric((u1.faults-u0.faults)/n, "faults/op")
		})
	}
}
