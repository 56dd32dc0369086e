package plates_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	_ "image/jpeg"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"syscall"
	"testing"
	"time"

	"carphoto/imageops/internal/imgtest"
	"carphoto/imageops/plates"
)

// datasets is where the shared labelled photos live, relative to this
// package (the repository root's ../shared/datasets).
const datasets = "../../../shared/datasets"

type entry struct {
	File   string       `json:"file"`
	Width  int          `json:"width"`
	Height int          `json:"height"`
	Plates []plates.Box `json:"plates"`
	img    image.Image
}

// loadHeldOut returns up to n held-out photos of a data set that have no
// copy among its other photos (plates.Fingerprint: the web set holds the
// same photo under several names, and a copy of a training photo tests
// what the networks remember, not what they find), skipping the test when
// the shared data sets are not on this machine.
func loadHeldOut(tb testing.TB, set string, n int) []entry {
	tb.Helper()
	var out []entry
	for _, e := range copyFreeHeldOut(tb, set) {
		if len(out) == n {
			break
		}
		e.img = imgtest.DecodeFile(tb, filepath.Join(datasets, set, e.File))
		out = append(out, e)
	}
	return out
}

// copyFree holds each set's held-out entries with no copy in the other
// splits, found once per test process: it decodes every photo of the set.
var copyFree = struct {
	sync.Mutex
	sets map[string][]entry
}{sets: map[string][]entry{}}

func copyFreeHeldOut(tb testing.TB, set string) []entry {
	tb.Helper()
	copyFree.Lock()
	defer copyFree.Unlock()
	if held, ok := copyFree.sets[set]; ok {
		return held
	}
	dir := filepath.Join(datasets, set)
	data, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if errors.Is(err, os.ErrNotExist) {
		tb.Skipf("shared data sets not found at %s", datasets)
	}
	if err != nil {
		tb.Fatal(err)
	}
	var all []entry
	if err := json.Unmarshal(data, &all); err != nil {
		tb.Fatal(err)
	}
	var others []*plates.Fingerprint
	var held []entry
	var heldPrints []*plates.Fingerprint
	for _, e := range all {
		fp := plates.FingerprintOf(imgtest.DecodeFile(tb, filepath.Join(dir, e.File)))
		if plates.HeldOut(e.File) {
			held, heldPrints = append(held, e), append(heldPrints, fp)
		} else {
			others = append(others, fp)
		}
	}
	var kept []entry
	for i, e := range held {
		if !heldPrints[i].CopiedIn(others) {
			kept = append(kept, e)
		}
	}
	copyFree.sets[set] = kept
	return kept
}

// TestDetectHeldOutRecall guards the detector's quality on photos that
// training and tuning never saw: a fall in recall is a privacy leak.
// A false detection is one that overlaps neither a labelled plate nor a
// plate the labels miss that was found by eye in the held-out audit
// (docs/plates-heldout-audit.json): the dash-cam labels leave out most
// plates of other cars, and finding those is no fault. A detection the
// audit has not judged counts as false until it is judged. The floors are
// the figures measured on these photos less a small margin; they are below
// the product's bar (recall 0.97, 0.05 false per photo, see
// docs/BENCHMARKS.md) and only stop the detector getting worse.
func TestDetectHeldOutRecall(t *testing.T) {
	seen := auditedPlates(t)
	for _, tc := range []struct {
		set       string
		minRecall float64
		maxFalse  float64
	}{
		// Measured 0.857 (30 of 35) and 0.267 false per photo on these
		// 30 photos, 0.974 (38 of 39) and 0.033 on those (by the labels
		// alone, 0.400 and 0.500).
		{"plates-web-cc0", 0.80, 0.35},
		{"plates-dashcam-ro", 0.92, 0.10},
	} {
		t.Run(tc.set, func(t *testing.T) {
			checkDetections(t, loadHeldOut(t, tc.set, 30), seen, tc.minRecall, tc.maxFalse)
		})
	}
}

