package plates

import (
	"carphoto/imageops/internal/nn"
	"context"
	"fmt"
	"image"
	"math"
	"slices"
)

// workSide is the long side, in pixels, of the image the network sees. A
// 12-megapixel photo is shrunk to 640×480, a 400-pixel web photo enlarged:
// the network was trained at this scale (train/plates/train.py, WORK).
const workSide = 640

// stride is the network's output cell size in working pixels.
const stride = 4

// decoding holds the decoder's settings.
type decoding struct {
	threshold float64 // a cell's plate probability to propose a box
	detect    float64 // the strongest cell's probability to report a plate
	nmsIoU    float64 // boxes overlapping a stronger one this much are dropped
	marginH   float64 // added above and below, as a fraction of the box height
	marginW   float64 // added left and right, as a fraction of the box width (plus half the vertical margin)
}

// tuned was set on the validation split (train/plates/README.md), never on
// held-out photos.
var tuned = decoding{threshold: 0.3, detect: 0.45, nmsIoU: 0.35, marginH: 0.5, marginW: 0.15}

// Detect finds every licence plate in img (displayed orientation) and
// returns each as a perspective quad, clockwise from top-left, with a score
// in [0,1]. The quad includes a margin around the plate so that a loose
// crop of the plate still lies inside it. An image with no plate gives an
// empty slice.
func Detect(ctx context.Context, img image.Image) ([]Plate, error) {
	b := img.Bounds()
	if b.Empty() {
		return []Plate{}, nil
	}
	n, err := embeddedNet()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, s, err := n.run(ctx, img)
	if err != nil {
		return nil, err
	}
	return tuned.plates(out, b, s), nil
}

// run prepares img and runs the network on it; s is the scale from photo
// to working pixels.
func (n *net) run(ctx context.Context, img image.Image) (out *nn.Tensor, s float64, err error) {
	var x *nn.Tensor
	x, s = prepare(img)
	out, err = n.forward(ctx, x)
	return out, s, err
}

// plates decodes the network's output for a photo with bounds b.
func (dc decoding) plates(out *nn.Tensor, b image.Rectangle, s float64) []Plate {
	found := []Plate{}
	validW := int(math.Ceil(float64(b.Dx())*s/stride)) + 1
	validH := int(math.Ceil(float64(b.Dy())*s/stride)) + 1
	for _, d := range dc.decode(out, min(validW, out.W), min(validH, out.H)) {
		found = append(found, dc.plate(d, b, s))
	}
	return found
}

// box is a candidate in working pixels.
type box struct {
	score          float64
	x0, y0, x1, y1 float64
}

func (a box) iou(b box) float64 {
	ix := max(0, min(a.x1, b.x1)-max(a.x0, b.x0))
	iy := max(0, min(a.y1, b.y1)-max(a.y0, b.y0))
	i := ix * iy
	u := (a.x1-a.x0)*(a.y1-a.y0) + (b.x1-b.x0)*(b.y1-b.y0) - i
	if u <= 0 {
		return 0
	}
	return i / u
}

// decode turns the head's output into plate boxes. Cells above the
// proposal threshold form 8-connected groups, one per plate (the network
// fires on the middle of a plate); a group's box is the score-weighted
// median of its cells' boxes, so one badly regressed cell does not move it,
// and the group is kept when its strongest cell clears the detection
// threshold. Groups whose boxes overlap a stronger one are dropped.
func (dc decoding) decode(out *nn.Tensor, validW, validH int) []box {
	logit := float32(math.Log(dc.threshold / (1 - dc.threshold)))
	n := out.H * out.W
	label := make([]int32, validW*validH)
	var groups []box
	var stack []int
	var cells []box
	for start := range label {
		sy, sx := start/validW, start%validW
		if label[start] != 0 || out.Data[sy*out.W+sx] < logit {
			continue
		}
		label[start] = 1
		stack = append(stack[:0], start)
		cells = cells[:0]
		for len(stack) > 0 {
			k := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			y, x := k/validW, k%validW
			i := y*out.W + x
			cx := float64(x*stride) + stride/2 - 0.5
			cy := float64(y*stride) + stride/2 - 0.5
			d := func(c int) float64 { return math.Exp(float64(out.Data[c*n+i])) * stride }
			cells = append(cells, box{
				score: 1 / (1 + math.Exp(-float64(out.Data[i]))),
				x0:    cx - d(1), y0: cy - d(2), x1: cx + d(3), y1: cy + d(4),
			})
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					yy, xx := y+dy, x+dx
					if yy < 0 || yy >= validH || xx < 0 || xx >= validW {
						continue
					}
					j := yy*validW + xx
					if label[j] == 0 && out.Data[yy*out.W+xx] >= logit {
						label[j] = 1
						stack = append(stack, j)
					}
				}
			}
		}
		g := fuse(cells)
		if g.score >= dc.detect {
			groups = append(groups, g)
		}
	}
	slices.SortFunc(groups, func(a, b box) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	var keep []box
next:
	for _, g := range groups {
		for _, k := range keep {
			if g.iou(k) >= dc.nmsIoU {
				continue next
			}
		}
		keep = append(keep, g)
	}
	return keep
}

