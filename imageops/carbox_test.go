package imageops

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"slices"
	"testing"

	xdraw "golang.org/x/image/draw"

	"carphoto/imageops/vehicles"
	"carphoto/internal/testenv/imgtest"
)

// boxTruncated names the sides of the frame the car's box reaches, in the
// order left, top, right, bottom, and none for a box clear of the edges.
func TestBoxTruncated(t *testing.T) {
	frame := image.Rect(0, 0, 1000, 600)
	for _, c := range []struct {
		box  image.Rectangle
		want []string
	}{
		{image.Rect(100, 50, 900, 550), nil},
		{image.Rect(0, 50, 900, 600), []string{"left", "bottom"}},
		{image.Rect(1, 1, 999, 599), nil},
		{image.Rect(0, 0, 1000, 600), []string{"left", "top", "right", "bottom"}},
		{image.Rect(300, 0, 1000, 400), []string{"top", "right"}},
	} {
		if got := boxTruncated(c.box, frame); !slices.Equal(got, c.want) {
			t.Errorf("box %v: %v, want %v", c.box, got, c.want)
		}
	}
}

// The gate keeps the car's box (grown by gateMargin) and a person in the
// car (a driver: inside its box, the head under its roof), and drops a
// person beside the car, one behind it whose head is at its roof, and
// everything outside the box.
func TestGateDropsPeopleBesideTheCar(t *testing.T) {
	frame := image.Rect(0, 0, 1000, 600)
	car := vehicles.Object{Class: vehicles.Car, Score: 0.9, Box: image.Rect(200, 200, 800, 500)}
	s := &scene{objs: []vehicles.Object{
		car,
		{Class: vehicles.Person, Score: 0.8, Box: image.Rect(400, 240, 480, 330)}, // behind the glass
		{Class: vehicles.Person, Score: 0.8, Box: image.Rect(720, 100, 860, 520)}, // beside the bonnet
		{Class: vehicles.Person, Score: 0.8, Box: image.Rect(600, 205, 660, 450)}, // behind the car, head at its roof
	}}
	g := s.gate(car, frame, frame)
	for _, c := range []struct {
		x, y int
		keep bool
		what string
	}{
		{500, 400, true, "the car"},
		{440, 280, true, "the driver"},
		{795, 400, false, "the person beside the car, inside the car's box"},
		{850, 400, false, "the person beside the car"},
		{630, 300, false, "the person behind the car"},
		{195, 350, true, "the margin past the box"},
		{100, 350, false, "the background"},
	} {
		if got := g.AlphaAt(c.x, c.y).A == 255; got != c.keep {
			t.Errorf("%s at (%d,%d): kept %v, want %v", c.what, c.x, c.y, got, c.keep)
		}
	}
}

// With two cars in the photo (the sample car large in the middle, a copy
// of it small in a corner) car-cutout keeps the car in the middle and
// nothing of the other: the cut-out ran on the crop around the chosen car.
func TestStudioKeepsTheChosenCarOnly(t *testing.T) {
	car := imgtest.DecodeFile(t, imgtest.SamplePath("car.jpg"))
	frame := image.NewRGBA(image.Rect(0, 0, 1600, 1000))
	draw.Draw(frame, frame.Rect, image.NewUniform(color.RGBA{126, 128, 124, 255}), image.Point{}, draw.Src)
	b := car.Bounds()
	big := image.Rect(350, 250, 350+900, 250+900*b.Dy()/b.Dx())
	small := image.Rect(1300, 40, 1300+270, 40+270*b.Dy()/b.Dx())
	xdraw.CatmullRom.Scale(frame, big, car, b, xdraw.Src, nil)
	xdraw.CatmullRom.Scale(frame, small, car, b, xdraw.Src, nil)
	var buf bytes.Buffer
	if err := png.Encode(&buf, frame); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	img, err := png.Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	cut, chosen, err := chosenCar(ctx, img)
	if err != nil {
		t.Fatal(err)
	}
	// The sample car's box read by eye, (62,50)-(420,295) of 600×399, where
	// the large copy put it.
	at := func(v, from, to int) int { return from + v*to/600 }
	want := image.Rect(at(62, big.Min.X, big.Dx()), at(50, big.Min.Y, big.Dx()), at(420, big.Min.X, big.Dx()), at(295, big.Min.Y, big.Dx()))
	if in := chosen.Box.Intersect(want); float64(in.Dx()*in.Dy()) < 0.8*float64(want.Dx()*want.Dy()) {
		t.Fatalf("chosen %v %v, want the car in the middle %v", chosen.Class, chosen.Box, want)
	}
	kept := func(r image.Rectangle) int {
		n := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if cut.NRGBAAt(x, y).A > 0 {
					n++
				}
			}
		}
		return n
	}
	if n := kept(small); n > 0 {
		t.Errorf("%d pixels of the second car kept", n)
	}
	if share := float64(kept(want)) / float64(want.Dx()*want.Dy()); share < 0.5 {
		t.Errorf("the chosen car's box is %.0f%% cut-out, want most of it", 100*share)
	}
}