// auditedPlates reads the held-out audit's verdicts: for each photo, the
// detections judged by eye to be plates the labels miss.
func auditedPlates(t *testing.T) map[string][]plates.Box {
	t.Helper()
	data, err := os.ReadFile("../../docs/plates-heldout-audit.json")
	if err != nil {
		t.Fatal(err)
	}
	var verdicts []struct {
		File  string     `json:"file"`
		Box   [4]float64 `json:"box"`
		Plate bool       `json:"plate"`
	}
	if err := json.Unmarshal(data, &verdicts); err != nil {
		t.Fatal(err)
	}
	seen := map[string][]plates.Box{}
	for _, v := range verdicts {
		if v.Plate {
			b := plates.Box{X: v.Box[0], Y: v.Box[1], W: v.Box[2] - v.Box[0], H: v.Box[3] - v.Box[1]}
			seen[v.File] = append(seen[v.File], b)
		}
	}
	return seen
}

// TestDetectOtherSource guards photos of another source than the plate
// sets: the cars-seg set's 68 photos with a car that might carry a plate
// (plates of many countries in small stretched frames), whose 16 readable
// plates were boxed by eye (train/plates/cars-seg-plates.json, never
// trained on). Measured 0.875 (14 of 16) and 0.147 false per photo (0.938
// and 0.176 before the jury's second look, docs/BENCHMARKS.md); the
// verifiers before the shipped ones measured 0.875 and 0.279.
func TestDetectOtherSource(t *testing.T) {
	data, err := os.ReadFile("../../train/plates/cars-seg-plates.json")
	if err != nil {
		t.Fatal(err)
	}
	var photos []entry
	if err := json.Unmarshal(data, &photos); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(datasets, "cars-seg")
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		t.Skipf("shared data sets not found at %s", datasets)
	}
	for i := range photos {
		photos[i].img = imgtest.DecodeFile(t, filepath.Join(dir, photos[i].File))
	}
	checkDetections(t, photos, nil, 0.87, 0.25)
}

// checkDetections runs the detector on labelled photos and fails when it
// finds fewer than minRecall of their plates (at least 95% of a plate's
// box inside the quads) or makes more than maxFalse detections a photo that
// overlap no labelled plate and none of seen's (plates the labels miss, by
// photo file).
func checkDetections(t *testing.T, photos []entry, seen map[string][]plates.Box, minRecall, maxFalse float64) {
	t.Helper()
	found, total, falses := 0, 0, 0
	for _, e := range photos {
		got, err := plates.Detect(context.Background(), e.img)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range e.Plates {
			total++
			if b.CoveredBy(got) >= 0.95 {
				found++
			} else {
				t.Logf("%s: plate %+v covered %.2f", e.File, b, b.CoveredBy(got))
			}
		}
		for _, p := range got {
			if !overlapsAny(e.Plates, p.Quad) && !overlapsAny(seen[e.File], p.Quad) {
				falses++
				t.Logf("%s: false detection %v", e.File, p)
			}
		}
	}
	recall := float64(found) / float64(total)
	falsePerImage := float64(falses) / float64(len(photos))
	t.Logf("recall %.3f (%d of %d), false detections %.3f per image (%d photos)", recall, found, total, falsePerImage, len(photos))
	if recall < minRecall {
		t.Errorf("recall %.3f (%d of %d plates on %d photos), want >= %.2f", recall, found, total, len(photos), minRecall)
	}
	if falsePerImage > maxFalse {
		t.Errorf("false detections %.3f per image, want <= %.2f", falsePerImage, maxFalse)
	}
}

