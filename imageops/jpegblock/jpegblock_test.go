package jpegblock

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"carphoto"
)

// photo draws a w×h test picture with detail at every scale (gradients,
// stripes, noise), so that blocks code many coefficients.
func photo(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	for y := range h {
		for x := range w {
			r := uint8(x * 255 / max(1, w-1))
			g := uint8(y * 255 / max(1, h-1))
			b := uint8(128 + 100*math.Sin(float64(x+y)/5))
			if (x/7+y/11)%2 == 0 {
				r ^= 0x40
			}
			n := uint8(rng.IntN(24))
			img.Set(x, y, color.RGBA{r + n, g + n/2, b - n, 255})
		}
	}
	return img
}

// encodeGo writes img with the standard library (4:2:0, or greyscale).
func encodeGo(tb testing.TB, img image.Image) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 88}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// encodeCjpeg writes img with libjpeg-turbo's cjpeg and its options,
// skipping the test when cjpeg is not installed.
func encodeCjpeg(tb testing.TB, img *image.RGBA, args ...string) []byte {
	tb.Helper()
	path, err := exec.LookPath("cjpeg")
	if err != nil {
		tb.Skip("cjpeg not installed (apt-get install libjpeg-turbo-progs)")
	}
	var ppm bytes.Buffer
	b := img.Bounds()
	fmt.Fprintf(&ppm, "P6\n%d %d\n255\n", b.Dx(), b.Dy())
	for y := range b.Dy() {
		for x := range b.Dx() {
			o := img.PixOffset(x, y)
			ppm.Write(img.Pix[o : o+3])
		}
	}
	in := filepath.Join(tb.TempDir(), "in.ppm")
	if err := os.WriteFile(in, ppm.Bytes(), 0o600); err != nil {
		tb.Fatal(err)
	}
	out, err := exec.Command(path, append(args, in)...).Output()
	if err != nil {
		tb.Fatalf("cjpeg %v: %v", args, err)
	}
	return out
}

// withOrientation splices an EXIF segment holding orientation o (and a GPS
// pointer, which must not survive) after SOI.
func withOrientation(data []byte, o int) []byte {
	tiff := []byte{
		'M', 'M', 0, 42, 0, 0, 0, 8,
		0, 2,
		0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, byte(o), 0, 0,
		0x88, 0x25, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0, // GPS IFD pointer
		0, 0, 0, 0,
	}
	seg := append([]byte("Exif\x00\x00"), tiff...)
	n := len(seg) + 2
	out := append([]byte{0xFF, 0xD8, 0xFF, 0xE1, byte(n >> 8), byte(n)}, seg...)
	return append(out, data[2:]...)
}

type sample struct {
	name string
	data []byte
}

func samples(t *testing.T) []sample {
	t.Helper()
	var out []sample
	add := func(name string, data []byte) { out = append(out, sample{name, data}) }
	add("go-420", encodeGo(t, photo(96, 64)))
	add("go-420-odd", encodeGo(t, photo(101, 77)))
	g := image.NewGray(image.Rect(0, 0, 75, 53))
	p := photo(75, 53)
	for i := range g.Pix {
		g.Pix[i] = p.Pix[4*i+1]
	}
	add("go-gray-odd", encodeGo(t, g))
	if _, err := exec.LookPath("cjpeg"); err == nil {
		add("cjpeg-422-restart", encodeCjpeg(t, photo(90, 70), "-quality", "90", "-sample", "2x1", "-restart", "2B"))
		add("cjpeg-444-odd", encodeCjpeg(t, photo(83, 41), "-quality", "85", "-sample", "1x1"))
		add("cjpeg-420-restart1", encodeCjpeg(t, photo(67, 45), "-quality", "75", "-restart", "1B"))
		add("cjpeg-440", encodeCjpeg(t, photo(50, 70), "-quality", "90", "-sample", "1x2"))
		add("cjpeg-411", encodeCjpeg(t, photo(70, 34), "-quality", "90", "-sample", "4x1", "-restart", "3B"))
		add("cjpeg-gray-restart", encodeCjpeg(t, photo(61, 39), "-quality", "90", "-grayscale", "-restart", "2B"))
		add("cjpeg-optimized", encodeCjpeg(t, photo(64, 48), "-quality", "90", "-optimize"))
	} else {
		t.Log("cjpeg not installed: 4:2:2, 4:4:4, 4:4:0, 4:1:1 and restart samples skipped")
	}
	if data, err := os.ReadFile("../codec/testdata/quad.422.restart.jpg"); err == nil {
		add("testdata-422-restart", data)
	}
	if data, err := os.ReadFile("../codec/testdata/quad.444.jpg"); err == nil {
		add("testdata-444", data)
	}
	return out
}

