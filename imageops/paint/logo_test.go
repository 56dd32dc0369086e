package paint

import (
	"context"
	"image"
	"image/color"
	"math"
	"testing"

	"carphoto"
	"carphoto/imageops/plates"
)

// logoDesign returns a w×h design painted by paint at every pixel.
func logoDesign(w, h int, paint func(x, y int) color.NRGBA) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, paint(x, y))
		}
	}
	return img
}

var (
	logoRed  = color.NRGBA{210, 20, 30, 255}
	logoBlue = color.NRGBA{20, 40, 200, 255}
)

// logoTwoColour is a 2:1 design, red on the left and blue on the right.
func logoTwoColour() *image.NRGBA {
	return logoDesign(200, 100, func(x, _ int) color.NRGBA {
		if x < 100 {
			return logoRed
		}
		return logoBlue
	})
}

// logoNear reports whether c is within 60 of want in RGB.
func logoNear(c color.RGBA, want color.NRGBA) bool {
	dr, dg, db := float64(c.R)-float64(want.R), float64(c.G)-float64(want.G), float64(c.B)-float64(want.B)
	return math.Sqrt(dr*dr+dg*dg+db*db) < 60
}

// logoShowsDesign reports whether c is the red or the blue of
// logoTwoColour, however dimmed to match a dark scene.
func logoShowsDesign(c color.RGBA) bool {
	r, g, b := float64(c.R), float64(c.G), float64(c.B)
	return r > 40 && r > 2.5*max(g, b) || b > 40 && b > 2.5*max(r, g)
}

// logoPlateAspect is the plate's width over height as PlaceLogo measures it.
func logoPlateAspect(q plates.Quad) float64 {
	d := func(a, b plates.Point) float64 { return math.Hypot(b.X-a.X, b.Y-a.Y) }
	return (d(q[0], q[1]) + d(q[3], q[2])) / (d(q[0], q[3]) + d(q[1], q[2]))
}

func TestPlaceLogoCornersOnTheQuad(t *testing.T) {
	quadrants := [4]color.NRGBA{{220, 30, 30, 255}, {30, 200, 40, 255}, {30, 40, 220, 255}, {230, 210, 20, 255}}
	for _, sh := range renderShapes {
		t.Run(sh.name, func(t *testing.T) {
			img := renderScene()
			renderPlate(img, sh.quad, 1)
			// A design of the plate's own shape fills it corner to corner;
			// each quarter has its colour, clockwise from the top left.
			h := 400
			w := int(math.Round(float64(h) * logoPlateAspect(sh.quad)))
			design := logoDesign(w, h, func(x, y int) color.NRGBA {
				switch {
				case y < h/2 && x < w/2:
					return quadrants[0]
				case y < h/2:
					return quadrants[1]
				case x >= w/2:
					return quadrants[2]
				}
				return quadrants[3]
			})
			out, err := PlaceLogo(context.Background(), img, []plates.Quad{sh.quad}, nil, design)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := convexClockwise(sh.quad)
			for i, c := range quadrants {
				nearest, spill := math.Inf(1), math.Inf(-1)
				b := sh.quad.Bounds().Inset(-4).Intersect(out.Rect)
				for y := b.Min.Y; y < b.Max.Y; y++ {
					for x := b.Min.X; x < b.Max.X; x++ {
						if !logoNear(out.RGBAAt(x, y), c) {
							continue
						}
						cx, cy := float64(x)+0.5, float64(y)+0.5
						nearest = min(nearest, math.Hypot(cx-sh.quad[i].X, cy-sh.quad[i].Y))
						spill = max(spill, p.signedDistance(cx, cy))
					}
				}
				// A pixel centre is at best 0.7 px from a corner: 1.5 px means
				// the design's corner is within 1 px of the quad's.
				if nearest > 1.5 {
					t.Errorf("corner %d: the design's corner colour comes no closer than %.2f px to the quad's corner; want ≤ 1.5", i, nearest)
				}
				if spill > 1 {
					t.Errorf("corner %d: the design spills %.2f px outside the quad; want ≤ 1", i, spill)
				}
			}
		})
	}
}