// fuse returns the per-edge score-weighted median of cells' boxes, with
// the strongest cell's score.
func fuse(cells []box) box {
	var f box
	for _, c := range cells {
		f.score = max(f.score, c.score)
	}
	edge := func(get func(box) float64) float64 {
		vals := make([][2]float64, len(cells))
		total := 0.0
		for i, c := range cells {
			vals[i] = [2]float64{get(c), c.score}
			total += c.score
		}
		slices.SortFunc(vals, func(a, b [2]float64) int {
			switch {
			case a[0] < b[0]:
				return -1
			case a[0] > b[0]:
				return 1
			}
			return 0
		})
		acc := 0.0
		for _, v := range vals {
			acc += v[1]
			if acc >= total/2 {
				return v[0]
			}
		}
		return vals[len(vals)-1][0]
	}
	f.x0 = edge(func(b box) float64 { return b.x0 })
	f.y0 = edge(func(b box) float64 { return b.y0 })
	f.x1 = edge(func(b box) float64 { return b.x1 })
	f.y1 = edge(func(b box) float64 { return b.y1 })
	return f
}

// plate maps a working-pixel box to the photo, adds the margin, and clamps
// it to the photo's bounds; Tight is the same box without the margin.
func (dc decoding) plate(d box, b image.Rectangle, s float64) Plate {
	w, h := d.x1-d.x0, d.y1-d.y0
	my := dc.marginH * h
	mx := dc.marginW*w + 0.5*my
	x0 := clamp((d.x0-mx)/s, 0, float64(b.Dx())) + float64(b.Min.X)
	x1 := clamp((d.x1+mx)/s, 0, float64(b.Dx())) + float64(b.Min.X)
	y0 := clamp((d.y0-my)/s, 0, float64(b.Dy())) + float64(b.Min.Y)
	y1 := clamp((d.y1+my)/s, 0, float64(b.Dy())) + float64(b.Min.Y)
	tx0 := clamp(d.x0/s, 0, float64(b.Dx())) + float64(b.Min.X)
	tx1 := clamp(d.x1/s, 0, float64(b.Dx())) + float64(b.Min.X)
	ty0 := clamp(d.y0/s, 0, float64(b.Dy())) + float64(b.Min.Y)
	ty1 := clamp(d.y1/s, 0, float64(b.Dy())) + float64(b.Min.Y)
	return Plate{
		Quad:  Quad{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}},
		Tight: Quad{{tx0, ty0}, {tx1, ty0}, {tx1, ty1}, {tx0, ty1}},
		Score: d.score,
	}
}

func clamp(v, lo, hi float64) float64 { return max(lo, min(v, hi)) }

