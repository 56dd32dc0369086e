package shadow_test

import (
	"bytes"
	"carphoto/internal/testenv/datasets"
	"context"
	"errors"
	"image"
	"image/color"
	_ "image/jpeg"
	_ "image/png"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	xdraw "golang.org/x/image/draw"

	"carphoto"
	"carphoto/imageops/cutout"
	"carphoto/imageops/shadow"
	"carphoto/internal/testenv/imgtest"
)

// shadowWheel is a tyre of a synthetic car: a disc whose lowest point touches the
// floor.
type shadowWheel struct{ cx, cy, r float64 }

func (w shadowWheel) bottom() float64 { return w.cy + w.r }

// shadowCar draws a car cut-out: a body polygon (green turning from blue
// row by row, so that mirrored rows can be told apart) and wheels (red), with an
// anti-aliased matte.
func shadowCar(tb testing.TB, w, h int, body [][2]float64, wheels []shadowWheel) *image.NRGBA {
	tb.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	const ss = 4 // supersampling per axis for the matte
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var inBody, inWheel int
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					px := float64(x) + (float64(sx)+0.5)/ss
					py := float64(y) + (float64(sy)+0.5)/ss
					switch {
					case shadowInWheel(wheels, px, py):
						inWheel++
					case shadowInPolygon(body, px, py):
						inBody++
					}
				}
			}
			n := inBody + inWheel
			if n == 0 {
				continue
			}
			c := color.NRGBA{A: uint8((n*255 + ss*ss/2) / (ss * ss))}
			if inWheel >= inBody {
				c.R, c.G, c.B = 200, 20, 30
			} else {
				c.R, c.G, c.B = 20, uint8(min(40+y, 255)), uint8(max(230-y, 0))
			}
			img.SetNRGBA(x, y, c)
		}
	}
	return img
}

func shadowInWheel(wheels []shadowWheel, x, y float64) bool {
	for _, w := range wheels {
		if (x-w.cx)*(x-w.cx)+(y-w.cy)*(y-w.cy) <= w.r*w.r {
			return true
		}
	}
	return false
}

func shadowInPolygon(p [][2]float64, x, y float64) bool {
	in := false
	for i, j := 0, len(p)-1; i < len(p); j, i = i, i+1 {
		a, b := p[i], p[j]
		if (a[1] > y) != (b[1] > y) && x < (b[0]-a[0])*(y-a[1])/(b[1]-a[1])+a[0] {
			in = !in
		}
	}
	return in
}

// shadowSideCar is a car seen from the side: two wheels on one floor line at
// y = 180, the sills 15 px above it.
func shadowSideCar(tb testing.TB) (*image.NRGBA, []shadowWheel) {
	wheels := []shadowWheel{{110, 150, 30}, {310, 150, 30}}
	body := [][2]float64{{40, 90}, {120, 40}, {290, 40}, {370, 90}, {370, 165}, {40, 165}}
	return shadowCar(tb, 420, 260, body, wheels), wheels
}

// shadowThreeQuarterCar is a car seen at three-quarters: the near front wheel is
// lowest, the near rear and far front wheels higher, so the floor has two
// contact lines meeting under the near front wheel.
func shadowThreeQuarterCar(tb testing.TB) (*image.NRGBA, []shadowWheel) {
	wheels := []shadowWheel{{100, 150, 26}, {270, 172, 32}, {372, 146, 22}}
	body := [][2]float64{{50, 70}, {150, 30}, {330, 35}, {400, 80}, {398, 140}, {300, 160}, {240, 162}, {60, 140}}
	return shadowCar(tb, 420, 260, body, wheels), wheels
}

func shadowRun(tb testing.TB, car *image.NRGBA, opt shadow.ShadowOptions) *image.NRGBA {
	tb.Helper()
	out, err := shadow.CarShadow(context.Background(), car, opt)
	if err != nil {
		tb.Fatalf("CarShadow: %v", err)
	}
	return out
}