func TestPlaceLogoKeepsAspectAndShows(t *testing.T) {
	// The acceptance bar: a two-colour design covers at least a third of
	// the plate on every plate shape (on real photos, of the labelled box).
	for _, sh := range renderShapes {
		t.Run(sh.name, func(t *testing.T) {
			img := renderScene()
			renderPlate(img, sh.quad, 1)
			out, err := PlaceLogo(context.Background(), img, []plates.Quad{sh.quad}, nil, logoTwoColour())
			if err != nil {
				t.Fatal(err)
			}
			b := sh.quad.Bounds().Intersect(out.Rect)
			shown, area := 0, 0
			for y := b.Min.Y; y < b.Max.Y; y++ {
				for x := b.Min.X; x < b.Max.X; x++ {
					if !renderInside(sh.quad, x, y) {
						continue
					}
					area++
					if c := out.RGBAAt(x, y); logoNear(c, logoRed) || logoNear(c, logoBlue) {
						shown++
					}
				}
			}
			if frac := float64(shown) / float64(area); frac < 1.0/3 {
				t.Errorf("the design shows on %.0f%% of the plate; want at least a third", 100*frac)
			}
		})
	}
	t.Run("aspect", func(t *testing.T) {
		// A 2:1 dark-blue design with a white square in its middle, on a
		// 400×90 plate: the blue fills the plate (padded in its own
		// colour), and the square stays square, 45×45, not stretched.
		q := renderRect(100, 150, 400, 90)
		img := renderScene()
		renderPlate(img, q, 1)
		out, err := PlaceLogo(context.Background(), img, []plates.Quad{q}, nil, logoSquareOnBlue())
		if err != nil {
			t.Fatal(err)
		}
		minX, minY, maxX, maxY := math.MaxInt, math.MaxInt, math.MinInt, math.MinInt
		for y := 140; y < 250; y++ {
			for x := 90; x < 510; x++ {
				if renderGrey(out, x, y) > 200 {
					minX, minY, maxX, maxY = min(minX, x), min(minY, y), max(maxX, x), max(maxY, y)
				}
			}
		}
		w, h := float64(maxX-minX+1), float64(maxY-minY+1)
		if math.Abs(w-45) > 2 || math.Abs(h-45) > 2 {
			t.Errorf("a 2:1 design's 50×50 square shows %.0f×%.0f px on a 400×90 plate; want 45×45", w, h)
		}
	})
}

// logoBlueGround is the ground of logoSquareOnBlue.
var logoBlueGround = color.NRGBA{16, 40, 110, 255}

// logoSquareOnBlue is a 200×100 dark-blue design with a white 50×50
// square in its middle.
func logoSquareOnBlue() *image.NRGBA {
	return logoDesign(200, 100, func(x, y int) color.NRGBA {
		if x >= 75 && x < 125 && y >= 25 && y < 75 {
			return color.NRGBA{255, 255, 255, 255}
		}
		return logoBlueGround
	})
}

