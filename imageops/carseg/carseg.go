// Package carseg tells which pixels of a photo are a car, a bus or a
// person with DeepLabv3 on MobileNetV2 (Chen et al. 2017, "Rethinking
// Atrous Convolution for Semantic Image Segmentation"), trained by
// TensorFlow's DeepLab on PASCAL VOC 2012's 21 classes, as
// google-coral/test_data published it quantised to uint8 (Apache-2.0; see
// NOTICE and train/carseg). It runs in Go on the project's inference kit in
// float, on the weights dequantised. Its regions are coarse (the network
// scores a 16-pixel grid and upsamples): a gate on the cut-out's matte, not
// a matte.
package carseg

import (
	"context"
	"fmt"
	"image"
)

// Class is what a pixel shows, of the classes the studio needs.
type Class uint8

// The classes a Map holds. VOC has no truck: a truck is mostly car or bus.
const (
	Background Class = iota
	Car
	Bus
	Person
	Other // any other VOC object: a bicycle, a dog, a sofa, …
)

// voc maps PASCAL VOC's 21 class indices to Class.
var voc = [21]Class{
	0: Background, 6: Bus, 7: Car, 15: Person,
	1: Other, 2: Other, 3: Other, 4: Other, 5: Other, 8: Other, 9: Other, 10: Other,
	11: Other, 12: Other, 13: Other, 14: Other, 16: Other, 17: Other, 18: Other, 19: Other, 20: Other,
}

// Side is the network's input side Segment uses: the photo is stretched to
// Side×Side. On cars-seg's 159 photos outside the held-out split the
// car+bus region's mean IoU against the masks is 0.938 at 385 against 0.941
// at the graph's own 513 (0.929 at 321, 0.905 at 257), in a little over
// half the time (train/carseg/README.md).
const Side = 385

// MinSide and MaxSide bound SegmentAt's side, which must also be one more
// than a multiple of 16 (the network's stride: its layers then pad as
// TFLite's SAME does).
const (
	MinSide = 65
	MaxSide = 1025
)

// Map is the class of each pixel of the network's input: the photo
// stretched to W×H. Input pixel (x, y) covers the photo from Origin +
// (x·Sx, y·Sy) to Origin + ((x+1)·Sx, (y+1)·Sy).
type Map struct {
	W, H   int
	Class  []Class // Class[y·W+x]
	Sx, Sy float64
	Origin image.Point
}

// Segment returns the class map of img at Side. It checks ctx between
// layers.
func Segment(ctx context.Context, img image.Image) (*Map, error) {
	return SegmentAt(ctx, img, Side)
}

// SegmentAt returns the class map of img stretched to side×side (side −1 a
// multiple of 16, MinSide to MaxSide): the larger the side, the smaller the
// vehicles it sees, the time growing with its square.
func SegmentAt(ctx context.Context, img image.Image, side int) (*Map, error) {
	b := img.Bounds()
	if b.Empty() {
		return nil, fmt.Errorf("car segmentation: empty image")
	}
	if side < MinSide || side > MaxSide || (side-1)%16 != 0 {
		return nil, fmt.Errorf("car segmentation: side %d, want 16k+1 from %d to %d", side, MinSide, MaxSide)
	}
	n, err := embeddedNet()
	if err != nil {
		return nil, err
	}
	x := prepare(img, side)
	scores, err := n.forward(ctx, x)
	if err != nil {
		return nil, err
	}
	m := &Map{W: side, H: side, Sx: float64(b.Dx()) / float64(side), Sy: float64(b.Dy()) / float64(side), Origin: b.Min}
	m.Class = classes(scores, side)
	return m, nil
}

// At returns the class at photo pixel (x, y), the nearest input pixel's.
func (m *Map) At(x, y int) Class {
	mx := min(max(int((float64(x-m.Origin.X)+0.5)/m.Sx), 0), m.W-1)
	my := min(max(int((float64(y-m.Origin.Y)+0.5)/m.Sy), 0), m.H-1)
	return m.Class[my*m.W+mx]
}

// IsVehicle reports whether c is a car or a bus.
func IsVehicle(c Class) bool { return c == Car || c == Bus }

// IsPerson reports whether c is a person.
func IsPerson(c Class) bool { return c == Person }

// Mask returns, over the photo's rectangle r, 255 where the class keep
// accepts (IsVehicle, IsPerson) and 0 elsewhere, each photo pixel the
// class of the nearest input pixel.
func (m *Map) Mask(r image.Rectangle, keep func(Class) bool) *image.Alpha {
	a := image.NewAlpha(r)
	var tbl [Other + 1]bool
	for c := range tbl {
		tbl[c] = keep(Class(c))
	}
	cols := make([]int, r.Dx())
	for i := range cols {
		cols[i] = min(max(int((float64(r.Min.X+i-m.Origin.X)+0.5)/m.Sx), 0), m.W-1)
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		my := min(max(int((float64(y-m.Origin.Y)+0.5)/m.Sy), 0), m.H-1)
		row := m.Class[my*m.W : (my+1)*m.W]
		dst := a.Pix[(y-r.Min.Y)*a.Stride:]
		for i, mx := range cols {
			if tbl[row[mx]] {
				dst[i] = 255
			}
		}
	}
	return a
}