// prepare resizes img so its long side is workSide (box filter when
// shrinking, bilinear when enlarging), pads it to a multiple of 32 with
// mid-grey, and normalises it as the training program does. It returns the
// tensor and the scale from photo to working pixels.
func prepare(img image.Image) (*nn.Tensor, float64) {
	b := img.Bounds()
	s := workSide / float64(max(b.Dx(), b.Dy()))
	nw := max(1, int(math.Round(float64(b.Dx())*s)))
	nh := max(1, int(math.Round(float64(b.Dy())*s)))
	t := nn.NewTensor(3, (nh+31)/32*32, (nw+31)/32*32)
	xs := axisSamples(b.Dx(), nw, b.Min.X)
	ys := axisSamples(b.Dy(), nh, b.Min.Y)
	r, g, bl := t.Plane(0), t.Plane(1), t.Plane(2)
	if m, ok := img.(*image.YCbCr); ok {
		// Average luma and chroma, then convert once per working pixel.
		// Offsets are separable in x and y for every subsampling ratio.
		o := m.Rect.Min
		yx, cx := make([][2]int, 0, 3*nw), make([]int, nw+1)
		for ox := range nw {
			cx[ox] = len(yx)
			for _, p := range xs[ox] {
				yx = append(yx, [2]int{m.YOffset(p.at, o.Y) - m.YOffset(o.X, o.Y), m.COffset(p.at, o.Y) - m.COffset(o.X, o.Y)})
			}
		}
		cx[nw] = len(yx)
		for oy := range nh {
			for ox := range nw {
				var sy, scb, scr, sw float32
				if s < 1 {
					// Shrinking: every sample weighs 1; sum in integers.
					var iy, icb, icr int
					for _, py := range ys[oy] {
						yrow, crow := m.YOffset(o.X, py.at), m.COffset(o.X, py.at)
						for _, off := range yx[cx[ox]:cx[ox+1]] {
							ci := crow + off[1]
							iy += int(m.Y[yrow+off[0]])
							icb += int(m.Cb[ci])
							icr += int(m.Cr[ci])
						}
					}
					sy, scb, scr, sw = float32(iy), float32(icb), float32(icr), float32(len(ys[oy])*(cx[ox+1]-cx[ox]))
				} else {
					for _, py := range ys[oy] {
						yrow, crow := m.YOffset(o.X, py.at), m.COffset(o.X, py.at)
						for k, off := range yx[cx[ox]:cx[ox+1]] {
							wt := xs[ox][k].weight * py.weight
							ci := crow + off[1]
							sy += wt * float32(m.Y[yrow+off[0]])
							scb += wt * float32(m.Cb[ci])
							scr += wt * float32(m.Cr[ci])
							sw += wt
						}
					}
				}
				yy, cb, cr := sy/sw, scb/sw-128, scr/sw-128
				i := oy*t.W + ox
				r[i] = norm(yy + 1.402*cr)
				g[i] = norm(yy - 0.344136*cb - 0.714136*cr)
				bl[i] = norm(yy + 1.772*cb)
			}
		}
		return t, s
	}
	px := pixelReader(img)
	for oy := range nh {
		for ox := range nw {
			var sr, sg, sb, sw float32
			for _, sy := range ys[oy] {
				for _, sx := range xs[ox] {
					cr, cg, cb := px(sx.at, sy.at)
					wt := sx.weight * sy.weight
					sr += wt * cr
					sg += wt * cg
					sb += wt * cb
					sw += wt
				}
			}
			i := oy*t.W + ox
			r[i], g[i], bl[i] = norm(sr/sw), norm(sg/sw), norm(sb/sw)
		}
	}
	return t, s
}

// norm maps 0..255 to the network's input range; mid-grey is 0.
func norm(v float32) float32 { return (v/255 - 0.5) / 0.25 }

type sample struct {
	at     int
	weight float32
}

// axisSamples lists, for each of n output positions along an axis of src
// pixels, the source positions to average: up to three evenly spread points
// inside the output pixel's footprint when shrinking (a sparse box filter:
// exact enough for detection, and a 12-megapixel photo is read at about a
// tenth of its pixels), or the two bilinear neighbours when enlarging.
func axisSamples(src, n, origin int) [][]sample {
	out := make([][]sample, n)
	scale := float64(src) / float64(n)
	for o := range out {
		if scale <= 1 {
			f := (float64(o)+0.5)*scale - 0.5
			f = clamp(f, 0, float64(src-1))
			i := int(f)
			fr := float32(f - float64(i))
			j := min(i+1, src-1)
			out[o] = []sample{{origin + i, 1 - fr}, {origin + j, fr}}
			continue
		}
		k := min(3, int(math.Ceil(scale-1e-9)))
		for s := range k {
			f := (float64(o) + (float64(s)+0.5)/float64(k)) * scale
			i := min(src-1, int(f))
			out[o] = append(out[o], sample{origin + i, 1})
		}
	}
	return out
}

// pixelReader returns a fast reader of a pixel's 8-bit RGB for the common
// decoded image types, falling back to image.Image.At.
func pixelReader(img image.Image) func(x, y int) (r, g, b float32) {
	switch m := img.(type) {
	case *image.RGBA:
		return func(x, y int) (float32, float32, float32) {
			i := m.PixOffset(x, y)
			return float32(m.Pix[i]), float32(m.Pix[i+1]), float32(m.Pix[i+2])
		}
	case *image.NRGBA:
		return func(x, y int) (float32, float32, float32) {
			i := m.PixOffset(x, y)
			a := float32(m.Pix[i+3]) / 255
			// Transparent areas read as mid-grey, as padding does.
			return float32(m.Pix[i])*a + 128*(1-a), float32(m.Pix[i+1])*a + 128*(1-a), float32(m.Pix[i+2])*a + 128*(1-a)
		}
	case *image.Gray:
		return func(x, y int) (float32, float32, float32) {
			v := float32(m.Pix[m.PixOffset(x, y)])
			return v, v, v
		}
	}
	return func(x, y int) (float32, float32, float32) {
		r, g, b, _ := img.At(x, y).RGBA()
		return float32(r >> 8), float32(g >> 8), float32(b >> 8)
	}
}

// String describes a plate for logs and the CLI's summary.
func (p Plate) String() string {
	r := p.Quad.Bounds()
	return fmt.Sprintf("plate %dx%d at (%d,%d) score %.2f", r.Dx(), r.Dy(), r.Min.X, r.Min.Y, p.Score)
}