// TestPlaceLogoFillsTheQuad checks what a dealer sees on a plate of
// another shape than the design's (a 4.7:1 design on 2:1 and 6:1 plates,
// upright, turned and in perspective): the design covers the whole plate
// in its own colours, no pale base around it, and the strip of the hidden
// shape beyond the plate takes the colours of the car around it, not the
// old plate's white.
func TestPlaceLogoFillsTheQuad(t *testing.T) {
	// White lettering (a bar) on dark blue, 520×110: a European plate's
	// shape.
	design := logoDesign(520, 110, func(x, y int) color.NRGBA {
		if x >= 60 && x < 460 && y >= 40 && y < 70 {
			return color.NRGBA{255, 255, 255, 255}
		}
		return logoBlueGround
	})
	body := color.RGBA{150, 30, 30, 255}  // the boot lid above the plate
	bumper := color.RGBA{45, 45, 50, 255} // the bumper below it
	for _, tc := range []struct {
		name string
		quad plates.Quad
	}{
		{"2:1", renderRect(200, 150, 180, 90)},
		{"6:1", renderRect(120, 170, 360, 60)},
		{"2:1 turned", renderRotated(300, 200, 180, 90, 8)},
		{"2:1 perspective", plates.Quad{{X: 200, Y: 150}, {X: 390, Y: 160}, {X: 388, Y: 240}, {X: 202, Y: 250}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := convexClockwise(tc.quad)
			hide, _ := convexClockwise(plates.HideOf(tc.quad))
			cx := (p[0].Y + p[1].Y + p[2].Y + p[3].Y) / 4
			img := image.NewRGBA(image.Rect(0, 0, 600, 400))
			for y := range 400 {
				for x := range 600 {
					c := body
					if float64(y)+0.5 > cx {
						c = bumper
					}
					img.SetRGBA(x, y, c)
				}
			}
			// The old plate is a little larger than its quad, as a
			// detector's quad often falls short of the plate's edge.
			renderPlate(img, plates.Quad(p.offset(3)), 1)
			out, err := PlaceLogo(context.Background(), img, []plates.Quad{tc.quad}, nil, design)
			if err != nil {
				t.Fatal(err)
			}
			// Where each photo pixel falls on the design, padded to the
			// plate's shape (design pixels; the padding outside 520×110).
			toPlate := squareToQuad(plates.Quad(p)).inverse()
			a, da := logoPlateAspect(tc.quad), 520.0/110
			onDesign := func(px, py float64) (x, y float64) {
				u, v, _ := toPlate.apply(px, py)
				if da > a {
					span := a / da
					return u * 520, (v - (1-span)/2) / span * 110
				}
				span := da / a
				return (u - (1-span)/2) / span * 520, v * 110
			}
			var inQuad, designed, ring, offColour int
			b := hide.bounds().Intersect(out.Rect)
			for y := b.Min.Y; y < b.Max.Y; y++ {
				for x := b.Min.X; x < b.Max.X; x++ {
					px, py := float64(x)+0.5, float64(y)+0.5
					c := out.RGBAAt(x, y)
					switch dq, dh := p.signedDistance(px, py), hide.signedDistance(px, py); {
					case dq <= -1.5:
						dx, dy := onDesign(px, py)
						bar := dx >= 60 && dx < 460 && dy >= 40 && dy < 70
						near := dx >= 54 && dx < 466 && dy >= 34 && dy < 76
						if near && !bar || bar && !(dx >= 66 && dx < 454 && dy >= 46 && dy < 64) {
							continue // the bar's anti-aliased edge
						}
						inQuad++
						if bar && c.R > 230 && c.G > 230 && c.B > 230 || !bar && logoNear(c, logoBlueGround) {
							designed++
						}
					case dq >= 1.5 && dh <= -1.5:
						ring++
						want := body
						if py > cx {
							want = bumper
						}
						if d := math.Max(math.Abs(float64(c.R)-float64(want.R)), math.Max(math.Abs(float64(c.G)-float64(want.G)), math.Abs(float64(c.B)-float64(want.B)))); d > 25 {
							offColour++
						}
					}
				}
			}
			if frac := float64(designed) / float64(inQuad); frac < 0.99 {
				t.Errorf("%.1f%% of the plate's quad shows the design's colour there (blue ground and padding, white bar); want it all (≥ 99%%)", 100*frac)
			}
			if ring == 0 {
				t.Fatal("no pixel between the quad and the hidden shape's edge")
			}
			if frac := float64(offColour) / float64(ring); frac > 0.05 {
				t.Errorf("%.1f%% of the strip between the plate and the hidden shape's edge differs from the car around it by more than 25 levels; want ≤ 5%%", 100*frac)
			}
		})
	}
}

