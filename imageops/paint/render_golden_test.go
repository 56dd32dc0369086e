package paint

import (
	"context"
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"carphoto/imageops/plates"
)

var renderUpdate = flag.Bool("update-render", false, "rewrite the golden images of plate rendering in testdata/render")

// TestRenderGolden compares each style and the logo on a tilted plate in
// perspective with the reviewed pictures in testdata/render: any change to
// how a hidden plate looks shows up here. Rewrite them with
// go test ./imageops/paint -run RenderGolden -update-render, and look at them.
func TestRenderGolden(t *testing.T) {
	img := renderScene().SubImage(image.Rect(60, 40, 380, 240)).(*image.RGBA)
	q := plates.Quad{{X: 120, Y: 120}, {X: 300, Y: 96}, {X: 296, Y: 150}, {X: 126, Y: 164}}
	// A sub-image, so the quad (in its coordinates) is moved to the
	// output's, which start at 0,0.
	renderPlate(img, q, 3)
	cases := map[string]func() (*image.RGBA, error){
		"logo": func() (*image.RGBA, error) {
			return PlaceLogo(context.Background(), img, []plates.Quad{q}, nil, logoTwoColour())
		},
	}
	for _, style := range renderStyles {
		cases[string(style)] = func() (*image.RGBA, error) {
			return HidePlates(context.Background(), img, []plates.Quad{q}, style)
		}
	}
	for name, render := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := render()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "render", name+".png")
			if *renderUpdate {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				f, err := os.Create(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := png.Encode(f, got); err != nil {
					t.Fatal(err)
				}
				return
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatalf("%v (run with -update-render to create it)", err)
			}
			defer f.Close()
			want, err := png.Decode(f)
			if err != nil {
				t.Fatal(err)
			}
			if want.Bounds() != got.Rect {
				t.Fatalf("bounds %v, want %v", got.Rect, want.Bounds())
			}
			// Allow rounding differences between platforms (fused
			// multiply-add), not a visible change.
			off := 0
			for y := range got.Rect.Dy() {
				for x := range got.Rect.Dx() {
					wr, wg, wb, _ := want.At(x, y).RGBA()
					g := got.RGBAAt(x, y)
					for _, d := range []int{int(g.R) - int(wr>>8), int(g.G) - int(wg>>8), int(g.B) - int(wb>>8)} {
						if d > 2 || d < -2 {
							off++
							break
						}
					}
				}
			}
			if off > got.Rect.Dx()*got.Rect.Dy()/1000 {
				t.Errorf("%d pixels differ from %s by more than 2 levels; look at the change and rewrite with -update-render if it is meant", off, path)
			}
		})
	}
}