// TestDetectCloseUps guards plates that fill much of the frame, as in a
// dealer's close-up of a car's rear: held-out photos cropped so that a
// labelled plate spans 60% or 80% of the frame's width. The floors are the
// measured figures less a margin; without the first stage's coarse look
// these crops measured 0.682 and 0.500 (docs/BENCHMARKS.md).
func TestDetectCloseUps(t *testing.T) {
	for _, tc := range []struct {
		frac, minRecall float64
	}{
		// Measured 0.881 and 0.925 (59 and 62 of 67); 0.836 and 0.866
		// before the jury's second look.
		{0.6, 0.80},
		{0.8, 0.83},
	} {
		t.Run(fmt.Sprint(tc.frac), func(t *testing.T) {
			found, total := 0, 0
			for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
				for _, e := range loadHeldOut(t, set, 30) {
					for _, b := range e.Plates {
						img, ok := imgtest.CloseUp(e.img, b.X, b.Y, b.W, b.H, tc.frac)
						if b.W < 30 || !ok {
							continue
						}
						got, err := plates.Detect(context.Background(), img)
						if err != nil {
							t.Fatal(err)
						}
						total++
						if b.CoveredBy(got) >= 0.95 {
							found++
						} else {
							t.Logf("%s: plate %+v in %v covered %.2f", e.File, b, img.Bounds(), b.CoveredBy(got))
						}
					}
				}
			}
			recall := float64(found) / float64(total)
			t.Logf("recall %.3f (%d of %d close-ups)", recall, found, total)
			if total < 40 || recall < tc.minRecall {
				t.Errorf("recall %.3f (%d of %d close-ups), want >= %.2f of at least 40", recall, found, total, tc.minRecall)
			}
		})
	}
}

// TestDetectLargePhotos guards plates that are a small part of a large
// photo, as of a car across a dealer's lot: held-out dash-cam frames laid
// out 3×3 at their own resolution (3840×2160), where most of their plates
// are 1.3–3% of the photo's width. The floor is the measured figure less a
// margin: 0.362 (25 of 69). Most misses are plates under 15 pixels wide at
// workSide that are not among the first stage's 24 strongest proposals
// (docs/BENCHMARKS.md, "Plates small in a large photo").
func TestDetectLargePhotos(t *testing.T) {
	held := loadHeldOut(t, "plates-dashcam-ro", 54)
	found, total := 0, 0
	for i := 0; i+9 <= len(held); i += 9 {
		imgs := make([]image.Image, 9)
		for k, e := range held[i : i+9] {
			imgs[k] = e.img
		}
		img, at := imgtest.Mosaic(imgs, 3)
		got, err := plates.Detect(context.Background(), img)
		if err != nil {
			t.Fatal(err)
		}
		for k, e := range held[i : i+9] {
			for _, b := range e.Plates {
				b.X, b.Y = b.X+float64(at[k].X), b.Y+float64(at[k].Y)
				total++
				if b.CoveredBy(got) >= 0.95 {
					found++
				}
			}
		}
	}
	recall := float64(found) / float64(total)
	t.Logf("recall %.3f (%d of %d plates in %d mosaics)", recall, found, total, len(held)/9)
	if total < 60 || recall < 0.3 {
		t.Errorf("recall %.3f (%d of %d plates), want >= 0.3 of at least 60", recall, found, total)
	}
}

// TestDetectTilted guards plates in photos taken with the camera rolled:
// held-out photos turned 15° each way about their centre, each labelled
// plate turned with them (those that stay in the frame) counted found when
// 95% of its area lies inside the detected quads.
func TestDetectTilted(t *testing.T) {
	// Measured 0.842 (80 of 95); 0.828 on other photos, with copies,
	// when only the first verifier learnt from windows turned up to 25°
	// (verifier.py --roll), 0.645 when neither did.
	const minRecall = 0.80
	found, total := 0, 0
	for _, set := range []string{"plates-web-cc0", "plates-dashcam-ro"} {
		for _, e := range loadHeldOut(t, set, 20) {
			for _, deg := range []float64{-15, 15} {
				img, turn := imgtest.Rotated(e.img, deg)
				got, err := plates.Detect(context.Background(), img)
				if err != nil {
					t.Fatal(err)
				}
				for _, b := range e.Plates {
					q, ok := turned(b, turn, img.Bounds())
					if !ok {
						continue
					}
					total++
					if c := q.CoveredBy(got); c >= 0.95 {
						found++
					} else {
						t.Logf("%s turned %+.0f°: plate %+v covered %.2f", e.File, deg, b, c)
					}
				}
			}
		}
	}
	recall := float64(found) / float64(total)
	t.Logf("recall %.3f (%d of %d tilted plates)", recall, found, total)
	if total < 60 || recall < minRecall {
		t.Errorf("recall %.3f (%d of %d tilted plates), want >= %.2f of at least 60", recall, found, total, minRecall)
	}
}