func TestPlaceLogoTransparentPartsShowPlateNotCharacters(t *testing.T) {
	q := renderRect(100, 150, 400, 90)
	img := renderScene()
	renderPlate(img, q, 1)
	// A 4:1 design (it fills the 400×90 plate but for 10 px bars) with a
	// transparent hole in the middle, over the old characters.
	design := logoDesign(400, 100, func(x, y int) color.NRGBA {
		if x > 100 && x < 300 && y > 20 && y < 80 {
			return color.NRGBA{}
		}
		return logoBlue
	})
	out, err := PlaceLogo(context.Background(), img, []plates.Quad{q}, nil, design)
	if err != nil {
		t.Fatal(err)
	}
	// The design is letterboxed to 360×90 from x = 120, so the hole spans
	// x 210..390, y 168..222 on the plate; look well inside.
	var sum, sum2, n float64
	for y := 174; y < 216; y++ {
		for x := 216; x < 384; x++ {
			g := renderGrey(out, x, y)
			sum, sum2, n = sum+g, sum2+g*g, n+1
		}
	}
	mean := sum / n
	sd := math.Sqrt(sum2/n - mean*mean)
	if sd > 3 || mean < 200 {
		t.Errorf("through the hole: grey mean %.0f, spread %.1f; want the plate's flat white (mean ≥ 200, spread ≤ 3), not its characters", mean, sd)
	}
}

func TestPlaceLogoFiltersWhenMinified(t *testing.T) {
	// One-pixel black and white stripes, shrunk twenty times: a design
	// sampled without filtering would show moiré or random stripes; a
	// filtered one is an even grey.
	design := logoDesign(4000, 1000, func(x, _ int) color.NRGBA {
		if x%2 == 0 {
			return color.NRGBA{0, 0, 0, 255}
		}
		return color.NRGBA{255, 255, 255, 255}
	})
	q := renderRotated(300, 200, 200, 50, 8)
	img := renderScene()
	renderPlate(img, q, 1)
	out, err := PlaceLogo(context.Background(), img, []plates.Quad{q}, nil, design)
	if err != nil {
		t.Fatal(err)
	}
	var sum, sum2, n float64
	for y := 185; y < 215; y++ {
		for x := 230; x < 370; x++ {
			g := renderGrey(out, x, y)
			sum, sum2, n = sum+g, sum2+g*g, n+1
		}
	}
	mean := sum / n
	sd := math.Sqrt(sum2/n - mean*mean)
	if sd > 6 || math.Abs(mean-127) > 20 {
		t.Errorf("minified stripes: grey mean %.0f, spread %.1f; want an even grey (127 ± 20, spread ≤ 6)", mean, sd)
	}
}

func TestPlaceLogoFiltersUnderStrongPerspective(t *testing.T) {
	// A plate seen at a steep angle: its far side is a third as tall as
	// its near side, so the design scaled for the near side shrinks about
	// threefold there. Stripes 4 px apart at the near side, 1.4 px at the
	// far side, must turn into an even grey there, not into moiré
	// (measured: spread 17 with the halved levels, 49 without).
	design := logoDesign(1000, 200, func(_, y int) color.NRGBA {
		if y/3%2 == 0 {
			return color.NRGBA{0, 0, 0, 255}
		}
		return color.NRGBA{255, 255, 255, 255}
	})
	img := image.NewRGBA(image.Rect(0, 0, 500, 260))
	for i := range img.Pix {
		img.Pix[i] = 128
	}
	q := plates.Quad{{X: 40, Y: 60}, {X: 460, Y: 112}, {X: 460, Y: 158}, {X: 40, Y: 200}}
	out, err := PlaceLogo(context.Background(), img, []plates.Quad{q}, nil, design)
	if err != nil {
		t.Fatal(err)
	}
	var sum, sum2, n float64
	for y := 120; y < 150; y++ {
		for x := 430; x < 452; x++ {
			g := renderGrey(out, x, y)
			sum, sum2, n = sum+g, sum2+g*g, n+1
		}
	}
	mean := sum / n
	sd := math.Sqrt(sum2/n - mean*mean)
	if sd > 25 {
		t.Errorf("stripes at the far side: grey spread %.1f around %.0f; want ≤ 25 (an even grey, no moiré)", sd, mean)
	}
}

