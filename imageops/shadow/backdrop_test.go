package shadow_test

import (
	"context"
	"image"
	"image/color"
	"math"
	"testing"

	"carphoto/imageops/shadow"
)

// backdropWall is a plain light-grey w×h backdrop.
func backdropWall(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = 210, 210, 210, 255
	}
	return img
}

// backdropCarBounds is the box of out's coloured pixels: the synthetic
// car's red wheels and blue-green body, told from the grey backdrop and
// the black shadow (both neutral).
func backdropCarBounds(out *image.RGBA) image.Rectangle {
	var r image.Rectangle
	for y := out.Rect.Min.Y; y < out.Rect.Max.Y; y++ {
		for x := out.Rect.Min.X; x < out.Rect.Max.X; x++ {
			c := out.RGBAAt(x, y)
			if max(c.R, c.G, c.B)-min(c.R, c.G, c.B) > 60 {
				r = r.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return r
}

func TestOnBackdropStandsTheCarOnTheFloor(t *testing.T) {
	side, _ := shadowSideCar(t)
	threeQuarter, _ := shadowThreeQuarterCar(t)
	const W, H = 900, 600
	for _, tc := range []struct {
		name string
		car  *image.NRGBA
		opt  shadow.BackdropOptions
	}{
		{"side, defaults", side, shadow.BackdropOptions{Placement: shadow.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}}},
		{"side, shadow", side, shadow.BackdropOptions{Placement: shadow.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}, Shadow: true}},
		{"side, small and left, shadow", side, shadow.BackdropOptions{Placement: shadow.Placement{FloorY: 0.7, Scale: 0.4, CenterX: 0.3}, Shadow: true}},
		{"three-quarter, enlarged", threeQuarter, shadow.BackdropOptions{Placement: shadow.Placement{FloorY: 0.9, Scale: 0.95, CenterX: 0.5}, Shadow: true}},
		{"side, on the bottom edge", side, shadow.BackdropOptions{Placement: shadow.Placement{FloorY: 1, Scale: 0.6, CenterX: 0.5}, Shadow: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wall := backdropWall(W, H)
			out, err := shadow.OnBackdrop(context.Background(), tc.car, wall, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if out.Rect != image.Rect(0, 0, W, H) {
				t.Fatalf("answer %v, want the backdrop's %dx%d", out.Rect, W, H)
			}
			car := backdropCarBounds(out)
			floor := int(math.Round(tc.opt.FloorY * H))
			if d := car.Max.Y - floor; d < -2 || d > 1 {
				t.Errorf("the car's lowest row ends at y=%d, want the floor line %d (floorY %g): floating or sunk by %d px", car.Max.Y, floor, tc.opt.FloorY, -d)
			}
			if want := tc.opt.Scale * W; math.Abs(float64(car.Dx())-want) > 0.015*want+2 {
				t.Errorf("the car is %d px wide, want %.0f (scale %g)", car.Dx(), want, tc.opt.Scale)
			}
			if mid, want := float64(car.Min.X+car.Max.X)/2, tc.opt.CenterX*W; math.Abs(mid-want) > 3 {
				t.Errorf("the car is centred at x=%.1f, want %.1f", mid, want)
			}
			if c := out.RGBAAt(2, 2); c != (color.RGBA{210, 210, 210, 255}) {
				t.Errorf("backdrop corner %v, want it unchanged", c)
			}
			// Right under the tyre resting lowest: the floor is in shadow
			// with car-shadow, the backdrop itself without.
			lowX := car.Min.X
			for x := car.Min.X; x < car.Max.X; x++ {
				if c := out.RGBAAt(x, car.Max.Y-1); max(c.R, c.G, c.B)-min(c.R, c.G, c.B) > 60 {
					lowX = x
					break
				}
			}
			if car.Max.Y+1 >= H {
				return // the floor line is the bottom edge: no floor below it
			}
			below := out.RGBAAt(lowX, car.Max.Y+1)
			if tc.opt.Shadow && below.R > 150 {
				t.Errorf("floor under the car %v, want it shadowed (R ≤ 150 of 210)", below)
			}
			if !tc.opt.Shadow && below != (color.RGBA{210, 210, 210, 255}) {
				t.Errorf("floor under the car %v without a shadow, want the backdrop", below)
			}
		})
	}
}

// A car whose width at Scale would push its roof out of the backdrop (a
// tall car on a low floor line) is made smaller: the roof stays in view,
// the tyres on the floor.
func TestOnBackdropKeepsTheRoofInView(t *testing.T) {
	tall := shadowCar(t, 300, 400, [][2]float64{{40, 20}, {260, 20}, {260, 340}, {40, 340}},
		[]shadowWheel{{80, 340, 30}, {220, 340, 30}})
	const W, H = 800, 500
	opt := shadow.BackdropOptions{Placement: shadow.Placement{FloorY: 0.6, Scale: 0.9, CenterX: 0.5}, Shadow: true}
	out, err := shadow.OnBackdrop(context.Background(), tall, backdropWall(W, H), opt)
	if err != nil {
		t.Fatal(err)
	}
	car := backdropCarBounds(out)
	if car.Min.Y < int(0.1*H)-1 {
		t.Errorf("the roof is at y=%d, want at least %d below the top", car.Min.Y, int(0.1*H))
	}
	if floor := int(math.Round(0.6 * H)); car.Max.Y < floor-2 || car.Max.Y > floor+1 {
		t.Errorf("the car's lowest row ends at y=%d, want the floor line %d", car.Max.Y, floor)
	}
	if car.Dx() >= int(0.9*W) {
		t.Errorf("the car is %d px wide: not made smaller to fit", car.Dx())
	}
}

func TestOnBackdropRefusals(t *testing.T) {
	side, _ := shadowSideCar(t)
	opt := shadow.BackdropOptions{Placement: shadow.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}, Shadow: true}
	if _, err := shadow.OnBackdrop(context.Background(), image.NewNRGBA(image.Rect(0, 0, 40, 30)), backdropWall(100, 80), opt); err == nil {
		t.Error("an empty cut-out: no error")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := shadow.OnBackdrop(ctx, side, backdropWall(100, 80), opt); err == nil {
		t.Error("a cancelled context: no error")
	}
}

// A speck of background the cut-out left beside the car (here a magenta
// 3×3 blob, apart from the body) does not float on the backdrop.
func TestOnBackdropLeavesSpecksOut(t *testing.T) {
	car, _ := shadowSideCar(t)
	for y := 44; y < 47; y++ {
		for x := 364; x < 367; x++ {
			car.SetNRGBA(x, y, color.NRGBA{255, 0, 255, 255})
		}
	}
	opt := shadow.BackdropOptions{Placement: shadow.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}, Shadow: true}
	out, err := shadow.OnBackdrop(context.Background(), car, backdropWall(900, 600), opt)
	if err != nil {
		t.Fatal(err)
	}
	for y := 0; y < 600; y++ {
		for x := 0; x < 900; x++ {
			if c := out.RGBAAt(x, y); c.R > 150 && c.B > 150 && c.G < 100 {
				t.Fatalf("the speck shows at (%d, %d): %v", x, y, c)
			}
		}
	}
}

// A car that the placement would enlarge past MaxEnlarge (a small photo on
// a large backdrop) is enlarged MaxEnlarge, on the backdrop scaled down to
// keep the composition: the car at its scale of the answer's width, on
// its floor line. A car that needs less is placed as before.
func TestStandEnlargesTheCarAtMostMaxEnlarge(t *testing.T) {
	side, _ := shadowSideCar(t) // solid bounds 331 pixels wide
	place := shadow.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}
	for _, tc := range []struct {
		name   string
		W, H   int
		shrunk bool
	}{
		{"900×600: 2.2× asked, the backdrop scaled down", 900, 600, true},
		{"500×300: 1.2× asked, the backdrop kept", 500, 300, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, fit, err := shadow.Stand(context.Background(), side, backdropWall(tc.W, tc.H),
				shadow.BackdropOptions{Placement: place, Shadow: true, MaxEnlarge: shadow.MaxEnlarge})
			if err != nil {
				t.Fatal(err)
			}
			W, H := out.Rect.Dx(), out.Rect.Dy()
			if fit.Backdrop != image.Pt(W, H) {
				t.Errorf("Fit.Backdrop %v, the answer %dx%d", fit.Backdrop, W, H)
			}
			if got := W < tc.W; got != tc.shrunk {
				t.Errorf("answer %dx%d from a %dx%d backdrop: scaled down %v, want %v", W, H, tc.W, tc.H, got, tc.shrunk)
			}
			if r := float64(W) / float64(H); math.Abs(r-float64(tc.W)/float64(tc.H)) > 0.01 {
				t.Errorf("answer %dx%d: aspect %.3f, want the backdrop's", W, H, r)
			}
			if fit.Enlarge > shadow.MaxEnlarge+1e-9 {
				t.Errorf("the car enlarged %.3f×, want at most %g×", fit.Enlarge, shadow.MaxEnlarge)
			}
			if tc.shrunk && fit.Enlarge < shadow.MaxEnlarge-0.01 {
				t.Errorf("the car enlarged %.3f×, want %g× on the scaled-down backdrop", fit.Enlarge, shadow.MaxEnlarge)
			}
			if math.Abs(fit.Scale-place.Scale) > 0.005 {
				t.Errorf("Fit.Scale %.3f, want the placement's %g", fit.Scale, place.Scale)
			}
			car := backdropCarBounds(out)
			if want := fit.Scale * float64(W); math.Abs(float64(car.Dx())-want) > 0.015*want+2 {
				t.Errorf("the car is %d px wide, want %.0f (Fit.Scale %.3f of %d)", car.Dx(), want, fit.Scale, W)
			}
			if floor := int(math.Round(place.FloorY * float64(H))); car.Max.Y < floor-2 || car.Max.Y > floor+1 {
				t.Errorf("the car's lowest row ends at y=%d, want the floor line %d", car.Max.Y, floor)
			}
		})
	}
}

// Where the headroom rule makes the car smaller, Fit.Scale says so: the
// scale used, not the one asked for.
func TestStandReportsTheScaleTheHeadroomRuleLeft(t *testing.T) {
	tall := shadowCar(t, 300, 400, [][2]float64{{40, 20}, {260, 20}, {260, 340}, {40, 340}},
		[]shadowWheel{{80, 340, 30}, {220, 340, 30}})
	out, fit, err := shadow.Stand(context.Background(), tall, backdropWall(800, 500),
		shadow.BackdropOptions{Placement: shadow.Placement{FloorY: 0.6, Scale: 0.9, CenterX: 0.5}, MaxEnlarge: shadow.MaxEnlarge})
	if err != nil {
		t.Fatal(err)
	}
	car := backdropCarBounds(out)
	if fit.Scale >= 0.85 {
		t.Errorf("Fit.Scale %.3f: the headroom rule made the car %d of %d px wide", fit.Scale, car.Dx(), out.Rect.Dx())
	}
	if got := float64(car.Dx()) / float64(out.Rect.Dx()); math.Abs(got-fit.Scale) > 0.02 {
		t.Errorf("the car is %.3f of the answer's width, Fit.Scale says %.3f", got, fit.Scale)
	}
}
