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
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"syscall"
	"testing"
	"time"

	xdraw "golang.org/x/image/draw"

	"carphoto/imageops/plates"
	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
	"carphoto/internal/testenv/platechars"
)

type entry struct {
	File   string       `json:"file"`
	Width  int          `json:"width"`
	Height int          `json:"height"`
	Plates []plates.Box `json:"plates"`
	img    image.Image
}

// loadHeldOut returns up to n held-out photos of a data set that have no
// copy among its other photos (the web set holds the same photo under
// several names, and a copy of a training photo tests what the networks
// remember, not what they find), skipping the test when the shared data
// sets are not on this machine.
func loadHeldOut(tb testing.TB, set string, n int) []entry {
	tb.Helper()
	return decodeFirst(tb, set, copyFreeHeldOut(tb, set), n)
}

// decodeFirst decodes the photos of the first n of a set's entries.
func decodeFirst(tb testing.TB, set string, entries []entry, n int) []entry {
	tb.Helper()
	var out []entry
	for _, e := range entries[:min(n, len(entries))] {
		e.img = imgtest.DecodeFile(tb, filepath.Join(setDir(tb, set), e.File))
		out = append(out, e)
	}
	return out
}

// extraSets are the sets ../shared/datasets/extra/build.py builds outside
// the repository (its README: ~490 MB, from two public repositories).
var extraSets = map[string]bool{"plates-openimages": true, "plates-openlpr": true}

// setDir is the folder of a labelled set, skipping the test when it is not
// on this machine (failing, for a shared set, with CARPHOTO_REQUIRE_DATASETS=1).
func setDir(tb testing.TB, set string) string {
	tb.Helper()
	if extraSets[set] {
		return datasets.Extra(tb, set)
	}
	return datasets.Set(tb, set)
}