// shadowCarOffset finds where the input's opaque pixels landed in out (the canvas
// grows only sideways and downwards), failing if they are not all there
// unchanged.
func shadowCarOffset(tb testing.TB, car, out *image.NRGBA) image.Point {
	tb.Helper()
	for dx := 0; dx <= out.Rect.Dx()-car.Rect.Dx(); dx++ {
		if shadowOpaqueMatch(car, out, dx) {
			return image.Pt(dx, 0)
		}
	}
	tb.Fatalf("the car's opaque pixels are not bit-identical at any offset of the %v canvas", out.Rect)
	return image.Point{}
}

func shadowOpaqueMatch(car, out *image.NRGBA, dx int) bool {
	b := car.Rect
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			c := car.NRGBAAt(x, y)
			if c.A == 255 && out.NRGBAAt(x+dx, y) != c {
				return false
			}
		}
	}
	return true
}

func TestCarShadowKeepsOpaqueCarPixels(t *testing.T) {
	side, _ := shadowSideCar(t)
	tq, _ := shadowThreeQuarterCar(t)
	for name, car := range map[string]*image.NRGBA{"side": side, "three-quarter": tq} {
		for _, refl := range []bool{false, true} {
			out := shadowRun(t, car, shadow.ShadowOptions{Reflection: refl})
			if out.Rect.Min != (image.Point{}) {
				t.Errorf("%s: output bounds %v, want them at (0,0)", name, out.Rect)
			}
			shadowCarOffset(t, car, out)
		}
	}
}

// With ReuseCar the answer is the same image, drawn on the car itself when the
// shadow fits on its canvas (a car with floor below and beside it) and on a
// new canvas when it does not (the synthetic cars fill their images).
func TestCarShadowReuseCar(t *testing.T) {
	side, _ := shadowSideCar(t)
	roomy := image.NewNRGBA(image.Rect(0, 0, 700, 500))
	for y := range side.Rect.Dy() {
		copy(roomy.Pix[(y+60)*roomy.Stride+4*140:], side.Pix[y*side.Stride:(y+1)*side.Stride])
	}
	reused := 0
	for name, car := range map[string]*image.NRGBA{"filling its image": side, "with room around it": roomy} {
		for _, refl := range []bool{false, true} {
			want := shadowRun(t, car, shadow.ShadowOptions{Reflection: refl})
			mine := image.NewNRGBA(car.Rect)
			copy(mine.Pix, car.Pix)
			got := shadowRun(t, mine, shadow.ShadowOptions{Reflection: refl, ReuseCar: true})
			if got.Rect != want.Rect || !bytes.Equal(got.Pix, want.Pix) {
				t.Errorf("%s, reflection %v: ReuseCar changes the answer", name, refl)
			}
			drawnOn := &got.Pix[0] == &mine.Pix[0]
			if drawnOn != (want.Rect == car.Rect) {
				t.Errorf("%s, reflection %v: drawn on the car %v, canvas %v, car %v", name, refl, drawnOn, want.Rect, car.Rect)
			}
			if drawnOn {
				reused++
			}
		}
	}
	if reused == 0 {
		t.Error("no case drew on the car itself")
	}
}

// shadowAlphaAt returns the output's alpha at input coordinates (x, y).
func shadowAlphaAt(out *image.NRGBA, off image.Point, x, y int) int {
	return int(out.NRGBAAt(x+off.X, y+off.Y).A)
}

