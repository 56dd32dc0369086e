package paint

import (
	"context"
	"image"
	"image/draw"
	"slices"

	"carphoto"
	"carphoto/imageops/plates"
)

// HidePlatesOnCar hides quads in the given style on car, a cut-out (the
// car's colours with its matte as alpha, as package cutout cuts it; quads
// in car's coordinates), on the car's own pixels. The style is painted on
// the car premultiplied by its matte, so a blur or a pixelate cell averages
// the car's colours alone, never the background the cut-out dropped, and
// every pixel it changes takes the painted colour with its alpha as it was:
// the matte is unchanged, a pixel it leaves transparent is never touched,
// so no hide reaches past the car's outline, and at the outline's soft
// edge the matte blends the hidden colour with whatever the car is stood
// on. Only the pixels around the plates are read and written.
func HidePlatesOnCar(ctx context.Context, car *image.NRGBA, quads []plates.Quad, style Style) error {
	return paintOnCar(ctx, car, quads, func(dst *image.RGBA, qs []plates.Quad, _ []int) error {
		return hidePlatesOn(ctx, dst, qs, style)
	})
}

// PlaceLogoOnCar is PlaceLogo on a cut-out, painted on the car's own
// pixels as HidePlatesOnCar paints: the design and the doubtful plates'
// blur on the car's pixels, its matte unchanged.
func PlaceLogoOnCar(ctx context.Context, car *image.NRGBA, quads, unsure []plates.Quad, logo image.Image) error {
	if logo == nil || logo.Bounds().Empty() {
		return carphoto.Errorf(carphoto.EInvalidParams, "logo is an empty image")
	}
	all := append(slices.Clip(quads), unsure...)
	return paintOnCar(ctx, car, all, func(dst *image.RGBA, qs []plates.Quad, which []int) error {
		sure, doubtful := splitAt(qs, which, len(quads))
		return placeLogoOn(ctx, dst, sure, doubtful, logo)
	})
}

// paintOnCar runs paint (as paintInPlace's) on a premultiplied crop of car
// around each group of plates, and writes back what it changed on the
// car's pixels (writeOnCar).
func paintOnCar(ctx context.Context, car *image.NRGBA, quads []plates.Quad, paint func(dst *image.RGBA, qs []plates.Quad, which []int) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, g := range plateGroups(quads, car.Rect) {
		if err := ctx.Err(); err != nil {
			return err
		}
		before := image.NewRGBA(g.r)
		draw.Draw(before, g.r, car, g.r.Min, draw.Src) // premultiplied by the matte
		after := image.NewRGBA(image.Rect(0, 0, g.r.Dx(), g.r.Dy()))
		copy(after.Pix, before.Pix)
		if err := paint(after, translateQuads(g.of(quads), g.r.Min), g.quads); err != nil {
			return err
		}
		after.Rect = before.Rect // same layout, back in the car's coordinates
		writeOnCar(car, before, after, g.writes)
	}
	return nil
}

// maxAlphaLoss bounds how much less alpha a painted pixel may have than
// the car's own before its colour is not trusted: a colour divided by an
// 8-bit alpha a is known to within ±½/a, and shown at the car's alpha,
// so a painted alpha of at least an eighth of it keeps the error shown
// within 4 levels.
const maxAlphaLoss = 8

// writeOnCar writes into car, within r, the colour of every pixel of after
// (premultiplied) that differs from before, where car is not transparent:
// after's colour divided by after's alpha, car's alpha kept. A pixel the
// painting left with too little alpha to tell its colour (maxAlphaLoss:
// under a blur, or a design's reflected margin, of the background almost
// alone) takes the mean colour of its neighbours that have one, spread
// inwards from them.
func writeOnCar(car *image.NRGBA, before, after *image.RGBA, r image.Rectangle) {
	r = r.Intersect(car.Rect).Intersect(after.Rect)
	if r.Empty() {
		return
	}
	w := r.Dx()
	unset := make([]bool, w*r.Dy()) // a car pixel painted with too little alpha, its colour still to find
	var todo []image.Point
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			o := car.PixOffset(x, y)
			c := car.Pix[o : o+4 : o+4]
			if c[3] == 0 {
				continue
			}
			a, b := after.PixOffset(x, y), before.PixOffset(x, y)
			pa, pb := after.Pix[a:a+4:a+4], before.Pix[b:b+4:b+4]
			if pa[0] == pb[0] && pa[1] == pb[1] && pa[2] == pb[2] && pa[3] == pb[3] {
				continue
			}
			if uint32(pa[3])*maxAlphaLoss < uint32(c[3]) {
				unset[(y-r.Min.Y)*w+x-r.Min.X] = true
				todo = append(todo, image.Pt(x, y))
				continue
			}
			al := uint32(pa[3])
			for k := range 3 {
				c[k] = uint8(min(255, (uint32(pa[k])*255+al/2)/al))
			}
		}
	}
	// The pixels painted with too little alpha, a ring at a time from
	// those with a colour: each the mean of its set neighbours in car.
	for len(todo) > 0 {
		var next, done []image.Point
		var colours [][3]uint8
		for _, p := range todo {
			var sum [3]uint32
			n := uint32(0)
			for _, d := range [8]image.Point{{-1, -1}, {0, -1}, {1, -1}, {-1, 0}, {1, 0}, {-1, 1}, {0, 1}, {1, 1}} {
				q := p.Add(d)
				if !q.In(car.Rect) {
					continue
				}
				if q.In(r) && unset[(q.Y-r.Min.Y)*w+q.X-r.Min.X] {
					continue
				}
				o := car.PixOffset(q.X, q.Y)
				if car.Pix[o+3] == 0 {
					continue
				}
				sum[0], sum[1], sum[2] = sum[0]+uint32(car.Pix[o]), sum[1]+uint32(car.Pix[o+1]), sum[2]+uint32(car.Pix[o+2])
				n++
			}
			if n == 0 {
				next = append(next, p)
				continue
			}
			done = append(done, p)
			colours = append(colours, [3]uint8{uint8((sum[0] + n/2) / n), uint8((sum[1] + n/2) / n), uint8((sum[2] + n/2) / n)})
		}
		if len(done) == 0 {
			return // no car pixel with a colour touches them: left as they were
		}
		for i, p := range done {
			o := car.PixOffset(p.X, p.Y)
			copy(car.Pix[o:o+3], colours[i][:])
			unset[(p.Y-r.Min.Y)*w+p.X-r.Min.X] = false
		}
		todo = next
	}
}
