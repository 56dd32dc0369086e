package textdet

import (
	"carphoto/imageops/internal/nn"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math"
	"os"
	"testing"
)

// parityPhotos are CC0 photos from plates-web-cc0, resized by
// train/textdet/ppocr_det.py --golden to the working size for side 320,
// with OpenCV's output of the original ONNX graph on each.
var parityPhotos = []string{"plates-web-cc0-0000", "plates-web-cc0-0001", "plates-web-cc0-0002"}

func readPNG(tb testing.TB, path string) image.Image {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	return img
}

// reference returns the map OpenCV computed for a parity photo.
func reference(tb testing.TB, name string, like *Map) *Map {
	tb.Helper()
	g, ok := readPNG(tb, "testdata/"+name+".prob.png").(*image.Gray16)
	if !ok {
		tb.Fatalf("%s.prob.png is not 16-bit grey", name)
	}
	m := *like
	m.P = make([]float32, len(like.P))
	if b := g.Bounds(); b.Dx() != m.W || b.Dy() != m.H {
		tb.Fatalf("%s: reference %v, map %dx%d", name, b, m.W, m.H)
	}
	for y := range m.H {
		for x := range m.W {
			m.P[y*m.W+x] = float32(g.Gray16At(x, y).Y) / 65535
		}
	}
	return &m
}

// The Go network's probability map, all in float, matches OpenCV's run of
// the original ONNX graph (float32 weights) on the same input, and the
// regions found on the two maps are the same. (The integer layers are held
// to the float network by TestIntRegionsMatchFloat.)
func TestMatchesOpenCV(t *testing.T) {
	defer nn.SetIntegers(false)()
	for _, name := range parityPhotos {
		t.Run(name, func(t *testing.T) {
			img := readPNG(t, "testdata/"+name+".png")
			got, err := Probabilities(context.Background(), img, max(img.Bounds().Dx(), img.Bounds().Dy()))
			if err != nil {
				t.Fatal(err)
			}
			if got.W != img.Bounds().Dx() || got.H != img.Bounds().Dy() {
				t.Fatalf("working size %dx%d, want the photo's %v", got.W, got.H, img.Bounds())
			}
			want := reference(t, name, got)
			var worst, sum float64
			for i := range want.P {
				d := math.Abs(float64(got.P[i] - want.P[i]))
				worst = max(worst, d)
				sum += d
			}
			t.Logf("largest difference %.2g, mean %.2g", worst, sum/float64(len(want.P)))
			if worst > parityTolerance {
				t.Errorf("largest difference %.3g, want at most %g", worst, parityTolerance)
			}
			if m := sum / float64(len(want.P)); m > 1e-4 {
				t.Errorf("mean difference %.3g, want at most 1e-4", m)
			}
			gr, wr := got.Regions(), want.Regions()
			if len(wr) == 0 {
				t.Fatalf("no regions in the reference: a poor test photo")
			}
			if len(gr) != len(wr) {
				t.Fatalf("%d regions, OpenCV's map gives %d:\n%v\n%v", len(gr), len(wr), gr, wr)
			}
			for i := range wr {
				for k := range 4 {
					if d := math.Hypot(gr[i].Quad[k].X-wr[i].Quad[k].X, gr[i].Quad[k].Y-wr[i].Quad[k].Y); d > 0.5 {
						t.Errorf("region %d corner %d at %v, OpenCV's map gives %v", i, k, gr[i].Quad[k], wr[i].Quad[k])
					}
				}
			}
		})
	}
}

// parityTolerance is the largest difference allowed from OpenCV's float32
// run at a pixel. The weights are stored as float16, which moves the map by
// up to 0.02 at a few pixels where it crosses from text to background (a
// mean of about 1e-5); with float32 weights the largest difference is
// 3e-5.
const parityTolerance = 3e-2

