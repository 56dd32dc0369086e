// Package vehicles finds the vehicles and people in a photo with
// PP-PicoDet-S 320 (PaddleDetection's COCO detector: an ESNet backbone, a
// CSP-PAN neck and a GFL head), run in Go on the project's inference kit:
// the photo stretched to 320×320, the head's class scores and box-side
// distributions decoded into boxes, then non-maximum suppression per class
// and again among the vehicles.
// The studio chooses its car among the vehicles (car, truck and bus, one
// class for it: the detector calls some SUVs trucks) and refuses a photo
// with none; motorcycles are kept for plates.
package vehicles

import (
	"context"
	"fmt"
	"image"
	"math"
	"slices"
	"sort"

	"carphoto/imageops/internal/nn"
)

// Class is a COCO class, by its index in the detector's 80.
type Class int

// The classes the service uses.
const (
	Person     Class = 0
	Bicycle    Class = 1
	Car        Class = 2
	Motorcycle Class = 3
	Bus        Class = 5
	Truck      Class = 7
)

// Classes is the number of classes the detector scores.
const Classes = 80

// String is the class's COCO name.
func (c Class) String() string {
	if c < 0 || int(c) >= len(cocoNames) {
		return fmt.Sprintf("class %d", int(c))
	}
	return cocoNames[c]
}

// Vehicle reports whether c is a car, truck or bus: what the studio cuts
// out as "the car".
func (c Class) Vehicle() bool { return c == Car || c == Truck || c == Bus }

// Object is one thing the detector found.
type Object struct {
	Class Class
	// Score is the class's probability, MinScore to 1.
	Score float64
	// Box is the object's box in the photo's pixels, within its bounds.
	Box image.Rectangle
}

// MinScore is the lowest score Detect keeps.
const MinScore = 0.3

// nmsIoU is the overlap from which a weaker box of the same class is
// dropped (PaddleDetection's MultiClassNMS for PicoDet: 0.6).
const nmsIoU = 0.6

// Side is the detector's input: the photo is stretched to Side×Side.
const Side = 320

// The head: levels at these strides (40², 20², 10² and 5² anchors), each
// box side a distribution over bins distances 0..bins−1 strides.
var strides = [4]int{8, 16, 32, 64}

const bins = 8

// PaddleDetection's normalisation for PicoDet, blue first: (v − mean)/std.
var (
	mean = [3]float32{103.53, 116.28, 123.675}
	std  = [3]float32{57.375, 57.12, 58.395}
)

// Detect returns the objects of img scoring at least MinScore, strongest
// first. It checks ctx between layers.
func Detect(ctx context.Context, img image.Image) ([]Object, error) {
	b := img.Bounds()
	if b.Empty() {
		return nil, fmt.Errorf("vehicle detection: empty image")
	}
	var gain, offset [3]float32
	for c := range 3 {
		gain[c], offset[c] = 1/std[c], -mean[c]/std[c]
	}
	x := nn.Photo(img, Side, Side, gain, offset)
	boxes, err := detect(ctx, x)
	nn.Free(x)
	if err != nil {
		return nil, err
	}
	sx, sy := float64(b.Dx())/Side, float64(b.Dy())/Side
	objs := make([]Object, len(boxes))
	for i, d := range boxes {
		r := image.Rect(b.Min.X+int(math.Round(d.x0*sx)), b.Min.Y+int(math.Round(d.y0*sy)),
			b.Min.X+int(math.Round(d.x1*sx)), b.Min.Y+int(math.Round(d.y1*sy)))
		objs[i] = Object{Class: d.class, Score: d.score, Box: r.Intersect(b)}
	}
	return objs, nil
}

// box is a detection in the network's Side×Side pixels.
type box struct {
	class          Class
	score          float64
	x0, y0, x1, y1 float64
}

// detect runs the network on x (3×Side×Side, normalised) and decodes its
// boxes.
func detect(ctx context.Context, x *nn.Tensor) ([]box, error) {
	p, err := embeddedProgram()
	if err != nil {
		return nil, err
	}
	outs, err := p.run(ctx, x)
	if err != nil {
		return nil, err
	}
	defer nn.Free(outs...)
	return suppress(decode(outs, MinScore)), nil
}

