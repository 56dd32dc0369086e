package paint

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/image/draw"

	"carphoto/imageops/codec"
	"carphoto/imageops/plates"
	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
)

// blockCase is a JPEG the block path is checked on, with its labelled
// plates.
type blockCase struct {
	name   string
	photo  []byte
	plates []plates.Box
}

// TestBlockDetectHeldOut checks that the plate finder finds as many
// labelled plates through the block path (a preview from the coefficients,
// full-resolution windows decoded on demand) as on the fully decoded
// photo: the shipped samples (car.jpg as it is and enlarged 3× to
// 1800×1197; listing.jpg, 4000×2672, a quarter-scale preview as a 12 MP
// photo takes) and, where the shared sets are here (CARPHOTO_DATASETS;
// README.md, "Data sets"), the first 40 held-out photos of the web and
// dash-cam sets as they are (previews at full and half scale) and 12
// dash-cam photos enlarged 3× to 3840×2160. A parity check, not a quality
// score: the subset takes a third of the time every held-out photo took.
func TestBlockDetectHeldOut(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes photos up to 10 MP several times")
	}
	car := imgtest.Sample(t, "car.jpg")
	groups := []struct {
		name  string
		cases []blockCase
	}{{"samples", []blockCase{
		{"car.jpg", car, []plates.Box{boxOf(imgtest.SamplePlate, 1)}},
		{"car.jpg ×3", enlargeJPEG(t, car, 3), []plates.Box{boxOf(imgtest.SamplePlate, 3)}},
		{"listing.jpg", imgtest.Sample(t, "listing.jpg"), []plates.Box{boxOf(imgtest.ListingPlates[0], 1), boxOf(imgtest.ListingPlates[1], 1)}},
	}}}
	for _, tc := range []struct {
		set   string
		scale int
		most  int
	}{
		{"plates-web-cc0", 1, 40},
		{"plates-dashcam-ro", 1, 40},
		{"plates-dashcam-ro", 3, 12},
	} {
		if !datasets.Present(t, tc.set) {
			t.Logf("%s not at %s: not checked on its photos", tc.set, datasets.Dir())
			continue
		}
		dir := datasets.Set(t, tc.set)
		data, err := os.ReadFile(filepath.Join(dir, "labels.json"))
		if err != nil {
			t.Fatal(err)
		}
		var labels []struct {
			File   string       `json:"file"`
			Plates []plates.Box `json:"plates"`
		}
		if err := json.Unmarshal(data, &labels); err != nil {
			t.Fatal(err)
		}
		var cases []blockCase
		for _, e := range labels {
			if !datasets.HeldOut(e.File) || len(cases) == tc.most {
				continue
			}
			in, err := os.ReadFile(filepath.Join(dir, e.File))
			if err != nil {
				t.Fatal(err)
			}
			if tc.scale > 1 {
				in = enlargeJPEG(t, in, tc.scale)
			}
			var boxes []plates.Box
			for _, bx := range e.Plates {
				k := float64(tc.scale)
				boxes = append(boxes, plates.Box{X: bx.X * k, Y: bx.Y * k, W: bx.W * k, H: bx.H * k})
			}
			cases = append(cases, blockCase{e.File, in, boxes})
		}
		groups = append(groups, struct {
			name  string
			cases []blockCase
		}{fmt.Sprintf("%s ×%d, held-out", tc.set, tc.scale), cases})
	}
	for _, g := range groups {
		var full, block, fullDet, blockDet, n int
		for _, c := range g.cases {
			ctx := context.Background()
			p, err := codec.Decode(ctx, c.photo, codec.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := plates.Detect(ctx, p.Image)
			if err != nil {
				t.Fatal(err)
			}
			b, err := OpenBlockJPEG(ctx, c.photo, codec.Limits{})
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got, err := plates.DetectIn(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			fullDet += len(want)
			blockDet += len(got)
			for _, bx := range c.plates {
				if bx.W < 20 {
					continue
				}
				n++
				if bx.CoveredBy(want) >= 0.95 {
					full++
				}
				if bx.CoveredBy(got) >= 0.95 {
					block++
				}
			}
		}
		t.Logf("%s, %d photos: plates found %d/%d decoded, %d/%d block path; detections %d decoded, %d block path",
			g.name, len(g.cases), full, n, block, n, fullDet, blockDet)
		if n == 0 {
			t.Errorf("%s: no labelled plate 20 px wide or more", g.name)
		}
		if block < full-max(1, n/100) {
			t.Errorf("%s: the block path finds %d plates of %d, the decoded photo %d", g.name, block, n, full)
		}
	}
}

// boxOf is r scaled by k as a labelled box.
func boxOf(r image.Rectangle, k float64) plates.Box {
	return plates.Box{X: float64(r.Min.X) * k, Y: float64(r.Min.Y) * k, W: float64(r.Dx()) * k, H: float64(r.Dy()) * k}
}

// enlargeJPEG scales a JPEG up by k (bilinear) and encodes it again.
func enlargeJPEG(tb testing.TB, data []byte, k int) []byte {
	tb.Helper()
	src, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	b := src.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx()*k, b.Dy()*k))
	draw.BiLinear.Scale(dst, dst.Rect, src, b, draw.Src, nil)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 90}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}
