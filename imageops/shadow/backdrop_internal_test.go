package shadow

import (
	"context"
	"image"
	"image/color"
	"testing"
)

// However small the car, the scaled cut-out stays within about the
// backdrop's size: a 3×3 car blown up to 80% of a 1000-pixel-wide
// backdrop is not 3+2×2 edge pixels × 267 wide.
func TestBackdropCarIsBoundedByTheBackdrop(t *testing.T) {
	for _, size := range []int{1, 3, 40} {
		car := image.NewNRGBA(image.Rect(0, 0, 200, 200))
		for y := 100; y < 100+size; y++ {
			for x := 100; x < 100+size; x++ {
				car.SetNRGBA(x, y, color.NRGBA{200, 0, 0, 255})
			}
		}
		gr, ok := findGround(car)
		if !ok {
			t.Fatalf("%d×%d car: no ground", size, size)
		}
		const W, H = 1000, 800
		f := carFactor(gr.box, W, H, Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5})
		scaled, err := backdropCar(context.Background(), car, gr.box, W, H, f)
		if err != nil {
			t.Fatal(err)
		}
		if w, h := scaled.Rect.Dx(), scaled.Rect.Dy(); w > W*12/10 || h > H*12/10 {
			t.Errorf("%d×%d car scaled to %d×%d, want within 1.2 × the %d×%d backdrop", size, size, w, h, W, H)
		}
	}
}
