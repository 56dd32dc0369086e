package shadow_test

import (
	"image"
	"image/color"
	"testing"

	"carphoto/imageops/shadow"
)

// shadowReflected returns the output colour at input coordinates (x, y), and
// fails if it is transparent.
func shadowReflected(tb testing.TB, out *image.NRGBA, off image.Point, x, y int) color.NRGBA {
	tb.Helper()
	c := out.NRGBAAt(x+off.X, y+off.Y)
	if c.A == 0 {
		tb.Fatalf("no reflection at %v", image.Pt(x, y))
	}
	return c
}

func TestCarShadowReflectionMirrorsTheCar(t *testing.T) {
	car, wheels := shadowSideCar(t)
	out := shadowRun(t, car, shadow.ShadowOptions{Reflection: true})
	off := shadowCarOffset(t, car, out)
	floor := int(wheels[0].bottom())

	// Just under a tyre: the tyre's red.
	if c := shadowReflected(t, out, off, int(wheels[0].cx), floor+4); c.R <= c.G || c.R <= c.B {
		t.Errorf("4 px under the tyre the reflection is %v, want the tyre's red", c)
	}
	// Under the body, between the wheels: the body's colours mirrored row
	// by row (the body turns from blue to green downwards, so the
	// reflection turns from green to blue).
	near := shadowReflected(t, out, off, 210, floor+20) // mirrors row 160
	far := shadowReflected(t, out, off, 210, floor+28)  // mirrors row 152
	if near.G <= near.R || near.G <= near.B {
		t.Errorf("20 px under the body the reflection is %v, want the body's green", near)
	}
	if gn, gf := shadowGreenShare(near), shadowGreenShare(far); gn <= gf {
		t.Errorf("green share %.3f at 20 px and %.3f at 28 px under the body; want the mirror of the body's gradient (more green nearer)", gn, gf)
	}
	if near.A <= far.A {
		t.Errorf("reflection alpha %d at 20 px and %d at 28 px, want it fading with distance", near.A, far.A)
	}
	// It fades out before the canvas ends.
	for x := 0; x < out.Rect.Dx(); x++ {
		if a := out.NRGBAAt(x, out.Rect.Dy()-1).A; a != 0 {
			t.Fatalf("alpha %d at x=%d on the last row: the reflection is clipped", a, x)
		}
	}
}

// shadowNoColourBeside fails if a pixel of out more than 2 px left of
// column x0 or right of x1-1 (input coordinates) shows colour: beside the car
// there is black shadow only, nothing mirrored. Near-transparent pixels,
// whose colour means nothing, are let through.
func shadowNoColourBeside(tb testing.TB, out *image.NRGBA, off image.Point, x0, x1 int) {
	tb.Helper()
	for y := 0; y < out.Rect.Dy(); y++ {
		for x := 0; x < out.Rect.Dx(); x++ {
			if ix := x - off.X; ix >= x0-2 && ix < x1+2 {
				continue
			}
			if c := out.NRGBAAt(x, y); c.A >= 4 && max(c.R, c.G, c.B) >= 12 {
				tb.Fatalf("pixel %v beside the car is %v, want nothing mirrored there", image.Pt(x-off.X, y-off.Y), c)
			}
		}
	}
}

func shadowGreenShare(c color.NRGBA) float64 {
	return float64(c.G) / (float64(c.R) + float64(c.G) + float64(c.B) + 1)
}

func TestCarShadowReflectionFollowsEachContactLine(t *testing.T) {
	car, wheels := shadowThreeQuarterCar(t)
	out := shadowRun(t, car, shadow.ShadowOptions{Reflection: true})
	off := shadowCarOffset(t, car, out)
	// Under every shadowWheel, including the higher far and rear ones, the
	// reflection starts with that shadowWheel's own red.
	for _, w := range wheels {
		if c := shadowReflected(t, out, off, int(w.cx), int(w.bottom())+4); c.R <= c.G || c.R <= c.B {
			t.Errorf("4 px under the shadowWheel at x=%v the reflection is %v, want the tyre's red", w.cx, c)
		}
	}
}

func TestCarShadowReflectionOnlyWhenAsked(t *testing.T) {
	car, wheels := shadowSideCar(t)
	plain := shadowRun(t, car, shadow.ShadowOptions{})
	off := shadowCarOffset(t, car, plain)
	y := int(wheels[0].bottom()) + 4
	if c := plain.NRGBAAt(int(wheels[0].cx)+off.X, y+off.Y); c.R != 0 {
		t.Errorf("without Reflection the pixel under the tyre is %v, want black shadow only", c)
	}
}
