package carseg

import (
	"context"
	"encoding/binary"
	"image"
	_ "image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"carphoto/imageops/internal/nn"
)

// The parity photos: each stretched to 321² (NAME.png) by
// train/carseg/convert.py --golden, with the float interpreter's class
// scores at 21² (NAME.logits) and its class map at 321² (NAME.classes.png,
// VOC's indices). car.jpg is docs/samples' car; the others are CC0 photos
// of plates-web-cc0: three parked cars; a car with two men beside it.
var parityPhotos = []string{"car", "plates-web-cc0-0003", "plates-web-cc0-0060"}

// TestMatchesInterpreter runs the network on the parity photos and compares
// its class scores and class map with the PyTorch interpreter's of the
// TFLite graph (train/carseg/interp.py), in float and with the integer
// layers the engine chooses.
func TestMatchesInterpreter(t *testing.T) {
	n, err := embeddedNet()
	if err != nil {
		t.Fatal(err)
	}
	// The largest and mean differences of the scores each arithmetic may
	// have, and how many pixels in 1000 may change class.
	for _, c := range []struct {
		integers    bool
		worst, mean float64
		perMille    int
	}{{false, 1e-3, 1e-4, 0}, {true, intWorst, intMean, 1}} {
		restore := nn.SetIntegers(c.integers)
		for _, name := range parityPhotos {
			img := readPNG(t, filepath.Join("testdata", name+".png"))
			want := readLogits(t, filepath.Join("testdata", name+".logits"))
			wantMap := readPNG(t, filepath.Join("testdata", name+".classes.png")).(*image.Gray)
			side := img.Bounds().Dx()
			got, err := n.forward(context.Background(), prepare(img, side))
			if err != nil {
				t.Fatal(err)
			}
			if got.C != want.C || got.H != want.H || got.W != want.W {
				t.Fatalf("%s: scores %d×%d×%d, want %d×%d×%d", name, got.C, got.H, got.W, want.C, want.H, want.W)
			}
			var worst, sum float64
			for i, v := range got.Data {
				d := math.Abs(float64(v - want.Data[i]))
				worst = max(worst, d)
				sum += d
			}
			mean := sum / float64(len(got.Data))
			t.Logf("%s, integers %v: class scores differ by at most %.2g (mean %.2g)", name, c.integers, worst, mean)
			if worst > c.worst || mean > c.mean {
				t.Errorf("%s, integers %v: class scores differ by up to %.3g (mean %.3g), want ≤ %g (mean %g)",
					name, c.integers, worst, mean, c.worst, c.mean)
			}
			cls := classes(got, side)
			differ, vehicles, people := 0, 0, 0
			for i, cl := range cls {
				if cl != voc[wantMap.Pix[i]] {
					differ++
				}
				if IsVehicle(cl) {
					vehicles++
				}
				if cl == Person {
					people++
				}
			}
			t.Logf("%s, integers %v: %d of %d pixels of another class; %d vehicle pixels", name, c.integers, differ, len(cls), vehicles)
			if differ > len(cls)*c.perMille/1000 {
				t.Errorf("%s, integers %v: %d of %d pixels of another class than the interpreter's", name, c.integers, differ, len(cls))
			}
			if vehicles < len(cls)/20 {
				t.Errorf("%s: %d vehicle pixels of %d: the car is not found", name, vehicles, len(cls))
			}
			if name == "plates-web-cc0-0060" && people < len(cls)/10 {
				t.Errorf("%s: %d person pixels of %d: the two men beside the car are not found", name, people, len(cls))
			}
		}
		restore()
	}
}

// The differences from the interpreter's scores allowed on integers.
const intWorst, intMean = 0.1, 0.02

// TestSegmentMapsPhotoCoordinates segments the docs' sample car (600×399)
// and checks the map's photo coordinates: the box of the vehicle region
// Mask gives over the whole photo is the car's, read off the photo by eye
// (x 56 to 420, y 50 to 292), and At agrees with Mask.
func TestSegmentMapsPhotoCoordinates(t *testing.T) {
	f, err := os.Open("../../docs/samples/car.jpg")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Segment(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	mask := m.Mask(b, IsVehicle)
	if mask.Bounds() != b {
		t.Fatalf("mask bounds %v, want %v", mask.Bounds(), b)
	}
	box := image.Rectangle{Min: b.Max, Max: b.Min}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			on := mask.AlphaAt(x, y).A == 255
			if on != IsVehicle(m.At(x, y)) {
				t.Fatalf("(%d, %d): Mask says %v, At says %v", x, y, on, m.At(x, y))
			}
			if on {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	want := image.Rect(56, 50, 420, 292)
	t.Logf("vehicle box %v, the car's %v", box, want)
	for _, d := range []int{box.Min.X - want.Min.X, box.Min.Y - want.Min.Y, box.Max.X - want.Max.X, box.Max.Y - want.Max.Y} {
		if d < -12 || d > 12 {
			t.Errorf("vehicle box %v, the car's is %v", box, want)
			break
		}
	}
}

// TestSegmentPersonBesideCar segments plates-web-cc0-0060
// (testdata/plates-web-cc0-0060.png, 321 px square: a car from the left edge
// to x 205, two men standing from x 185 to the right edge, read off the
// picture) and checks where Mask puts the person and vehicle regions in the
// photo's pixels: the people right of x 175, the car left of x 215.
func TestSegmentPersonBesideCar(t *testing.T) {
	img := readPNG(t, "testdata/plates-web-cc0-0060.png")
	m, err := Segment(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	for _, c := range []struct {
		what  string
		keep  func(Class) bool
		split int
		right bool
	}{{"person", IsPerson, 175, true}, {"vehicle", IsVehicle, 215, false}} {
		mask := m.Mask(b, c.keep)
		left, right := 0, 0
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				if mask.AlphaAt(x, y).A == 255 {
					if x < c.split {
						left++
					} else {
						right++
					}
				}
			}
		}
		t.Logf("%s: %d pixels left of x %d, %d right", c.what, left, c.split, right)
		on, off := left, right
		if c.right {
			on, off = right, left
		}
		if on < b.Dx()*b.Dy()/10 || off > on/20 {
			t.Errorf("%s: %d pixels left of x %d, %d right", c.what, left, c.split, right)
		}
	}
}

// TestSegmentRefuses checks the sides SegmentAt refuses and an empty image.
func TestSegmentRefuses(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for _, side := range []int{0, 64, 320, 322, MaxSide + 16} {
		if _, err := SegmentAt(context.Background(), img, side); err == nil || !strings.Contains(err.Error(), "side") {
			t.Errorf("side %d: error %v", side, err)
		}
	}
	if _, err := Segment(context.Background(), image.NewRGBA(image.Rectangle{})); err == nil {
		t.Error("an empty image segmented")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Segment(ctx, img); err == nil {
		t.Error("a cancelled context ran to the end")
	}
}

func readPNG(tb testing.TB, path string) image.Image {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		tb.Fatal(err)
	}
	return img
}

// readLogits reads a NAME.logits file: uint32 channels, height, width, then
// the float32 values.
func readLogits(tb testing.TB, path string) *nn.Tensor {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	c, h, w := int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:])), int(binary.LittleEndian.Uint32(b[8:]))
	if len(b) != 12+4*c*h*w {
		tb.Fatalf("%s: %d bytes for %d×%d×%d", path, len(b), c, h, w)
	}
	t := nn.NewTensor(c, h, w)
	for i := range t.Data {
		t.Data[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[12+4*i:]))
	}
	return t
}