func TestCarShadowDarkestUnderTheWheels(t *testing.T) {
	for _, tc := range []struct {
		name string
		car  func(testing.TB) (*image.NRGBA, []shadowWheel)
	}{
		{"side", shadowSideCar},
		{"three-quarter", shadowThreeQuarterCar},
	} {
		t.Run(tc.name, func(t *testing.T) {
			car, wheels := tc.car(t)
			out := shadowRun(t, car, shadow.ShadowOptions{})
			off := shadowCarOffset(t, car, out)
			for k, w := range wheels {
				y := int(w.bottom()) // the first row under the tyre
				cx := int(w.cx)
				if a := shadowAlphaAt(out, off, cx, y); a < 180 {
					t.Errorf("shadowWheel at x=%v: shadow alpha right under the tyre is %d, want ≥ 180", w.cx, a)
				}
				// Along each contact line to a neighbouring wheel, just
				// under it, the darkest point is under the tyre's lowest
				// point, not beside it.
				for _, n := range []int{k - 1, k + 1} {
					if n < 0 || n >= len(wheels) {
						continue
					}
					o := wheels[n]
					slope := (o.bottom() - w.bottom()) / (o.cx - w.cx)
					dir := 1
					if o.cx < w.cx {
						dir = -1
					}
					best, bestX := -1, 0
					for d := 0; d <= int(w.r); d++ {
						x := cx + dir*d
						ly := w.bottom() + slope*(float64(x)+0.5-w.cx)
						if a := shadowAlphaAt(out, off, x, int(ly)); a > best {
							best, bestX = a, x
						}
					}
					if d := bestX - cx; d < -3 || d > 3 {
						t.Errorf("shadowWheel at x=%v: darkest shadow along the line to the shadowWheel at x=%v is at x=%d, want within 3 px of the tyre's lowest point", w.cx, o.cx, bestX)
					}
				}
			}
		})
	}
}

func TestCarShadowIgnoresRoadLeftInTheMatte(t *testing.T) {
	car, wheels := shadowSideCar(t)
	for x := 20; x < 400; x++ { // one row of road left in the matte, 20 px under the car
		car.SetNRGBA(x, 200, color.NRGBA{90, 90, 90, 255})
	}
	for y := 230; y < 238; y++ { // and a speck 50 px under it
		for x := 200; x < 208; x++ {
			car.SetNRGBA(x, y, color.NRGBA{90, 90, 90, 255})
		}
	}
	out := shadowRun(t, car, shadow.ShadowOptions{})
	off := shadowCarOffset(t, car, out)
	for _, w := range wheels {
		if a := shadowAlphaAt(out, off, int(w.cx), int(w.bottom())); a < 180 {
			t.Errorf("wheel at x=%v: alpha right under the tyre %d, want ≥ 180 (the floor is at the tyres, not at the sliver)", w.cx, a)
		}
	}
}

func TestCarShadowFadesAwayFromTheContact(t *testing.T) {
	car, wheels := shadowSideCar(t)
	out := shadowRun(t, car, shadow.ShadowOptions{})
	off := shadowCarOffset(t, car, out)
	floor := int(wheels[0].bottom())

	// Downwards under a wheel.
	w := wheels[1]
	prev := shadowAlphaAt(out, off, int(w.cx), floor)
	for y := floor + 1; y < out.Rect.Dy()-off.Y; y++ {
		a := shadowAlphaAt(out, off, int(w.cx), y)
		if a > prev {
			t.Fatalf("under the shadowWheel, alpha rises from %d to %d at %d px below the floor", prev, a, y-floor)
		}
		prev = a
	}
	if prev != 0 {
		t.Errorf("the shadow is clipped: alpha %d on the canvas's last row", prev)
	}

	// Sideways, past the front of the car, along the row under the floor.
	front := 370
	prev = shadowAlphaAt(out, off, front, floor+1)
	if prev == 0 {
		t.Fatal("no shadow at the front end of the car")
	}
	for x := front + 1; x+off.X < out.Rect.Dx(); x++ {
		a := shadowAlphaAt(out, off, x, floor+1)
		if a > prev {
			t.Fatalf("past the front, alpha rises from %d to %d at %d px out", prev, a, x-front)
		}
		prev = a
	}
	if prev != 0 {
		t.Errorf("the shadow is clipped: alpha %d at the canvas's right edge", prev)
	}

	// Under the middle of the body, well above the floor, the shadow is
	// lighter than at the tyres but still there.
	mid := shadowAlphaAt(out, off, 210, floor+1)
	tyre := shadowAlphaAt(out, off, int(w.cx), floor+1)
	if mid >= tyre || mid < 20 {
		t.Errorf("under the body alpha %d, under a tyre %d: want a lighter but visible ambient shadow", mid, tyre)
	}

	// Nothing is drawn above the car or far from it.
	if a := shadowAlphaAt(out, off, 210, 10); a != 0 {
		t.Errorf("alpha %d above the car, want 0", a)
	}
}