// decode returns a box for each anchor of the head's outputs (finest level
// first) whose best class scores at least threshold: the anchor of level
// stride s at (x, y) has its centre at ((x+½)s, (y+½)s), and each side
// (left, top, right, bottom) lies s × the expectation of the softmax of its
// bins logits (GFL's distribution integral) from it, clipped to the input.
func decode(outs []*nn.Tensor, threshold float64) []box {
	var boxes []box
	var dist [4]float64
	for l, t := range outs {
		s := float64(strides[l])
		n := t.H * t.W
		for i := range n {
			best, top := 0, t.Data[i]
			for c := 1; c < Classes; c++ {
				if v := t.Data[c*n+i]; v > top {
					best, top = c, v
				}
			}
			score := sigmoid(float64(top))
			if score < threshold {
				continue
			}
			for side := range 4 {
				var logits [bins]float64
				hi := math.Inf(-1)
				for k := range bins {
					logits[k] = float64(t.Data[(Classes+side*bins+k)*n+i])
					hi = max(hi, logits[k])
				}
				var sum, moment float64
				for k, v := range logits {
					e := math.Exp(v - hi)
					sum += e
					moment += float64(k) * e
				}
				dist[side] = moment / sum * s
			}
			cx, cy := (float64(i%t.W)+0.5)*s, (float64(i/t.W)+0.5)*s
			boxes = append(boxes, box{class: Class(best), score: score,
				x0: max(cx-dist[0], 0), y0: max(cy-dist[1], 0), x1: min(cx+dist[2], Side), y1: min(cy+dist[3], Side)})
		}
	}
	return boxes
}

func sigmoid(v float64) float64 { return 1 / (1 + math.Exp(-v)) }

// suppress returns boxes strongest first, less each box overlapping a
// stronger one of its class by more than nmsIoU (PaddleDetection's
// per-class suppression), then less each vehicle box overlapping a stronger
// vehicle box of another class as much: car, truck and bus are one class
// for the studio (Class.Vehicle), and the detector often scores one vehicle
// as a car and again as a weaker truck, whose box, a little larger, Main
// would choose. The per-class pass comes first so that a box it drops
// stays dropped when the box that dropped it is then merged away.
func suppress(boxes []box) []box {
	sort.SliceStable(boxes, func(i, j int) bool { return boxes[i].score > boxes[j].score })
	kept := suppressWhere(boxes, func(a, b Class) bool { return a == b })
	return suppressWhere(kept, func(a, b Class) bool { return a.Vehicle() && b.Vehicle() })
}

// suppressWhere returns boxes (strongest first) less each box overlapping a
// kept stronger one by more than nmsIoU where same(its class, theirs).
func suppressWhere(boxes []box, same func(a, b Class) bool) []box {
	var kept []box
	for _, b := range boxes {
		if !slices.ContainsFunc(kept, func(k box) bool { return same(k.class, b.class) && iou(k, b) > nmsIoU }) {
			kept = append(kept, b)
		}
	}
	return kept
}

// iou is the intersection over union of two boxes.
func iou(a, b box) float64 {
	ix := max(0, min(a.x1, b.x1)-max(a.x0, b.x0))
	iy := max(0, min(a.y1, b.y1)-max(a.y0, b.y0))
	inter := ix * iy
	union := (a.x1-a.x0)*(a.y1-a.y0) + (b.x1-b.x0)*(b.y1-b.y0) - inter
	if union <= 0 {
		return 0
	}
	return inter / union
}

// Main returns the photo's car among objs: of the vehicles (Class.Vehicle),
// the one with the largest box area times centrality times score, where
// centrality falls from 1 at the frame's centre to 0.25 at its corners (by
// the box's centre), the rule by which the cut-out keeps its one car
// (imageops/cutout's mainBlob), so a second car at the edge of the frame
// loses to the one in the middle unless it is much larger. The score keeps
// a weak box drawn over two cars, or over a car and the street behind it,
// from winning by its size over the sure box of one car. ok is false when
// objs hold no vehicle.
func Main(objs []Object, frame image.Rectangle) (car Object, ok bool) {
	best := -1.0
	w, h := float64(frame.Dx()), float64(frame.Dy())
	for _, o := range objs {
		if !o.Class.Vehicle() {
			continue
		}
		dx := (float64(o.Box.Min.X+o.Box.Max.X)/2 - float64(frame.Min.X) - w/2) / (w / 2)
		dy := (float64(o.Box.Min.Y+o.Box.Max.Y)/2 - float64(frame.Min.Y) - h/2) / (h / 2)
		if s := o.Score * float64(o.Box.Dx()*o.Box.Dy()) * (1 - 0.375*(dx*dx+dy*dy)); s > best {
			car, best, ok = o, s, true
		}
	}
	return car, ok
}
