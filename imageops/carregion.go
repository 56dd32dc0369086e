package imageops

import (
	"context"
	"fmt"
	"image"

	"carphoto/imageops/carseg"
	"carphoto/imageops/vehicles"
)

// The chosen car's region: the car-class segmenter
// (imageops/carseg) runs on the crop around the chosen car's box, and the
// car's gate is its car and bus cells there, worked on the segmenter's own
// grid (a cell is a few photo pixels across):
//
//   - only inside the car's box grown by gateMargin: the region of the car
//     runs on into a car parked behind it or beside it;
//   - only the connected parts overlapping the box with at least
//     minPartShare of the largest's cells: a piece of another car alone in
//     the corner of the box is not kept;
//   - a person in the car (peopleInCar, by the detector's box) and any hole the
//     car encloses (a driver behind the glass, a window showing the
//     background) are car, and so is any cell but a person's between car
//     cells along both its row and its column (fillSpans);
//   - dilated by regionDilate cells, as DeepLab's edges are coarse (the
//     cut-out network's matte draws the outline; the region only gates it),
//     but never into a person who is not in the car: a person standing in
//     front of the car is cut out of it (scene.occluded).
//
// Where the box holds under minRegionShare of car or bus cells (a truck:
// VOC has no truck), the gate is the box less the people (scene.boxGate).

// regionSide is the segmenter's input side on the crop: the crop is
// mostly car, so the car fills more of it than carseg.Side assumes of a
// whole photo; 321 costs two thirds of 385 (the 12 MP car-shadow's budget,
// docs/research/benchmarks-log.md).
const regionSide = 321

const (
	minRegionShare = 0.25
	minPartShare   = 0.05
	regionDilate   = 4
)

// minOccludedShare and frontInset are scene.occluded's: the share of the
// car region's cells people in front of the car must cover, and the share
// of the box's width at each end where a person is taken to stand beside
// the car. Not tuned: set by eye on four validation photos of
// plates-web-cc0 (0027 and 0139 a person in front, 0060 and 0183 beside).
const (
	minOccludedShare = 0.05
	frontInset       = 0.1
)

// cell values of the region grid.
const (
	cellOut    = iota // outside the car's grown box, or background
	cellCar           // the car's region
	cellPerson        // a person not in the car
)

// carRegion is the chosen car's region over its crop: the segmenter's
// grid of the crop with each cell cellCar, cellPerson or cellOut, and the
// grid's mapping back to the photo.
type carRegion struct {
	grid     *carseg.Map // Class: Car where the gate keeps, Background elsewhere
	occluded bool
}

// segmentRegion runs the segmenter on img's crop and returns the chosen
// car's region there, or nil where the box holds little car or bus
// (minRegionShare).
func (s *scene) segmentRegion(ctx context.Context, img image.Image, car vehicles.Object, crop, frame image.Rectangle) (*carRegion, error) {
	m, err := carseg.SegmentAt(ctx, subImage(img, crop), regionSide)
	if err != nil {
		return nil, fmt.Errorf("segment car: %w", err)
	}
	return regionOf(m, car.Box, grow(car.Box, gateMargin, frame), s.peopleInCar(car.Box)), nil
}

// gridRect is photo rectangle r in m's cells, the cells whose centres lie
// in r.
func gridRect(m *carseg.Map, r image.Rectangle) image.Rectangle {
	cell := func(v, o int, s float64, n int) int {
		return min(max(int(float64(v-o)/s+0.5), 0), n)
	}
	return image.Rect(cell(r.Min.X, m.Origin.X, m.Sx, m.W), cell(r.Min.Y, m.Origin.Y, m.Sy, m.H),
		cell(r.Max.X, m.Origin.X, m.Sx, m.W), cell(r.Max.Y, m.Origin.Y, m.Sy, m.H))
}