// TestCarShadowIsNotADropShadow mirrors a car left to right: its shadow
// must mirror with it. A shadow cast in any fixed direction would not.
func TestCarShadowIsNotADropShadow(t *testing.T) {
	car, wheels := shadowSideCar(t)
	const axis = 410 // mirror x ↔ axis - x; the car spans 40…370, so it stays inside
	mirror := image.NewNRGBA(car.Rect)
	for y := 0; y < car.Rect.Dy(); y++ {
		for x := 0; x < car.Rect.Dx(); x++ {
			if x2 := axis - 1 - x; x2 >= 0 && x2 < car.Rect.Dx() {
				mirror.SetNRGBA(x, y, car.NRGBAAt(x2, y))
			}
		}
	}
	floor := int(wheels[0].bottom())
	centre := func(c *image.NRGBA) float64 {
		out := shadowRun(t, c, shadow.ShadowOptions{})
		off := shadowCarOffset(t, c, out)
		var sum, sumX float64 // weighted centre of the shadow below the floor line
		for y := floor; y+off.Y < out.Rect.Dy(); y++ {
			for x := -off.X; x+off.X < out.Rect.Dx(); x++ {
				a := float64(shadowAlphaAt(out, off, x, y))
				sum += a
				sumX += a * (float64(x) + 0.5)
			}
		}
		return sumX / sum
	}
	c1, c2 := centre(car), centre(mirror)
	if d := c1 + c2 - axis; d < -1 || d > 1 {
		t.Errorf("shadow centres x=%.1f and, mirrored, x=%.1f: want them mirror images about x=%d (off by %.1f px)", c1, c2, axis/2, d)
	}
	if c1 < 195 || c1 > 215 {
		t.Errorf("shadow centre x=%.1f, want it under the car (wheels at 110 and 310)", c1)
	}
}

func TestCarShadowShadowIsBlack(t *testing.T) {
	car, _ := shadowSideCar(t)
	out := shadowRun(t, car, shadow.ShadowOptions{})
	off := shadowCarOffset(t, car, out)
	for y := car.Rect.Dy(); y+off.Y < out.Rect.Dy(); y++ {
		for x := -off.X; x+off.X < out.Rect.Dx(); x++ {
			if c := out.NRGBAAt(x+off.X, y+off.Y); c.R != 0 || c.G != 0 || c.B != 0 {
				t.Fatalf("pixel %v below the car is %v without reflection, want black", image.Pt(x, y), c)
			}
		}
	}
}

func TestCarShadowGrowsTheCanvasForACarOnTheBottomEdge(t *testing.T) {
	// The wheels' lowest points are on the image's last row.
	wheels := []shadowWheel{{80, 100, 30}, {240, 100, 30}}
	body := [][2]float64{{20, 60}, {90, 20}, {230, 20}, {300, 60}, {300, 100}, {20, 100}}
	car := shadowCar(t, 320, 130, body, wheels)
	out := shadowRun(t, car, shadow.ShadowOptions{})
	off := shadowCarOffset(t, car, out)
	if out.Rect.Dy() <= car.Rect.Dy() {
		t.Fatalf("canvas height %d, want it grown below the input's %d", out.Rect.Dy(), car.Rect.Dy())
	}
	if a := shadowAlphaAt(out, off, 80, 130); a < 200 {
		t.Errorf("alpha right under the tyre (first row of the grown canvas) %d, want ≥ 200", a)
	}
	last := out.Rect.Dy() - 1
	for x := 0; x < out.Rect.Dx(); x++ {
		if a := out.NRGBAAt(x, last).A; a != 0 {
			t.Fatalf("alpha %d at x=%d on the last row: the shadow is clipped", a, x)
		}
	}
	// Modest growth: the canvas is not more than half as tall again.
	if out.Rect.Dy() > car.Rect.Dy()*3/2 {
		t.Errorf("canvas grew from %d to %d rows, want a modest growth", car.Rect.Dy(), out.Rect.Dy())
	}
}