// turned is box b moved by turn (a photo's rotation) as a quad, and
// whether it stays within bounds.
func turned(b plates.Box, turn func(x, y float64) (float64, float64), bounds image.Rectangle) (plates.Quad, bool) {
	var q plates.Quad
	ok := true
	for i, c := range [4][2]float64{{b.X, b.Y}, {b.X + b.W, b.Y}, {b.X + b.W, b.Y + b.H}, {b.X, b.Y + b.H}} {
		q[i].X, q[i].Y = turn(c[0], c[1])
		ok = ok && imgtest.Inside(bounds, q[i].X, q[i].Y)
	}
	return q, ok
}

func overlapsAny(boxes []plates.Box, q plates.Quad) bool {
	for _, b := range boxes {
		if b.Overlaps(q) {
			return true
		}
	}
	return false
}

// TestDetectContract checks what the renderer relies on, on real photos:
// corners clockwise from top-left, inside the photo, scores in [0,1].
func TestDetectContract(t *testing.T) {
	photos := loadHeldOut(t, "plates-dashcam-ro", 5)
	photos = append(photos, loadHeldOut(t, "plates-web-cc0", 5)...)
	for _, e := range photos {
		// An offset origin must not move the quads off the photo.
		off := image.NewRGBA(e.img.Bounds().Add(image.Pt(37, 11)))
		draw.Draw(off, off.Bounds(), e.img, e.img.Bounds().Min, draw.Src)
		for _, img := range []image.Image{e.img, off} {
			got, err := plates.Detect(context.Background(), img)
			if err != nil {
				t.Fatal(err)
			}
			b := img.Bounds()
			for _, p := range got {
				if p.Score < 0 || p.Score > 1 {
					t.Errorf("%s: score %v outside [0,1]", e.File, p.Score)
				}
				// The tight plate lies within the region to hide.
				for _, c := range p.Tight {
					if !p.Quad.Contains(c) {
						t.Errorf("%s: tight corner %v outside the quad %v", e.File, c, p.Quad)
					}
				}
				for _, q := range []plates.Quad{p.Quad, p.Tight} {
					checkQuad(t, e.File, q, b)
				}
			}
		}
	}
}

// checkQuad asserts that q lies inside b, is clockwise on screen and starts
// at its top-left corner.
func checkQuad(t *testing.T, file string, q plates.Quad, b image.Rectangle) {
	t.Helper()
	for _, c := range q {
		if c.X < float64(b.Min.X) || c.X > float64(b.Max.X) || c.Y < float64(b.Min.Y) || c.Y > float64(b.Max.Y) {
			t.Errorf("%s: corner %v outside the photo %v", file, c, b)
		}
	}
	if area := signedArea(q); area <= 0 {
		t.Errorf("%s: quad %v is not clockwise on screen (signed area %.1f)", file, q, area)
	}
	// The first corner is the top-left: smallest x+y.
	for i := 1; i < 4; i++ {
		if q[i].X+q[i].Y < q[0].X+q[0].Y {
			t.Errorf("%s: quad %v does not start at the top-left corner", file, q)
		}
	}
}

// signedArea is positive for corners clockwise on screen (y pointing down).
func signedArea(q plates.Quad) float64 {
	a := 0.0
	for i := range q {
		p, n := q[i], q[(i+1)%4]
		a += p.X*n.Y - n.X*p.Y
	}
	return a / 2
}