// mcuOf gives the stored MCU each plane sample of a stdlib decode lies in.
type planeView struct {
	pix    []uint8
	stride int
	w, h   int
	mw, mh int // samples an MCU spans
}

func planesOf(t *testing.T, f *File, img image.Image) []planeView {
	t.Helper()
	switch m := img.(type) {
	case *image.Gray:
		return []planeView{{m.Pix, m.Stride, m.Rect.Dx(), m.Rect.Dy(), 8 * f.hmax, 8 * f.vmax}}
	case *image.YCbCr:
		cw, ch := len(m.Cb)/m.CStride, m.CStride
		_ = ch
		c := f.comps[1]
		return []planeView{
			{m.Y, m.YStride, m.Rect.Dx(), m.Rect.Dy(), 8 * f.hmax, 8 * f.vmax},
			{m.Cb, m.CStride, m.CStride, cw, 8 * c.h, 8 * c.v},
			{m.Cr, m.CStride, m.CStride, cw, 8 * c.h, 8 * c.v},
		}
	}
	t.Fatalf("stdlib decoded a %T", img)
	return nil
}

// changedMCUs is the set of stored MCUs where patches change pixels.
func changedMCUs(f *File, patches []Patch) map[int]bool {
	out := map[int]bool{}
	for m := range f.collect(patches) {
		out[m] = true
	}
	return out
}

