package plates

import (
	"context"
	"image"
	"math"

	"carphoto/imageops/vehicles"
)

// Source is a photo the finder reads without a full decode, as a JPEG's
// blocks can give it: the whole photo reduced for the first stage, and
// full-resolution pixels of the verifiers' windows only.
type Source interface {
	// Bounds is the photo in displayed orientation, from (0,0).
	Bounds() image.Rectangle
	// Preview is the photo reduced, and its scale (preview pixels per
	// photo pixel, at most 1). A long side of at least PreviewSide keeps
	// the first stage's input as it is from the full photo.
	Preview() (image.Image, float64)
	// Region is the photo's pixels covering r (photo coordinates,
	// clipped to Bounds), reduced by a power of two g of at most most (g
	// is returned): pixel (x, y) stands for photo pixels (g·x, g·y) to
	// (g·x+g, g·y+g). The verifiers read a window at about 3 samples an
	// input pixel; a wide window's samples lie g or more pixels apart, and
	// reading its blocks reduced saves decoding what no sample reads.
	// It may cover more than r.
	Region(r image.Rectangle, most int) (image.Image, int)
}

// PreviewSide is the long side a Source's preview needs at least: the
// first stage's working size.
func PreviewSide() int { return max(workSide, textSide) }

// DetectIn is Detect on a Source: the vehicle detector and the first
// stage run on its preview, the verifiers on full-resolution regions
// around each proposal.
func DetectIn(ctx context.Context, src Source) ([]Plate, error) {
	if src.Bounds().Empty() {
		return []Plate{}, nil
	}
	vs, err := VehiclesIn(ctx, src)
	if err != nil {
		return nil, err
	}
	return DetectInAmong(ctx, src, vs)
}

// DetectInAmong is DetectIn with the photo's vehicles already found, in
// its pixels (VehiclesIn, or vehicles.Detect on the decoded photo).
func DetectInAmong(ctx context.Context, src Source, vs []vehicles.Object) ([]Plate, error) {
	b := src.Bounds()
	if b.Empty() {
		return []Plate{}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pv, scale := src.Preview()
	return find(ctx, sight{preview: pv, scale: scale, regions: sourceRegions(src), view: view{photo: b, src: src}}, vs, nil, DefaultSettings())
}

// view is where the verifiers read a photo's pixels: the whole decoded
// photo, or a Source's regions cut for each window.
type view struct {
	photo image.Rectangle // the photo's bounds, to which samples are clamped
	img   image.Image
	px    func(x, y int) (r, g, b float32)
	src   Source
}

func wholeView(img image.Image) view {
	return view{photo: img.Bounds(), img: img, px: pixelReader(img)}
}

// at returns the pixels a window's samples read (windowSamples: within a
// pixel of the window, clamped to the photo): an image whose pixel (x, y)
// stands for photo pixels (g·x, g·y) to (g·x+g, g·y+g), g a power of two,
// and a reader of photo pixel (x, y) from it.
func (v view) at(w win) (image.Image, int, func(x, y int) (r, g, b float32)) {
	if v.src == nil {
		return v.img, 1, v.px
	}
	r := image.Rect(int(math.Floor(w.x))-1, int(math.Floor(w.y))-1, int(math.Ceil(w.x+w.w))+2, int(math.Ceil(w.y+w.h))+2)
	// A window of s photo pixels an input pixel is read reduced by up to
	// s: an input pixel then averages whole reduced pixels, as the
	// verifiers' sparse box filter averages its samples. On the held-out
	// photos (TestBlockDetectHeldOut) this finds the plates reading at
	// full resolution finds, at a third of the decoding.
	most := 1
	for s := w.w / inW; float64(most*2) <= s; {
		most *= 2
	}
	img, g := v.src.Region(r.Add(v.photo.Min).Intersect(v.photo), most)
	px := pixelReader(img)
	if g == 1 {
		return img, 1, px
	}
	b := img.Bounds()
	return img, g, func(x, y int) (float32, float32, float32) {
		return px(min(max(x/g, b.Min.X), b.Max.X-1), min(max(y/g, b.Min.Y), b.Max.Y-1))
	}
}