// readEntries reads a set's labels.json, skipping the test when the shared
// data sets are not on this machine.
func readEntries(tb testing.TB, set string) []entry {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(setDir(tb, set), "labels.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var all []entry
	if err := json.Unmarshal(data, &all); err != nil {
		tb.Fatal(err)
	}
	return all
}

// copyFreeHeldOut returns a set's held-out entries that are in no group of
// copies spanning another split: imageops/plates/testdata/copies.json,
// written by train/plates/tune's TestListCopies from every photo's
// datasets.Fingerprint, read here instead of decoding the whole set again
// (24 s of a Zen 3 core for the dash-cam set, with the same list). The
// extra sets were built without near copies of one another (exclude.txt)
// and have no group: every held-out photo of theirs is new to the networks.
func copyFreeHeldOut(tb testing.TB, set string) []entry {
	tb.Helper()
	data, err := os.ReadFile("testdata/copies.json")
	if err != nil {
		tb.Fatal(err)
	}
	var groups []struct {
		Set   string   `json:"set"`
		Files []string `json:"files"`
	}
	if err := json.Unmarshal(data, &groups); err != nil {
		tb.Fatal(err)
	}
	copied := map[string]bool{}
	for _, g := range groups {
		if g.Set == set && slices.ContainsFunc(g.Files, func(f string) bool { return !datasets.HeldOut(f) }) {
			for _, f := range g.Files {
				copied[f] = true
			}
		}
	}
	var out []entry
	for _, e := range readEntries(tb, set) {
		if datasets.HeldOut(e.File) && !copied[e.File] {
			out = append(out, e)
		}
	}
	return out
}

// TestDetectHeldOutCharacters guards what a reader of the photo would
// notice, on 40 held-out photos of each of the web and dash-cam sets with
// no copy in another split: a plate at least 20 px wide left readable
// (less than 95% of its characters hidden, the text regions a text
// detector found on it: imageops/plates/testdata/heldout-chars.json, platechars), the
// hidden region grown looser (hidden area ÷ labelled box, median), and a
// badge or lamp hidden for a plate (false detections a photo, after the
// held-out audit). The floors are the figures
// measured on these photos with a margin of about one plate or one false
// detection; they only stop the detector getting worse (whole held-out
// splits: `carphoto-lab bench plates`, docs/research/benchmarks-log.md).
func TestDetectHeldOutCharacters(t *testing.T) {
	// A quality test on its own photos: beside the others, on another core.
	t.Parallel()
	datasets.Set(t, "plates-web-cc0") // the shared sets, or one skip for all
	seen := auditedPlates(t)
	chars, err := platechars.Load("testdata/heldout-chars.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		set string
		floor
	}{
		// Measured 26 Nov with text proposals: characters hidden 0.886
		// (39 of 44 plates) and 0.863 (44 of 51; 37 and 43 without them);
		// hidden area / box 1.62 and 1.36; false 0.125 (5 on 40 photos)
		// and 0. The floors let one plate more be readable, the median
		// grow by 0.08–0.09 and one false detection more. Recall is
		// TestDetectHeldOutRecall's.
		{"plates-web-cc0", floor{0, 0.15, 1.70, 0.86}},
		{"plates-dashcam-ro", floor{0, 0.025, 1.45, 0.84}},
	} {
		t.Run(tc.set, func(t *testing.T) {
			checkDetections(t, loadHeldOut(t, tc.set, 40), seen, chars[tc.set], tc.floor)
		})
	}
}

// TestDetectHeldOutRecall guards the detector's quality on photos that
// training and tuning never saw, 30 of each set's held-out split: a fall in
// recall is a privacy leak, a rise in the hidden area blurs what a buyer
// looks at, and a false detection blurs a badge or a lamp. A false
// detection is one that overlaps neither a labelled plate nor a plate the
// labels miss that was found by eye in the held-out audit
// (docs/plates-heldout-audit.json): the dash-cam labels leave out most
// plates of other cars, and finding those is no fault. A detection the
// audit has not judged counts as false until it is judged. The floors are
// the figures measured on these photos less a small margin; they only stop
// the detector getting worse (the product's figures, on whole held-out
// splits, are in docs/research/benchmarks-log.md). The two larger sets are used where
// they have been built.
func TestDetectHeldOutRecall(t *testing.T) {
	// A quality test on its own photos: beside the others, on another core.
	t.Parallel()
	datasets.Set(t, "plates-web-cc0") // the shared sets, or one skip for all
	seen := auditedPlates(t)
	for _, tc := range []struct {
		set string
		floor
	}{
		// Measured 25 Nov with the networks trained on all four sets and
		// the 0.15 margin rule: recall 0.571 (20 of 35), 0.692 (27 of 39),
		// 0.651 (28 of 43), 0.867 (26 of 30); false 0.067, 0.000, 0.167,
		// 0.200 a photo after the audit; hidden area / box 1.61, 1.47,
		// 1.74, 1.37.
		{"plates-web-cc0", floor{0.51, 0.13, 1.75, 0}},
		{"plates-dashcam-ro", floor{0.64, 0.05, 1.6, 0}},
		{"plates-openimages", floor{0.60, 0.27, 1.9, 0}},
		{"plates-openlpr", floor{0.80, 0.27, 1.5, 0}},
	} {
		t.Run(tc.set, func(t *testing.T) {
			checkDetections(t, loadHeldOut(t, tc.set, 30), seen, nil, tc.floor)
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
// plates were boxed by eye (imageops/plates/testdata/cars-seg-plates.json, never
// trained on). Measured 0.938 (15 of 16), 0.088 false per photo and a
// hidden area 1.64 times the box (median) with the networks trained on all
// four sets and the 0.15 margin; the networks before them, with their wide
// margin, 0.875 and 0.147.
func TestDetectOtherSource(t *testing.T) {
	// A quality test on its own photos: beside the others, on another core.
	t.Parallel()
	data, err := os.ReadFile("testdata/cars-seg-plates.json")
	if err != nil {
		t.Fatal(err)
	}
	var photos []entry
	if err := json.Unmarshal(data, &photos); err != nil {
		t.Fatal(err)
	}
	dir := datasets.Set(t, "cars-seg")
	for i := range photos {
		photos[i].img = imgtest.DecodeFile(t, filepath.Join(dir, photos[i].File))
	}
	checkDetections(t, photos, nil, nil, floor{0.87, 0.15, 1.8, 0})
}

// floor is what a held-out test asks of the detector: the least recall
// (at least 95% of a labelled box inside the hidden regions), the most
// false detections a photo (overlapping no labelled plate and no plate the
// labels miss), and the most hidden area ÷ labelled box area, median over
// the plates found at least 20 px wide (0: not checked), and the least
// share of plates at least 20 px wide whose characters are hidden (0: not
// checked).
type floor struct{ minRecall, maxFalse, maxArea, minChars float64 }

// checkDetections runs the detector on labelled photos and fails when it
// falls short of f. seen gives, by photo file, plates the labels miss;
// chars the plates' characters (nil: not checked).
func checkDetections(t *testing.T, photos []entry, seen map[string][]plates.Box, chars platechars.Set, f floor) {
	t.Helper()
	found, total, falses := 0, 0, 0
	wide, hidden := 0, 0
	var areas []float64
	for _, e := range photos {
		got, err := plates.Detect(context.Background(), e.img)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range e.Plates {
			total++
			if chars != nil && b.W >= 20 {
				c, ok := chars.Of(e.File, b)
				if !ok {
					t.Fatalf("%s: plate %+v has no characters: labels changed since train/plates/chars.py ran", e.File, b)
				}
				wide++
				if share := c.Hidden(got); share >= platechars.HiddenShare {
					hidden++
				} else {
					t.Logf("%s: plate %+v: %.0f%% of its characters hidden", e.File, b, 100*share)
				}
			}
			if c := b.CoveredBy(got); c < 0.95 {
				t.Logf("%s: plate %+v covered %.2f", e.File, b, c)
				continue
			}
			found++
			if b.W < 20 {
				continue
			}
			best, _ := b.Match(got)
			areas = append(areas, got[best].Hide.Area()/(b.W*b.H))
		}
		for _, p := range got {
			if !overlapsAny(e.Plates, p.Hide) && !overlapsAny(seen[e.File], p.Hide) {
				falses++
				t.Logf("%s: false detection %v", e.File, p)
			}
		}
	}
	recall := float64(found) / float64(total)
	falsePerImage := float64(falses) / float64(len(photos))
	slices.Sort(areas)
	area := math.NaN()
	if len(areas) > 0 {
		area = areas[len(areas)/2]
	}
	charsHidden, of := float64(hidden)/float64(max(wide, 1)), ""
	if chars != nil {
		of = fmt.Sprintf(", characters hidden %.3f (%d of %d plates >= 20 px)", charsHidden, hidden, wide)
	}
	t.Logf("recall %.3f (%d of %d), false detections %.3f per image (%d photos), hidden area / box median %.2f%s", recall, found, total, falsePerImage, len(photos), area, of)
	if recall < f.minRecall {
		t.Errorf("recall %.3f (%d of %d plates on %d photos), want >= %.2f", recall, found, total, len(photos), f.minRecall)
	}
	if falsePerImage > f.maxFalse {
		t.Errorf("false detections %.3f per image, want <= %.2f", falsePerImage, f.maxFalse)
	}
	if f.maxArea > 0 && !(area <= f.maxArea) {
		t.Errorf("hidden area / plate box: median %.2f, want <= %.2f", area, f.maxArea)
	}
	if f.minChars > 0 && charsHidden < f.minChars {
		t.Errorf("characters hidden on %.3f of the plates >= 20 px (%d of %d), want >= %.2f", charsHidden, hidden, wide, f.minChars)
	}
}

// TestDetectCloseUps guards plates that fill much of the frame, as in a
// dealer's close-up of a car's rear: held-out photos cropped so that a
// labelled plate spans 60% or 80% of the frame's width. The floors are the
// measured figures less a margin; without the first stage's coarse look
// these crops measured 0.682 and 0.500 (docs/research/benchmarks-log.md).
func TestDetectCloseUps(t *testing.T) {
	// A quality test on its own photos: beside the others, on another core.
	t.Parallel()
	datasets.Set(t, "plates-web-cc0") // the shared sets, or one skip for all
	for _, tc := range []struct {
		frac, minRecall float64
	}{
		// Measured 0.582 and 0.627 (39 and 42 of 67) with the 0.15 margin
		// (the plate's own quad is needed now); with the wide margin of
		// before, 0.881 and 0.925.
		{0.6, 0.52},
		{0.8, 0.56},
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
// margin: 0.290 (20 of 69) with the 0.15 margin (0.362 with the wide
// margin of before). Most misses are plates under 15 pixels wide at
// workSide that are not among the first stage's 24 strongest proposals
// (docs/research/plates.md, "Plates small in a large photo").
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
	if total < 60 || recall < 0.25 {
		t.Errorf("recall %.3f (%d of %d plates), want >= 0.3 of at least 60", recall, found, total)
	}
}

// TestDetectTilted guards plates in photos taken with the camera rolled:
// held-out photos turned 15° each way about their centre, each labelled
// plate turned with them (those that stay in the frame) counted found when
// 95% of its area lies inside the detected quads.
func TestDetectTilted(t *testing.T) {
	// A quality test on its own photos: beside the others, on another core.
	t.Parallel()
	// Measured 0.547 (52 of 95) with the 0.15 margin: the corners of a
	// turned plate must now be found, not covered by a wide margin (0.842
	// with the margin of before).
	const minRecall = 0.48
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

// samplePhotos are the repository's sample car photo (docs/samples/car.jpg)
// and five views of it: mirrored, turned 8° and -12°, enlarged 2.5×, and
// a close-up of its plate. Every clone has them.
func samplePhotos(t *testing.T) []entry {
	t.Helper()
	img := imgtest.DecodeFile(t, imgtest.SamplePath("car.jpg"))
	b := img.Bounds()
	mirrored := image.NewRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			mirrored.Set(b.Max.X-1-(x-b.Min.X), y, img.At(x, y))
		}
	}
	turned, _ := imgtest.Rotated(img, 8)
	back, _ := imgtest.Rotated(img, -12)
	big := image.NewRGBA(image.Rect(0, 0, b.Dx()*5/2, b.Dy()*5/2))
	xdraw.CatmullRom.Scale(big, big.Rect, img, b, xdraw.Src, nil)
	p := imgtest.SamplePlate
	closeUp, ok := imgtest.CloseUp(img, float64(p.Min.X), float64(p.Min.Y), float64(p.Dx()), float64(p.Dy()), 0.5)
	if !ok {
		t.Fatal("no close-up of the sample's plate")
	}
	return []entry{{File: "sample", img: img}, {File: "sample mirrored", img: mirrored}, {File: "sample turned 8°", img: turned},
		{File: "sample turned -12°", img: back}, {File: "sample enlarged", img: big}, {File: "sample close-up", img: closeUp}}
}

// TestDetectContract checks what the renderer relies on, on real photos:
// corners clockwise from top-left, inside the photo, scores in [0,1].
func TestDetectContract(t *testing.T) {
	photos := samplePhotos(t)
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
				// The plate lies within the region to hide.
				for _, c := range p.Quad {
					if !p.Hide.Contains(c) {
						t.Errorf("%s: plate corner %v outside the hidden region %v", e.File, c, p.Hide)
					}
				}
				for _, q := range []plates.Quad{p.Quad, p.Hide} {
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
// no detection may see another's. Four goroutines go once through the four
// photos, each in its own order: 16 detections, every photo beside every
// other (three rounds, 48, took two minutes of a loaded 2-core machine,
// the package's slowest test, for the same interleavings again).
func TestDetectConcurrent(t *testing.T) {
	photos := samplePhotos(t)[:4] // the sample's own size, mirrored and turned
	want := make([][]plates.Plate, len(photos))
	for i, e := range photos {
		got, err := plates.Detect(context.Background(), e.img)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = got
	}
	imgtest.SideBySide(len(photos), 1, func(i int) {
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

// BenchmarkDetectWeb times detection on small web photos (10 held-out
// photos of the web set, 225–600 px wide), decode excluded; one op is one
// photo.
func BenchmarkDetectWeb(b *testing.B) {
	photos := loadHeldOut(b, "plates-web-cc0", 10)
	ctx := context.Background()
	start := cpuTime()
	i := 0
	for b.Loop() {
		if _, err := plates.Detect(ctx, photos[i%len(photos)].img); err != nil {
			b.Fatal(err)
		}
		i++
	}
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
				checkQuad(t, fmt.Sprintf("%v %T", r, img), p.Hide, r)
			}
		}
	}
}