// checkIdentity decodes in and out with the standard library and fails
// where a sample outside the allowed MCUs differs.
func checkIdentity(t *testing.T, f *File, in, out []byte, allowed map[int]bool) {
	t.Helper()
	a, err := jpeg.Decode(bytes.NewReader(in))
	if err != nil {
		t.Fatalf("decode input: %v", err)
	}
	b, err := jpeg.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("decode output: %v", err)
	}
	if a.Bounds() != b.Bounds() {
		t.Fatalf("output is %v, input %v", b.Bounds(), a.Bounds())
	}
	pa, pb := planesOf(t, f, a), planesOf(t, f, b)
	bad := 0
	for k := range pa {
		for y := range pa[k].h {
			if y*pa[k].stride >= len(pa[k].pix) {
				break
			}
			for x := range pa[k].stride {
				i := y*pa[k].stride + x
				if pa[k].pix[i] == pb[k].pix[i] {
					continue
				}
				if m := y/pa[k].mh*f.mcusX + x/pa[k].mw; !allowed[m] {
					if bad < 5 {
						t.Errorf("plane %d sample (%d,%d) in unedited MCU %d: got %d, want %d", k, x, y, m, pb[k].pix[i], pa[k].pix[i])
					}
					bad++
				}
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d samples differ outside the edited MCUs", bad)
	}
}

// fillPatch paints r (displayed coordinates) in c.
func fillPatch(t *testing.T, f *File, r image.Rectangle, c color.RGBA) Patch {
	t.Helper()
	before, err := f.Region(r)
	if err != nil {
		t.Fatal(err)
	}
	after := image.NewRGBA(before.Rect)
	copy(after.Pix, before.Pix)
	for y := before.Rect.Min.Y; y < before.Rect.Max.Y; y++ {
		for x := before.Rect.Min.X; x < before.Rect.Max.X; x++ {
			after.SetRGBA(x, y, c)
		}
	}
	return Patch{Before: before, After: after}
}

func TestNoEditKeepsEveryPixel(t *testing.T) {
	for _, s := range samples(t) {
		t.Run(s.name, func(t *testing.T) {
			for o := 1; o <= 8; o++ {
				in := withOrientation(s.data, o)
				f, err := Parse(in, o, 16)
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				if _, err := f.Write(&out, nil); err != nil {
					t.Fatal(err)
				}
				checkIdentity(t, f, in, out.Bytes(), nil)
				if bytes.Contains(out.Bytes(), []byte{0x88, 0x25}) {
					t.Errorf("orientation %d: the GPS pointer survived", o)
				}
			}
		})
	}
}

func TestEditChangesOnlyItsMCUs(t *testing.T) {
	for _, s := range samples(t) {
		t.Run(s.name, func(t *testing.T) {
			for o := 1; o <= 8; o++ {
				in := withOrientation(s.data, o)
				f, err := Parse(in, o, 16)
				if err != nil {
					t.Fatal(err)
				}
				b := f.Bounds()
				// A patch off the grid, one at the far corner (partial MCUs).
				r1 := image.Rect(b.Dx()/3+1, b.Dy()/4+3, b.Dx()/3+13, b.Dy()/4+10)
				r2 := image.Rect(b.Dx()-5, b.Dy()-4, b.Dx()+3, b.Dy())
				patches := []Patch{
					fillPatch(t, f, r1, color.RGBA{250, 250, 250, 255}),
					fillPatch(t, f, r2, color.RGBA{10, 200, 30, 255}),
				}
				var out bytes.Buffer
				n, err := f.Write(&out, patches)
				if err != nil {
					t.Fatalf("orientation %d: %v", o, err)
				}
				if n == 0 {
					t.Fatalf("orientation %d: no MCU was coded again", o)
				}
				checkIdentity(t, f, in, out.Bytes(), changedMCUs(f, patches))
				// The patch shows in the output, read back in displayed orientation.
				g, err := Parse(out.Bytes(), o, 16)
				if err != nil {
					t.Fatalf("orientation %d: output: %v", o, err)
				}
				got, err := g.Region(r1)
				if err != nil {
					t.Fatal(err)
				}
				if d := meanDiff(got, patches[0].After); d > 12 {
					t.Errorf("orientation %d: the patch reads back %.1f levels off", o, d)
				}
			}
		})
	}
}

func meanDiff(a, b *image.RGBA) float64 {
	r := a.Rect.Intersect(b.Rect)
	sum, n := 0.0, 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			pa, pb := a.RGBAAt(x, y), b.RGBAAt(x, y)
			sum += math.Abs(float64(pa.R)-float64(pb.R)) + math.Abs(float64(pa.G)-float64(pb.G)) + math.Abs(float64(pa.B)-float64(pb.B))
			n += 3
		}
	}
	return sum / float64(max(n, 1))
}

// TestRegionMatchesStdlib checks that Region and Preview show the photo
// in displayed orientation, as the standard decoder's pixels turned.
func TestRegionMatchesStdlib(t *testing.T) {
	for _, s := range samples(t) {
		t.Run(s.name, func(t *testing.T) {
			std, err := jpeg.Decode(bytes.NewReader(s.data))
			if err != nil {
				t.Fatal(err)
			}
			for o := 1; o <= 8; o++ {
				f, err := Parse(s.data, o, 1<<20)
				if err != nil {
					t.Fatal(err)
				}
				got, err := f.Region(f.Bounds())
				if err != nil {
					t.Fatal(err)
				}
				sb := std.Bounds()
				want := image.NewRGBA(f.Bounds())
				for y := range want.Rect.Dy() {
					for x := range want.Rect.Dx() {
						sx, sy := ToStored(o, x, y, sb.Dx(), sb.Dy())
						want.Set(x, y, std.At(sx, sy))
					}
				}
				if d := meanDiff(got, want); d > 1.5 {
					t.Errorf("orientation %d: Region is %.2f levels off the stdlib decode", o, d)
				}
				pv := f.Preview()
				rgba := image.NewRGBA(pv.Bounds())
				draw.Draw(rgba, rgba.Rect, pv, pv.Bounds().Min, draw.Src)
				if pv.Bounds() != f.Bounds() || meanDiff(rgba, want) > 1.5 {
					t.Errorf("orientation %d: full-scale preview %v off the stdlib decode", o, pv.Bounds())
				}
			}
		})
	}
}