func TestCarShadowGrowsSidewaysForACarOnTheSideEdges(t *testing.T) {
	wheels := []shadowWheel{{40, 100, 30}, {200, 100, 30}}
	body := [][2]float64{{0, 60}, {50, 20}, {190, 20}, {240, 60}, {240, 100}, {0, 100}}
	car := shadowCar(t, 240, 200, body, wheels)
	out := shadowRun(t, car, shadow.ShadowOptions{})
	if out.Rect.Dx() <= car.Rect.Dx() {
		t.Fatalf("canvas width %d, want it grown beyond the input's %d", out.Rect.Dx(), car.Rect.Dx())
	}
	for y := 0; y < out.Rect.Dy(); y++ {
		if a, b := out.NRGBAAt(0, y).A, out.NRGBAAt(out.Rect.Dx()-1, y).A; a != 0 || b != 0 {
			t.Fatalf("alpha %d / %d on the left / right edge at row %d: the shadow is clipped", a, b, y)
		}
	}
}

func TestCarShadowRejectsImagesWithoutACar(t *testing.T) {
	faint := image.NewNRGBA(image.Rect(0, 0, 30, 20))
	for i := 3; i < len(faint.Pix); i += 4 {
		faint.Pix[i] = 40
	}
	for _, tc := range []struct {
		name string
		car  *image.NRGBA
		want string
	}{
		{"nil", nil, "the image is empty: it has no pixels"},
		{"empty", image.NewNRGBA(image.Rect(0, 0, 0, 0)), "the image is empty: it has no pixels"},
		{"transparent", image.NewNRGBA(image.Rect(0, 0, 50, 40)), "the image has no visible car: the cut-out is fully transparent"},
		{"faint", faint, "the image has no visible car: no pixel of the cut-out is more than half opaque"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := shadow.CarShadow(context.Background(), tc.car, shadow.ShadowOptions{Reflection: true})
			var e *carphoto.Error
			if !errors.As(err, &e) || e.Code != carphoto.EInvalidParams || e.Message != tc.want {
				t.Fatalf("got %v, %v; want *carphoto.Error %s %q", out, err, carphoto.EInvalidParams, tc.want)
			}
		})
	}
}

func TestCarShadowTinyImages(t *testing.T) {
	for _, size := range []image.Point{{1, 1}, {2, 1}, {1, 3}} {
		car := image.NewNRGBA(image.Rectangle{Max: size})
		for i := range car.Pix {
			car.Pix[i] = 255
		}
		for _, refl := range []bool{false, true} {
			out := shadowRun(t, car, shadow.ShadowOptions{Reflection: refl})
			shadowCarOffset(t, car, out)
			if out.Rect.Dy() > 100 || out.Rect.Dx() > 100 {
				t.Errorf("%v input: canvas %v, want a small one", size, out.Rect)
			}
		}
	}
}

// TestCarShadowOddMattes feeds shapes no car has; each must come back whole
// with its opaque pixels unchanged.
func TestCarShadowOddMattes(t *testing.T) {
	noise := image.NewNRGBA(image.Rect(0, 0, 50, 30))
	seed := uint32(1)
	for i := range noise.Pix {
		seed = seed*1664525 + 1013904223
		noise.Pix[i] = uint8(seed >> 24)
	}
	opaque := func(w, h int) *image.NRGBA {
		m := image.NewNRGBA(image.Rect(0, 0, w, h))
		for i := range m.Pix {
			m.Pix[i] = 255
		}
		return m
	}
	checker := image.NewNRGBA(image.Rect(0, 0, 40, 40))
	for y := 0; y < 40; y++ {
		for x := (y % 2); x < 40; x += 2 {
			checker.SetNRGBA(x, y, color.NRGBA{200, 100, 50, 255})
		}
	}
	side, _ := shadowSideCar(t)
	offset := side.SubImage(image.Rect(20, 10, 420, 260)).(*image.NRGBA) // bounds not at (0,0)
	for name, car := range map[string]*image.NRGBA{
		"noise": noise, "row": opaque(100, 1), "column": opaque(1, 100),
		"full frame": opaque(60, 40), "checkerboard": checker, "sub-image": offset,
	} {
		for _, refl := range []bool{false, true} {
			out := shadowRun(t, car, shadow.ShadowOptions{Reflection: refl})
			flat := image.NewNRGBA(image.Rect(0, 0, car.Rect.Dx(), car.Rect.Dy()))
			for y := 0; y < car.Rect.Dy(); y++ {
				copy(flat.Pix[y*flat.Stride:], car.Pix[y*car.Stride:y*car.Stride+4*car.Rect.Dx()])
			}
			if out.Rect.Dx() < flat.Rect.Dx() || out.Rect.Dy() < flat.Rect.Dy() {
				t.Fatalf("%s: canvas %v smaller than the input %v", name, out.Rect, car.Rect)
			}
			shadowCarOffset(t, flat, out)
		}
	}
}