// TestDetectConcurrent runs detections side by side, as a worker does:
// the networks' scratch storage is shared through pools (nn.Free), and
// no detection may see another's.
func TestDetectConcurrent(t *testing.T) {
	photos := loadHeldOut(t, "plates-web-cc0", 4)
	photos = append(photos, loadHeldOut(t, "plates-dashcam-ro", 4)...)
	want := make([][]plates.Plate, len(photos))
	for i, e := range photos {
		got, err := plates.Detect(context.Background(), e.img)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = got
	}
	imgtest.SideBySide(len(photos), func(i int) {
		got, err := plates.Detect(context.Background(), photos[i].img)
		if err != nil {
			t.Error(err)
			return
		}
		if !reflect.DeepEqual(got, want[i]) {
			t.Errorf("%s: side by side found %v, alone %v", photos[i].File, got, want[i])
		}
	})
}

func TestDetectNoPlate(t *testing.T) {
	for name, img := range map[string]image.Image{
		"empty":      image.NewRGBA(image.Rect(0, 0, 0, 0)),
		"one pixel":  image.NewRGBA(image.Rect(0, 0, 1, 1)),
		"flat grey":  uniform(color.Gray{128}, 800, 600),
		"black":      uniform(color.Black, 1200, 900),
		"thin strip": uniform(color.White, 3000, 2),
	} {
		got, err := plates.Detect(context.Background(), img)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got == nil || len(got) != 0 {
			t.Errorf("%s: got %v, want an empty slice", name, got)
		}
	}
}

func uniform(c color.Color, w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(c), image.Point{}, draw.Src)
	return img
}

func TestDetectCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := plates.Detect(ctx, uniform(color.White, 640, 480))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got error %v, want context.Canceled", err)
	}
}

// BenchmarkDetect12MP times detection on a 12-megapixel photo (4000×3000,
// a held-out dash-cam frame enlarged), decode excluded.
func BenchmarkDetect12MP(b *testing.B) {
	img := twelveMP(b)
	ctx := context.Background()
	start := cpuTime()
	for b.Loop() {
		if _, err := plates.Detect(ctx, img); err != nil {
			b.Fatal(err)
		}
	}
	// The machine is shared: CPU time per detection is the figure to compare.
	b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// twelveMP enlarges a held-out photo to 4000×3000 as a decoded JPEG
// (*image.YCbCr, 4:2:0) would be.
func twelveMP(tb testing.TB) image.Image {
	tb.Helper()
	src := loadHeldOut(tb, "plates-dashcam-ro", 1)[0].img
	sb := src.Bounds()
	dst := image.NewYCbCr(image.Rect(0, 0, 4000, 3000), image.YCbCrSubsampleRatio420)
	for y := range 3000 {
		for x := range 4000 {
			r, g, b, _ := src.At(sb.Min.X+x*sb.Dx()/4000, sb.Min.Y+y*sb.Dy()/3000).RGBA()
			yy, cb, cr := color.RGBToYCbCr(uint8(r>>8), uint8(g>>8), uint8(b>>8))
			dst.Y[dst.YOffset(x, y)] = yy
			ci := dst.COffset(x, y)
			dst.Cb[ci], dst.Cr[ci] = cb, cr
		}
	}
	return dst
}

// TestDetectOddShapes runs the detector on noise of odd sizes and pixel
// types: whatever it proposes and verifies, it must not fail and every
// quad must stay on the photo.
func TestDetectOddShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, r := range []image.Rectangle{
		image.Rect(0, 0, 2, 3), image.Rect(0, 0, 5, 900), image.Rect(0, 0, 1700, 7),
		image.Rect(-40, 13, 60, 90), image.Rect(0, 0, 1601, 1201),
	} {
		gray := image.NewGray(r)
		for i := range gray.Pix {
			gray.Pix[i] = uint8(rng.IntN(256))
		}
		ycc := image.NewYCbCr(r, image.YCbCrSubsampleRatio422)
		for i := range ycc.Y {
			ycc.Y[i] = uint8(rng.IntN(256))
		}
		for _, img := range []image.Image{gray, ycc} {
			got, err := plates.Detect(context.Background(), img)
			if err != nil {
				t.Fatalf("%v %T: %v", r, img, err)
			}
			for _, p := range got {
				checkQuad(t, fmt.Sprintf("%v %T", r, img), p.Quad, r)
				checkQuad(t, fmt.Sprintf("%v %T", r, img), p.Tight, r)
			}
		}
	}
}