func TestFindReturnsRegionsInPhotoPixels(t *testing.T) {
	img := readPNG(t, "testdata/plates-web-cc0-0000.png")
	// The same photo twice as large, shifted: regions scale with it.
	big := image.NewRGBA(image.Rect(10, 20, 10+2*img.Bounds().Dx(), 20+2*img.Bounds().Dy()))
	for y := big.Rect.Min.Y; y < big.Rect.Max.Y; y++ {
		for x := big.Rect.Min.X; x < big.Rect.Max.X; x++ {
			big.Set(x, y, img.At((x-10)/2, (y-20)/2))
		}
	}
	small, err := Find(context.Background(), img, 320)
	if err != nil {
		t.Fatal(err)
	}
	large, err := Find(context.Background(), big, 320)
	if err != nil {
		t.Fatal(err)
	}
	if len(small) == 0 || len(small) != len(large) {
		t.Fatalf("%d regions at 1×, %d at 2×", len(small), len(large))
	}
	for i := range small {
		a, b := small[i].Quad.Bounds(), large[i].Quad.Bounds()
		want := image.Rect(10+2*a.Min.X, 20+2*a.Min.Y, 10+2*a.Max.X, 20+2*a.Max.Y)
		if d := max(abs(b.Min.X-want.Min.X), abs(b.Min.Y-want.Min.Y), abs(b.Max.X-want.Max.X), abs(b.Max.Y-want.Max.Y)); d > 4 {
			t.Errorf("region %d: %v at 2×, want about %v", i, b, want)
		}
		if !b.In(big.Rect) {
			t.Errorf("region %d: %v outside the photo %v", i, b, big.Rect)
		}
	}
}

func abs(v int) int { return max(v, -v) }

func TestProbabilitiesHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	img := readPNG(t, "testdata/plates-web-cc0-0000.png")
	if _, err := Find(ctx, img, 320); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

// A rectangle of text-like probability at 30° comes out as one region whose
// box has the rectangle's angle and is grown by the unclip rule.
func TestRegionsOfARotatedBar(t *testing.T) {
	m := &Map{W: 200, H: 120, P: make([]float32, 200*120), Sx: 2, Sy: 2}
	a := math.Pi / 6
	ux, uy := math.Cos(a), math.Sin(a)
	const l, w = 80.0, 12.0
	for y := range m.H {
		for x := range m.W {
			dx, dy := float64(x)+0.5-100, float64(y)+0.5-60
			if s, t := dx*ux+dy*uy, -dx*uy+dy*ux; math.Abs(s) < l/2 && math.Abs(t) < w/2 {
				m.P[y*m.W+x] = 0.9
			}
		}
	}
	rs := m.Regions()
	if len(rs) != 1 {
		t.Fatalf("%d regions, want 1", len(rs))
	}
	q := rs[0].Quad
	side := func(i int) float64 { return math.Hypot(q[(i+1)%4].X-q[i].X, q[(i+1)%4].Y-q[i].Y) / 2 }
	d := l * w * Unclip / (2 * (l + w))
	if got := fmt.Sprintf("%.0f %.0f", side(0), side(1)); got != fmt.Sprintf("%.0f %.0f", l+2*d, w+2*d) {
		t.Errorf("sides %s working pixels, want %.0f %.0f", got, l+2*d, w+2*d)
	}
	if ang := math.Atan2(q[1].Y-q[0].Y, q[1].X-q[0].X); math.Abs(ang-a) > 0.05 {
		t.Errorf("angle %.3f, want %.3f", ang, a)
	}
	if math.Abs(rs[0].Score-0.9) > 1e-6 {
		t.Errorf("score %v, want 0.9", rs[0].Score)
	}
}

// A weights file that is not the detector's is refused, not half read.
func TestParseNetRefusesOtherFiles(t *testing.T) {
	f32 := append([]byte("PPD4"), weightsBin[4:]...) // float16 data read as float32
	for name, data := range map[string][]byte{
		"bad magic":     append([]byte("XXXX"), weightsBin[4:]...),
		"truncated":     weightsBin[:len(weightsBin)-10],
		"trailing data": append(append([]byte{}, weightsBin...), 0, 0, 0, 0),
		"wrong type":    f32,
	} {
		if _, err := parseNet(data); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := parseNet(weightsBin); err != nil {
		t.Fatal(err)
	}
}
