package vehicles

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"carphoto/imageops/internal/nn"
	"carphoto/internal/testenv/imgtest"
)

// The parity photos: docs/samples/car.jpg and listing.jpg and two CC0
// photos of plates-web-cc0, stretched to 320×320 by
// train/vehicles/picodet.py --golden, with onnxruntime's head outputs
// (car only: 360 kB each) and the boxes decoded from them by picodet.py.
var parityPhotos = []string{"car", "listing", "plates-web-cc0-0000", "plates-web-cc0-0001"}

// input reads a parity photo as the network's input: the PNG is already
// 320×320, so nn.Photo only normalises it.
func input(t *testing.T, name string) *nn.Tensor {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name+".png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != Side || b.Dy() != Side {
		t.Fatalf("%s: %v, want %d×%d", name, b, Side, Side)
	}
	var gain, offset [3]float32
	for c := range 3 {
		gain[c], offset[c] = 1/std[c], -mean[c]/std[c]
	}
	return nn.Photo(img, Side, Side, gain, offset)
}

// The Go network's head outputs on the car photo are onnxruntime's: class
// scores (after the sigmoid) within 1e-4 and box-side logits within 1e-2
// (the reference is stored as p·65535 and float16: its rounding), the
// class scores' mean difference under 2e-5.
func TestHeadMatchesOnnxruntime(t *testing.T) {
	p, err := embeddedProgram()
	if err != nil {
		t.Fatal(err)
	}
	x := input(t, "car")
	outs, err := p.run(context.Background(), x)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/car.head.bin.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	at := 0
	var worstCls, worstReg, sumCls float64
	count := 0
	for l, o := range outs {
		n := o.H * o.W
		if side := Side / strides[l]; o.H != side || o.W != side {
			t.Fatalf("level %d: %d×%d, want %d²", l, o.H, o.W, side)
		}
		cls := make([]uint16, n*Classes)
		reg := make([]uint16, n*4*bins)
		for _, part := range []any{cls, reg} {
			size := binary.Size(part)
			if at+size > len(ref) {
				t.Fatal("reference too short")
			}
			if err := binary.Read(bytes.NewReader(ref[at:at+size]), binary.LittleEndian, part); err != nil {
				t.Fatal(err)
			}
			at += size
		}
		for i := range n {
			for c := range Classes {
				d := math.Abs(sigmoid(float64(o.Data[c*n+i])) - float64(cls[i*Classes+c])/65535)
				worstCls = max(worstCls, d)
				sumCls += d
				count++
			}
			for k := range 4 * bins {
				worstReg = max(worstReg, math.Abs(float64(o.Data[(Classes+k)*n+i])-float64(half(reg[i*4*bins+k]))))
			}
		}
	}
	if at != len(ref) {
		t.Fatalf("reference has %d bytes, read %d", len(ref), at)
	}
	t.Logf("largest difference: class scores %.2g (mean %.2g), box logits %.2g", worstCls, sumCls/float64(count), worstReg)
	if worstCls > 1e-4 || sumCls/float64(count) > 2e-5 || worstReg > 1e-2 {
		t.Errorf("class scores differ by up to %.3g (mean %.3g), box logits by %.3g", worstCls, sumCls/float64(count), worstReg)
	}
}

// half converts a float16 to float64.
func half(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e, m := int(h>>10&0x1f), float64(h&0x3ff)
	switch e {
	case 0:
		return sign * m / 1024 * math.Pow(2, -14)
	case 31:
		return sign * math.Inf(1)
	}
	return sign * (1 + m/1024) * math.Pow(2, float64(e-15))
}

// On each parity photo the Go detector's boxes are those picodet.py decodes
// from onnxruntime's outputs: the same classes in the same order, scores
// within 2e-3, corners within 0.5 of the network's 320 pixels.
func TestBoxesMatchOnnxruntime(t *testing.T) {
	for _, name := range parityPhotos {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", name+".boxes.json"))
			if err != nil {
				t.Fatal(err)
			}
			var want []struct {
				Cls   int
				Score float64
				Box   [4]float64
			}
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatal("the reference has no box")
			}
			got, err := detect(context.Background(), input(t, name))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d boxes, want %d: %v", len(got), len(want), describe(got))
			}
			for i, w := range want {
				g := got[i]
				corners := [4]float64{g.x0, g.y0, g.x1, g.y1}
				far := 0.0
				for k := range 4 {
					far = max(far, math.Abs(corners[k]-w.Box[k]))
				}
				if int(g.class) != w.Cls || math.Abs(g.score-w.Score) > 1e-4 || far > 0.02 {
					t.Errorf("box %d: %v %.4f %.1f, want %v %.4f %.1f", i, g.class, g.score, corners, Class(w.Cls), w.Score, w.Box)
				}
			}
		})
	}
}

