package paint

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/image/draw"

	"carphoto/imageops/codec"
	"carphoto/imageops/plates"
	"carphoto/internal/testenv/datasets"
)

// TestBlockDetectHeldOut checks that the plate finder finds as many
// labelled plates through the block path (a preview from the coefficients,
// full-resolution windows decoded on demand) as on the fully decoded
// photo: the first 40 held-out photos of the web and dash-cam sets as
// they are (previews at full and half scale), and 12 dash-cam photos
// enlarged 3× to 3840×2160 (a quarter-scale preview, as a 12 MP photo
// takes). A parity check, not a quality score: the subset takes a third of
// the time every held-out photo took.
func TestBlockDetectHeldOut(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the labelled sets")
	}
	for _, tc := range []struct {
		set   string
		scale int
		most  int
	}{
		{"plates-web-cc0", 1, 40},
		{"plates-dashcam-ro", 1, 40},
		{"plates-dashcam-ro", 3, 12},
	} {
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
		var full, block, fullDet, blockDet, n, photos int
		for _, e := range labels {
			if !datasets.HeldOut(e.File) || photos == tc.most {
				continue
			}
			photos++
			in, err := os.ReadFile(filepath.Join(dir, e.File))
			if err != nil {
				t.Fatal(err)
			}
			if tc.scale > 1 {
				in = enlargeJPEG(t, in, tc.scale)
			}
			ctx := context.Background()
			p, err := codec.Decode(ctx, in, codec.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			want, err := plates.Detect(ctx, p.Image)
			if err != nil {
				t.Fatal(err)
			}
			b, err := OpenBlockJPEG(ctx, in, codec.Limits{})
			if err != nil {
				t.Fatalf("%s: %v", e.File, err)
			}
			got, err := plates.DetectIn(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			fullDet += len(want)
			blockDet += len(got)
			for _, bx := range e.Plates {
				bx = plates.Box{X: bx.X * float64(tc.scale), Y: bx.Y * float64(tc.scale), W: bx.W * float64(tc.scale), H: bx.H * float64(tc.scale)}
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
		t.Logf("%s ×%d, %d held-out photos: plates found %d/%d decoded, %d/%d block path; detections %d decoded, %d block path",
			tc.set, tc.scale, photos, full, n, block, n, fullDet, blockDet)
		if block < full-max(1, n/100) {
			t.Errorf("%s ×%d: the block path finds %d plates of %d, the decoded photo %d", tc.set, tc.scale, block, n, full)
		}
	}
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