// regionOf is the chosen car's region in the class map m of its crop: box
// the car's box, limit the box grown by gateMargin, inCarBoxes the boxes of
// the people in the car; nil where box holds little car or bus.
func regionOf(m *carseg.Map, box, limit image.Rectangle, inCarBoxes []image.Rectangle) *carRegion {
	w, h := m.W, m.H
	lim := gridRect(m, limit)
	inBox := gridRect(m, box)
	cells := make([]uint8, w*h)
	vehicleInBox := 0
	for y := lim.Min.Y; y < lim.Max.Y; y++ {
		for x := lim.Min.X; x < lim.Max.X; x++ {
			i := y*w + x
			switch c := m.Class[i]; {
			case carseg.IsVehicle(c):
				cells[i] = cellCar
				if (image.Point{x, y}).In(inBox) {
					vehicleInBox++
				}
			case carseg.IsPerson(c):
				cells[i] = cellPerson
			}
		}
	}
	if float64(vehicleInBox) < minRegionShare*float64(inBox.Dx()*inBox.Dy()) {
		return nil
	}
	for _, b := range inCarBoxes {
		g := gridRect(m, b).Intersect(lim)
		for y := g.Min.Y; y < g.Max.Y; y++ {
			for x := g.Min.X; x < g.Max.X; x++ {
				if cells[y*w+x] == cellPerson {
					cells[y*w+x] = cellCar
				}
			}
		}
	}
	keepLargeParts(cells, w, lim, inBox)
	fillHoles(cells, w, lim)
	fillSpans(cells, w, lim)
	r := &carRegion{occluded: occluded(cells, w, lim, inBox)}
	dilated := dilate(cells, w, lim, regionDilate)
	r.grid = &carseg.Map{W: w, H: h, Sx: m.Sx, Sy: m.Sy, Origin: m.Origin, Class: make([]carseg.Class, w*h)}
	for i, c := range dilated {
		if c == cellCar {
			r.grid.Class[i] = carseg.Car
		}
	}
	return r
}

// neighbours4 are the four cells next to a cell.
var neighbours4 = [4]image.Point{{1, 0}, {-1, 0}, {0, 1}, {0, -1}}

// keepLargeParts keeps of the car cells within lim the 4-connected parts
// overlapping inBox with at least minPartShare of the largest part's cells
// there; the others become cellOut.
func keepLargeParts(cells []uint8, w int, lim, inBox image.Rectangle) {
	label := make([]int32, len(cells))
	var sizes []int // cells of each part inside inBox, by label-1
	var stack []image.Point
	for y := lim.Min.Y; y < lim.Max.Y; y++ {
		for x := lim.Min.X; x < lim.Max.X; x++ {
			if cells[y*w+x] != cellCar || label[y*w+x] != 0 {
				continue
			}
			sizes = append(sizes, 0)
			l := int32(len(sizes))
			label[y*w+x] = l
			stack = append(stack[:0], image.Point{x, y})
			for len(stack) > 0 {
				p := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if p.In(inBox) {
					sizes[l-1]++
				}
				for _, d := range neighbours4 {
					q := p.Add(d)
					if q.In(lim) && cells[q.Y*w+q.X] == cellCar && label[q.Y*w+q.X] == 0 {
						label[q.Y*w+q.X] = l
						stack = append(stack, q)
					}
				}
			}
		}
	}
	largest := 0
	for _, n := range sizes {
		largest = max(largest, n)
	}
	for i, l := range label {
		if l != 0 && (sizes[l-1] == 0 || float64(sizes[l-1]) < minPartShare*float64(largest)) {
			cells[i] = cellOut
		}
	}
}

// fillHoles makes car every cell within lim that is not car and cannot be
// reached from lim's edge through cells that are not car (4-connected): a
// hole the car encloses, a driver behind the glass or a window's view.
func fillHoles(cells []uint8, w int, lim image.Rectangle) {
	outside := make([]bool, len(cells))
	var stack []image.Point
	seed := func(x, y int) {
		if i := y*w + x; cells[i] != cellCar && !outside[i] {
			outside[i] = true
			stack = append(stack, image.Point{x, y})
		}
	}
	for x := lim.Min.X; x < lim.Max.X; x++ {
		seed(x, lim.Min.Y)
		seed(x, lim.Max.Y-1)
	}
	for y := lim.Min.Y; y < lim.Max.Y; y++ {
		seed(lim.Min.X, y)
		seed(lim.Max.X-1, y)
	}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, d := range neighbours4 {
			if q := p.Add(d); q.In(lim) {
				seed(q.X, q.Y)
			}
		}
	}
	for y := lim.Min.Y; y < lim.Max.Y; y++ {
		for x := lim.Min.X; x < lim.Max.X; x++ {
			if !outside[y*w+x] {
				cells[y*w+x] = cellCar
			}
		}
	}
}