func describe(bs []box) string {
	var s []string
	for _, b := range bs {
		s = append(s, b.class.String())
	}
	return strings.Join(s, ", ")
}

// Detect finds the sample car (docs/samples/car.jpg, an SUV the detector
// calls a truck) as a vehicle whose box in the photo's pixels is the car's
// as read by eye, (62,50)-(420,295), to an IoU of 0.85.
func TestDetectSampleCar(t *testing.T) {
	img := imgtest.DecodeFile(t, imgtest.SamplePath("car.jpg"))
	objs, err := Detect(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	eye := box{x0: 62, y0: 50, x1: 420, y1: 295}
	best := 0.0
	for _, o := range objs {
		t.Logf("%v %.2f %v", o.Class, o.Score, o.Box)
		if !o.Box.In(img.Bounds()) {
			t.Errorf("%v box %v outside the photo %v", o.Class, o.Box, img.Bounds())
		}
		if o.Class.Vehicle() {
			r := o.Box
			best = max(best, iou(eye, box{x0: float64(r.Min.X), y0: float64(r.Min.Y), x1: float64(r.Max.X), y1: float64(r.Max.Y)}))
		}
	}
	if best < 0.85 {
		t.Errorf("best vehicle box IoU with the car's %.2f, want ≥ 0.85", best)
	}
}

// A corrupt weights file is refused with an error, not a panic.
func TestParseProgramRefusesCorrupt(t *testing.T) {
	for name, data := range map[string][]byte{
		"empty":     nil,
		"magic":     append([]byte("PDT0"), weightsBin[4:]...),
		"truncated": weightsBin[:len(weightsBin)/2],
		"trailing":  append(append([]byte{}, weightsBin...), 0),
	} {
		if _, err := parseProgram(data); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A vehicle the detector scores as a car and again as a truck is one box,
// the stronger; a weaker box the per-class pass dropped stays dropped when
// the box that dropped it is merged away (a tall truck box over a car and
// the pole above it, plates-openimages-1738); other classes are not merged.
func TestSuppressMergesVehicleClasses(t *testing.T) {
	boxes := []box{
		{class: Truck, score: 0.33, x0: 100, y0: 10, x1: 200, y1: 200}, // tall: IoU 0.58 with the car's
		{class: Car, score: 0.55, x0: 100, y0: 90, x1: 200, y1: 200},
		{class: Truck, score: 0.39, x0: 100, y0: 75, x1: 200, y1: 200},
		{class: Person, score: 0.5, x0: 101, y0: 90, x1: 200, y1: 200},
		{class: Car, score: 0.8, x0: 0, y0: 0, x1: 50, y1: 50},
	}
	got := suppress(boxes)
	if d := describe(got); d != "car, car, person" {
		t.Fatalf("kept %s, want car, car, person", d)
	}
	if got[1].score != 0.55 {
		t.Errorf("kept the vehicle at %.2f, want the car at 0.55", got[1].score)
	}
}

// Main weighs each vehicle by its score as well as its size and centrality:
// a weak box three quarters larger, over a car and the street behind it,
// loses to the sure box of the car; a person, however large, is not a car.
func TestMainWeighsTheScore(t *testing.T) {
	frame := image.Rect(0, 0, 1000, 600)
	sure := Object{Class: Car, Score: 0.86, Box: image.Rect(400, 290, 750, 470)}
	weak := Object{Class: Truck, Score: 0.33, Box: image.Rect(380, 200, 770, 480)}
	person := Object{Class: Person, Score: 0.9, Box: image.Rect(0, 0, 1000, 600)}
	car, ok := Main([]Object{person, weak, sure}, frame)
	if !ok || car != sure {
		t.Fatalf("chose %v %.2f %v, want the car at 0.86", car.Class, car.Score, car.Box)
	}
	if _, ok := Main([]Object{person}, frame); ok {
		t.Error("a person alone was taken for a car")
	}
}
