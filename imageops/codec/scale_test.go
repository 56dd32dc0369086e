package codec

import (
	"context"
	"image"
	"image/color"
	"math/rand/v2"
	"testing"
)

// At an exact ratio each output pixel is the mean of its block; a
// one-pixel checkerboard turns into an even grey, not into stripes.
func TestFitPixelsAveragesBlocks(t *testing.T) {
	src := image.NewYCbCr(image.Rect(10, 20, 410, 320), image.YCbCrSubsampleRatio444)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range src.Y {
		src.Y[i] = uint8(r.IntN(256))
		src.Cb[i], src.Cr[i] = 128, 128
	}
	got, err := FitPixels(context.Background(), src, 200*150)
	if err != nil {
		t.Fatal(err)
	}
	out := got.(*image.NRGBA)
	if out.Rect.Dx() != 200 || out.Rect.Dy() != 150 {
		t.Fatalf("size %v, want 200×150", out.Rect)
	}
	worst := 0
	for y := range 150 {
		for x := range 200 {
			sum := 0
			for _, d := range []image.Point{{0, 0}, {1, 0}, {0, 1}, {1, 1}} {
				sum += int(src.Y[src.YOffset(10+2*x+d.X, 20+2*y+d.Y)])
			}
			worst = max(worst, abs(int(out.Pix[out.PixOffset(x, y)])-sum/4))
		}
	}
	if worst > 1 {
		t.Errorf("an output pixel is %d levels off its block's mean", worst)
	}

	board := image.NewGray(image.Rect(0, 0, 301, 201))
	for y := range 201 {
		for x := range 301 {
			if (x+y)%2 == 0 {
				board.SetGray(x, y, color.Gray{255})
			}
		}
	}
	got, err = FitPixels(context.Background(), board, 301*201/7)
	if err != nil {
		t.Fatal(err)
	}
	out = got.(*image.NRGBA)
	for i := 0; i < len(out.Pix); i += 4 {
		if v := int(out.Pix[i]); v < 100 || v > 155 || out.Pix[i+3] != 255 {
			t.Fatalf("a checkerboard pixel came out %v, want an opaque grey near 128", out.Pix[i:i+4])
		}
	}
}

// Transparent pixels do not darken their neighbours, and an image that
// already fits comes back as it is.
func TestFitPixelsAlphaAndFit(t *testing.T) {
	src := image.NewNRGBA(image.Rect(0, 0, 100, 100))
	for y := range 100 {
		for x := range 100 {
			if x < 52 {
				src.SetNRGBA(x, y, color.NRGBA{200, 100, 50, 255})
			} // the right half stays transparent black
		}
	}
	got, err := FitPixels(context.Background(), src, 30*30)
	if err != nil {
		t.Fatal(err)
	}
	out := got.(*image.NRGBA)
	c := out.NRGBAAt(15, 10) // covers source columns 50 to 53⅓, two of them opaque: 60%
	if c.A < 150 || c.A > 156 || abs(int(c.R)-200) > 2 || abs(int(c.G)-100) > 2 || abs(int(c.B)-50) > 2 {
		t.Errorf("edge pixel %v, want colour (200,100,50) at alpha 153", c)
	}
	if same, _ := FitPixels(context.Background(), src, 100*100); same != image.Image(src) {
		t.Errorf("an image within the budget was copied")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := FitPixels(ctx, src, 10); err == nil {
		t.Errorf("a cancelled context did not stop the scaling")
	}
}

func abs(v int) int { return max(v, -v) }