func TestPlaceLogoMatchesSceneBrightness(t *testing.T) {
	white := logoDesign(200, 50, func(int, int) color.NRGBA { return color.NRGBA{255, 255, 255, 255} })
	for _, tc := range []struct {
		name           string
		scene, plate   uint8
		minGrey, maxGr float64
	}{
		{"daylight", 150, 235, 235, 256},
		{"night", 25, 80, 0, 130},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := image.NewRGBA(image.Rect(0, 0, 400, 300))
			for i := range img.Pix {
				img.Pix[i] = tc.scene
			}
			q := renderRect(100, 120, 200, 50)
			for y := 120; y < 170; y++ {
				for x := 100; x < 300; x++ {
					img.SetRGBA(x, y, color.RGBA{tc.plate, tc.plate, tc.plate, 255})
				}
			}
			out, err := PlaceLogo(context.Background(), img, []plates.Quad{q}, nil, white)
			if err != nil {
				t.Fatal(err)
			}
			if g := renderGrey(out, 200, 145); g < tc.minGrey || g > tc.maxGr {
				t.Errorf("a white design on a plate of grey %d shows grey %.0f; want %.0f..%.0f", tc.plate, g, tc.minGrey, tc.maxGr)
			}
		})
	}
}

func TestPlaceLogoEdgeCases(t *testing.T) {
	ctx := context.Background()
	img := renderScene()
	q := []plates.Quad{renderRect(100, 150, 400, 90)}
	if _, err := PlaceLogo(ctx, img, q, nil, image.NewRGBA(image.Rect(0, 0, 0, 0))); carphoto.ErrorCode(err) != carphoto.EInvalidParams {
		t.Errorf("empty design: got %v, want invalid_params", err)
	}
	out, err := PlaceLogo(ctx, img, nil, nil, logoTwoColour())
	if err != nil || string(out.Pix) != string(img.Pix) {
		t.Errorf("no plates: err %v; want the photo back unchanged", err)
	}
	c, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := PlaceLogo(c, img, q, nil, logoTwoColour()); err == nil {
		t.Error("cancelled context: got no error")
	}
}

func BenchmarkPlaceLogo12MP(b *testing.B) {
	img := renderYCbCr()
	q := []plates.Quad{renderRotated(2000, 2000, 400, 88, 3)}
	design := logoTwoColour()
	big := logoDesign(2000, 440, func(x, y int) color.NRGBA { return color.NRGBA{uint8(x), uint8(y), 90, 255} })
	for _, d := range []struct {
		name   string
		design image.Image
	}{{"design200x100", design}, {"design2000x440", big}} {
		b.Run(d.name, func(b *testing.B) {
			renderReportCPU(b, func() {
				if _, err := PlaceLogo(context.Background(), img, q, nil, d.design); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// TestPlaceLogoBlursUnsurePlates checks that a detection too doubtful for
// a design (a badge, a lamp) is blurred as blur-plates' default style
// blurs it, with no trace of the design, while a sure plate beside it gets
// the design.
func TestPlaceLogoBlursUnsurePlates(t *testing.T) {
	sure, unsure := renderRect(60, 60, 200, 60), renderRect(330, 250, 200, 60)
	img := renderScene()
	renderPlate(img, sure, 1)
	renderPlate(img, unsure, 2)
	out, err := PlaceLogo(context.Background(), img, []plates.Quad{sure}, []plates.Quad{unsure}, logoSquareOnBlue())
	if err != nil {
		t.Fatal(err)
	}
	blurred, err := HidePlates(context.Background(), img, []plates.Quad{unsure}, StyleBlur)
	if err != nil {
		t.Fatal(err)
	}
	_, w := plateReach(unsure)
	for y := w.Min.Y; y < w.Max.Y; y++ {
		for x := w.Min.X; x < w.Max.X; x++ {
			if got, want := out.RGBAAt(x, y), blurred.RGBAAt(x, y); got != want {
				t.Fatalf("unsure plate: pixel (%d,%d) is %v, blur-plates' blur gives %v", x, y, got, want)
			}
		}
	}
	if c := out.RGBAAt(160, 70); !logoNear(c, logoBlueGround) {
		t.Errorf("sure plate: pixel (160,70) is %v; want the design's blue", c)
	}
}