func TestUnsupportedAndCorrupt(t *testing.T) {
	progressive, _ := os.ReadFile("../codec/testdata/quad.progressive.icc.jpg")
	arithmetic, _ := os.ReadFile("../codec/testdata/quad.arithmetic.jpg")
	good := encodeGo(t, photo(40, 24))
	cut := good[:len(good)*2/3]
	flipped := bytes.Clone(good)
	flipped[len(flipped)-40] ^= 0x5A
	for _, tc := range []struct {
		name        string
		data        []byte
		unsupported bool
	}{
		{"progressive", progressive, true},
		{"arithmetic", arithmetic, true},
		{"png", []byte("\x89PNG\r\n\x1a\nxxxx"), false},
		{"truncated", cut, false},
		{"empty", nil, false},
	} {
		if tc.data == nil && tc.name != "empty" {
			continue
		}
		_, err := Parse(tc.data, 1, 16)
		if tc.unsupported {
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("%s: got %v, want ErrUnsupported", tc.name, err)
			}
			continue
		}
		var ce *carphoto.Error
		if !errors.As(err, &ce) || ce.Code != carphoto.EInvalidParams {
			t.Errorf("%s: got %v, want an invalid_params *carphoto.Error", tc.name, err)
		}
	}
	// Components named R, G and B without JFIF hold RGB (image/jpeg reads
	// them so): not this package's YCbCr.
	rgb := bytes.Clone(good)
	sof, sos := bytes.Index(rgb, []byte{0xFF, 0xC0}), bytes.Index(rgb, []byte{0xFF, 0xDA})
	for i, id := range []byte("RGB") {
		rgb[sof+10+3*i] = id // SOF0: marker, length, precision, size, count, then id, sampling, table
		rgb[sos+5+2*i] = id  // SOS: marker, length, count, then id, tables
	}
	if _, err := jpeg.Decode(bytes.NewReader(rgb)); err != nil {
		t.Fatalf("the RGB-named test file does not decode: %v", err)
	}
	if _, err := Parse(rgb, 1, 16); !errors.Is(err, ErrUnsupported) {
		t.Errorf("components R, G, B: got %v, want ErrUnsupported", err)
	}
	// Damaged entropy-coded data either still parses or is a clear error.
	if _, err := Parse(flipped, 1, 16); err != nil {
		var ce *carphoto.Error
		if !errors.As(err, &ce) {
			t.Errorf("flipped bits: got %v, want a *carphoto.Error", err)
		}
	}
}

// TestPreviewScales checks the preview at 1/8, 1/4 and 1/2 against the
// standard decode averaged over the same pixels.
func TestPreviewScales(t *testing.T) {
	// Greyscale: a colour preview's chroma spans the subsampled blocks,
	// which no average over k×k pixels matches.
	p := photo(160, 96)
	g := image.NewGray(p.Rect)
	for i := range g.Pix {
		g.Pix[i] = uint8((int(p.Pix[4*i]) + int(p.Pix[4*i+1]) + int(p.Pix[4*i+2])) / 3)
	}
	data := encodeGo(t, g)
	std, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{8, 4, 2} {
		f, err := Parse(data, 1, 160/k)
		if err != nil {
			t.Fatal(err)
		}
		if f.Factor() != k {
			t.Fatalf("factor %d, want %d", f.Factor(), k)
		}
		pv := f.Preview()
		got := image.NewRGBA(pv.Bounds())
		draw.Draw(got, got.Rect, pv, pv.Bounds().Min, draw.Src)
		want := image.NewRGBA(got.Rect)
		for y := range want.Rect.Dy() {
			for x := range want.Rect.Dx() {
				var s [3]int
				for dy := range k {
					for dx := range k {
						r, g, b, _ := std.At(x*k+dx, y*k+dy).RGBA()
						s[0], s[1], s[2] = s[0]+int(r>>8), s[1]+int(g>>8), s[2]+int(b>>8)
					}
				}
				want.SetRGBA(x, y, color.RGBA{uint8(s[0] / k / k), uint8(s[1] / k / k), uint8(s[2] / k / k), 255})
			}
		}
		if d := meanDiff(got, want); d > 8 {
			t.Errorf("1/%d preview is %.1f levels off the averaged decode", k, d)
		} else {
			t.Logf("1/%d preview: %.2f levels off the averaged decode", k, d)
		}
	}
}