func TestCarShadowStopsWhenCancelled(t *testing.T) {
	car, _ := shadowSideCar(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := shadow.CarShadow(ctx, car, shadow.ShadowOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

// BenchmarkCarShadow12MP runs on 12-megapixel cut-outs, the size of a
// phone photo: a synthetic 4000×3000 side view and, when the dataset is
// present, cars-seg-0010 (a real matte) scaled 8× to 3840×2880.
func BenchmarkCarShadow12MP(b *testing.B) {
	s := 4000.0 / 420
	wheels := []shadowWheel{{110 * s, 150 * s, 30 * s}, {310 * s, 150 * s, 30 * s}}
	var body [][2]float64
	for _, p := range [][2]float64{{40, 90}, {120, 40}, {290, 40}, {370, 90}, {370, 165}, {40, 165}} {
		body = append(body, [2]float64{p[0] * s, p[1] * s})
	}
	cars := []struct {
		name string
		car  func(testing.TB) *image.NRGBA
	}{
		{"synthetic", func(testing.TB) *image.NRGBA { return shadowFastCar(4000, 3000, body, wheels) }},
		{"cars-seg-0010x8", func(tb testing.TB) *image.NRGBA {
			small := shadowDatasetCutout(tb, "cars-seg-0010")
			big := image.NewNRGBA(image.Rect(0, 0, 8*small.Rect.Dx(), 8*small.Rect.Dy()))
			xdraw.BiLinear.Scale(big, big.Rect, small, small.Rect, xdraw.Src, nil)
			return big
		}},
	}
	for _, c := range cars {
		b.Run(c.name, func(b *testing.B) {
			car := c.car(b)
			for _, refl := range []bool{false, true} {
				name := "shadow"
				if refl {
					name = "reflection"
				}
				b.Run(name, func(b *testing.B) {
					cpu := shadowCPUTime()
					for b.Loop() {
						if _, err := shadow.CarShadow(context.Background(), car, shadow.ShadowOptions{Reflection: refl}); err != nil {
							b.Fatal(err)
						}
					}
					// The machine is shared: CPU time per call says more
					// than wall time when other work competes for the cores.
					b.ReportMetric(float64(shadowCPUTime()-cpu)/float64(b.N), "cpu-ns/op")
				})
			}
		})
	}
}

// shadowCPUTime is the process's user + system CPU time so far.
func shadowCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// shadowFastCar is shadowCar without anti-aliasing, quick enough for 12 MP.
func shadowFastCar(w, h int, body [][2]float64, wheels []shadowWheel) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			px, py := float64(x)+0.5, float64(y)+0.5
			switch {
			case shadowInWheel(wheels, px, py):
				img.SetNRGBA(x, y, color.NRGBA{200, 20, 30, 255})
			case shadowInPolygon(body, px, py):
				img.SetNRGBA(x, y, color.NRGBA{20, uint8(min(40+y, 255)), uint8(max(230-y, 0)), 255})
			}
		}
	}
	return img
}

