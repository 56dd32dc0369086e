package jpegblock

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"os"
	"testing"
)

// TestDecodeImageMatchesStdlib checks the whole-photo decode against
// image/jpeg's on every sample (subsamplings, restart intervals, odd
// sizes, greyscale): the same image type, bounds and subsampling, and
// every sample within 2 levels (the two inverse DCTs round differently).
func TestDecodeImageMatchesStdlib(t *testing.T) {
	for _, s := range samples(t) {
		t.Run(s.name, func(t *testing.T) {
			want, err := jpeg.Decode(bytes.NewReader(s.data))
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeImage(s.data)
			if errors.Is(err, ErrUnsupported) {
				t.Skipf("not decoded here: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Bounds() != want.Bounds() {
				t.Fatalf("bounds %v, want %v", got.Bounds(), want.Bounds())
			}
			type plane struct {
				name string
				a, b []uint8
				sa   int
				sb   int
				w, h int
			}
			var ps []plane
			switch w := want.(type) {
			case *image.Gray:
				g, ok := got.(*image.Gray)
				if !ok {
					t.Fatalf("decoded a %T, want *image.Gray", got)
				}
				ps = append(ps, plane{"Y", g.Pix, w.Pix, g.Stride, w.Stride, w.Rect.Dx(), w.Rect.Dy()})
			case *image.YCbCr:
				g, ok := got.(*image.YCbCr)
				if !ok || g.SubsampleRatio != w.SubsampleRatio {
					t.Fatalf("decoded a %T, want *image.YCbCr %v", got, w.SubsampleRatio)
				}
				cw, ch := w.COffset(w.Rect.Max.X-1, 0)+1, w.COffset(0, w.Rect.Max.Y-1)/w.CStride+1
				ps = append(ps,
					plane{"Y", g.Y, w.Y, g.YStride, w.YStride, w.Rect.Dx(), w.Rect.Dy()},
					plane{"Cb", g.Cb, w.Cb, g.CStride, w.CStride, cw, ch},
					plane{"Cr", g.Cr, w.Cr, g.CStride, w.CStride, cw, ch})
			default:
				t.Skipf("stdlib decodes a %T", want)
			}
			for _, p := range ps {
				most, sum := 0, 0
				for y := range p.h {
					for x := range p.w {
						d := int(p.a[y*p.sa+x]) - int(p.b[y*p.sb+x])
						d = max(d, -d)
						most, sum = max(most, d), sum+d
					}
				}
				if most > 2 {
					t.Errorf("%s: a sample is %d levels off the stdlib decode (mean %.3f)", p.name, most, float64(sum)/float64(p.w*p.h))
				}
			}
		})
	}
}

// TestDecodeImageRefuses checks that what DecodeImage does not read is
// ErrUnsupported (the caller falls back to image/jpeg) and that damaged
// data is an error, not a picture.
func TestDecodeImageRefuses(t *testing.T) {
	progressive, err := os.ReadFile("../codec/testdata/quad.progressive.icc.jpg")
	if err != nil {
		t.Skip(err)
	}
	if _, err := DecodeImage(progressive); !errors.Is(err, ErrUnsupported) {
		t.Errorf("progressive: %v, want ErrUnsupported", err)
	}
	data := encodeGo(t, photo(96, 64))
	for _, bad := range [][]byte{data[:len(data)/2], data[:200], {0xFF, 0xD8, 0xFF}} {
		if img, err := DecodeImage(bad); err == nil {
			t.Errorf("%d bytes of a cut file decoded to %v", len(bad), img.Bounds())
		}
	}
}