// fillSpans makes car every cell within lim, other than a person's, that
// lies between car cells both along its row and along its column: a bite
// the segmenter took out of the car's outline (a black bonnet reflecting
// the sky, cars-seg-0169) is filled, while the ground between the wheels,
// with no car under it, is not.
func fillSpans(cells []uint8, w int, lim image.Rectangle) {
	rowLo, rowHi := make([]int, lim.Dy()), make([]int, lim.Dy())
	colLo, colHi := make([]int, lim.Dx()), make([]int, lim.Dx())
	for i := range rowLo {
		rowLo[i], rowHi[i] = lim.Max.X, lim.Min.X-1
	}
	for i := range colLo {
		colLo[i], colHi[i] = lim.Max.Y, lim.Min.Y-1
	}
	for y := lim.Min.Y; y < lim.Max.Y; y++ {
		for x := lim.Min.X; x < lim.Max.X; x++ {
			if cells[y*w+x] == cellCar {
				ry, cx := y-lim.Min.Y, x-lim.Min.X
				rowLo[ry], rowHi[ry] = min(rowLo[ry], x), max(rowHi[ry], x)
				colLo[cx], colHi[cx] = min(colLo[cx], y), max(colHi[cx], y)
			}
		}
	}
	for y := lim.Min.Y; y < lim.Max.Y; y++ {
		ry := y - lim.Min.Y
		for x := max(rowLo[ry], lim.Min.X); x <= rowHi[ry]; x++ {
			cx := x - lim.Min.X
			if i := y*w + x; cells[i] == cellOut && y >= colLo[cx] && y <= colHi[cx] {
				cells[i] = cellCar
			}
		}
	}
}

// occluded reports whether people not in the car stand in front of it:
// their cells inside the car's box, away from its left and right ends
// (frontInset of its width: a person beside the car overlaps them), with no
// car under them in their column (a person behind the car has the car in
// front of their legs) cover at least minOccludedShare of the car's cells.
func occluded(cells []uint8, w int, lim, inBox image.Rectangle) bool {
	inset := int(frontInset*float64(inBox.Dx()) + 0.5)
	inner := image.Rect(inBox.Min.X+inset, inBox.Min.Y, inBox.Max.X-inset, inBox.Max.Y)
	car, front := 0, 0
	for x := lim.Min.X; x < lim.Max.X; x++ {
		carBelow := false
		for y := lim.Max.Y - 1; y >= lim.Min.Y; y-- {
			switch cells[y*w+x] {
			case cellCar:
				car++
				carBelow = true
			case cellPerson:
				if !carBelow && (image.Point{x, y}).In(inner) {
					front++
				}
			}
		}
	}
	return car > 0 && float64(front) >= minOccludedShare*float64(car)
}

// dilate returns cells with the car grown by n cells (a square) within
// lim, never over a person not in the car.
func dilate(cells []uint8, w int, lim image.Rectangle, n int) []uint8 {
	// Separable: along rows into tmp, then along columns.
	tmp := make([]bool, len(cells))
	for y := lim.Min.Y; y < lim.Max.Y; y++ {
		for x := lim.Min.X; x < lim.Max.X; x++ {
			for dx := -n; dx <= n; dx++ {
				if xx := x + dx; xx >= lim.Min.X && xx < lim.Max.X && cells[y*w+xx] == cellCar {
					tmp[y*w+x] = true
					break
				}
			}
		}
	}
	out := make([]uint8, len(cells))
	for y := lim.Min.Y; y < lim.Max.Y; y++ {
		for x := lim.Min.X; x < lim.Max.X; x++ {
			i := y*w + x
			if cells[i] == cellPerson {
				out[i] = cellPerson
				continue
			}
			for dy := -n; dy <= n; dy++ {
				if yy := y + dy; yy >= lim.Min.Y && yy < lim.Max.Y && tmp[yy*w+x] {
					out[i] = cellCar
					break
				}
			}
		}
	}
	return out
}