// shadowDatasetCutout combines a cars-seg photo with its ground-truth mask into
// an RGBA cut-out, skipping the test when the dataset is absent.
func shadowDatasetCutout(tb testing.TB, name string) *image.NRGBA {
	tb.Helper()
	dir := datasets.Set(tb, "cars-seg")
	photo := imgtest.DecodeFile(tb, filepath.Join(dir, "images", name+".jpg"))
	mask := imgtest.DecodeFile(tb, filepath.Join(dir, "masks", name+".png"))
	b := photo.Bounds()
	car := image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			r, g, bl, _ := photo.At(b.Min.X+x, b.Min.Y+y).RGBA()
			m, _, _, _ := mask.At(b.Min.X+x, b.Min.Y+y).RGBA()
			car.SetNRGBA(x, y, color.NRGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), uint8(m >> 8)})
		}
	}
	return car
}

// shadowSampleCutout is the product's cut-out (cutout.Cut) of a shipped
// sample, docs/samples/name, shrunk first to at most width px wide.
func shadowSampleCutout(tb testing.TB, name string, width int) *image.NRGBA {
	tb.Helper()
	img := imgtest.DecodeFile(tb, imgtest.SamplePath(name))
	if b := img.Bounds(); b.Dx() > width {
		small := image.NewRGBA(image.Rect(0, 0, width, b.Dy()*width/b.Dx()))
		xdraw.CatmullRom.Scale(small, small.Rect, img, b, xdraw.Src, nil)
		img = small
	}
	car, err := cutout.Cut(context.Background(), img)
	if err != nil {
		tb.Fatal(err)
	}
	return car
}

// TestCarShadowOnRealCutouts runs real cut-outs: the shipped samples' (a
// front three-quarter view and a side-front view, cut out by the product),
// and, where the shared sets are here (CARPHOTO_DATASETS; README.md, "Data
// sets"), side, three-quarter and front views of cars-seg with their
// labelled masks. The car stays bit-identical, the tyre resting lowest
// gets a dark shadow right under it, and nothing is clipped.
func TestCarShadowOnRealCutouts(t *testing.T) {
	type realCutout struct {
		name string
		cut  func(t *testing.T) *image.NRGBA
	}
	cutouts := []realCutout{
		{"car.jpg", func(t *testing.T) *image.NRGBA { return shadowSampleCutout(t, "car.jpg", 1600) }},
		{"listing.jpg", func(t *testing.T) *image.NRGBA { return shadowSampleCutout(t, "listing.jpg", 1600) }},
	}
	if datasets.Present(t, "cars-seg") {
		for _, name := range []string{"cars-seg-0000", "cars-seg-0010", "cars-seg-0018", "cars-seg-0020", "cars-seg-0024"} {
			cutouts = append(cutouts, realCutout{name, func(t *testing.T) *image.NRGBA { return shadowDatasetCutout(t, name) }})
		}
	} else {
		t.Logf("cars-seg not at %s: the samples only", datasets.Dir())
	}
	for _, c := range cutouts {
		t.Run(c.name, func(t *testing.T) {
			car := c.cut(t)
			out := shadowRun(t, car, shadow.ShadowOptions{Reflection: true})
			off := shadowCarOffset(t, car, out)
			// The lowest solid pixel of the car, and the car's columns.
			lx, ly := 0, -1
			x0, x1 := car.Rect.Dx(), 0
			for y := 0; y < car.Rect.Dy(); y++ {
				for x := 0; x < car.Rect.Dx(); x++ {
					if a := car.NRGBAAt(x, y).A; a >= 128 {
						lx, ly = x, y
					}
					if car.NRGBAAt(x, y).A > 0 {
						x0, x1 = min(x0, x), max(x1, x+1)
					}
				}
			}
			shadowNoColourBeside(t, out, off, x0, x1)
			if a := shadowAlphaAt(out, off, lx, ly+1); a < 150 {
				t.Errorf("alpha %d right under the car's lowest point %v, want ≥ 150", a, image.Pt(lx, ly))
			}
			last := out.Rect.Dy() - 1
			for x := 0; x < out.Rect.Dx(); x++ {
				if a := out.NRGBAAt(x, last).A; a != 0 {
					t.Fatalf("alpha %d at x=%d on the last row: clipped", a, x)
				}
			}
		})
	}
}
