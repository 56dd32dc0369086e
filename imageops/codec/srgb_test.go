package codec_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"testing"

	"carphoto/imageops/codec"
	"carphoto/internal/testenv/imgtest"
)

var p3Colours = []color.NRGBA{
	{128, 128, 128, 255}, {255, 255, 255, 255}, {0, 0, 0, 255}, {200, 100, 50, 255}, {40, 160, 90, 255},
	{30, 60, 200, 255}, {230, 210, 40, 255}, {180, 40, 60, 128}, {90, 90, 200, 255}, {240, 20, 20, 255},
}

// A photo of Display P3 whose profile an answer leaves out has its pixels
// converted to sRGB: each colour within 2 levels of the profiles' own
// arithmetic, so that it looks as it did with its profile, and alpha kept.
func TestToSRGBDisplayP3(t *testing.T) {
	profile := imgtest.DisplayP3Profile(600_000)
	if len(profile) <= codec.MaxKeptICC {
		t.Fatalf("the test profile is %d bytes, want more than codec.MaxKeptICC", len(profile))
	}
	img := image.NewNRGBA(image.Rect(0, 0, len(p3Colours), 1))
	for i, c := range p3Colours {
		img.SetNRGBA(i, 0, c)
	}
	got, ok := codec.ToSRGB(img, profile)
	if !ok {
		t.Fatal("ToSRGB did not convert a Display P3 photo")
	}
	worst := 0.0
	for i, c := range p3Colours {
		g := color.NRGBAModel.Convert(got.At(i, 0)).(color.NRGBA)
		want := imgtest.P3ToSRGB(c)
		for k, v := range [3]uint8{g.R, g.G, g.B} {
			worst = max(worst, math.Abs(float64(v)-want[k]))
			if math.Abs(float64(v)-want[k]) > 2 {
				t.Errorf("P3 %v: sRGB %v, want about %.1f", c, g, want)
				break
			}
		}
		if g.A != c.A {
			t.Errorf("P3 %v: alpha %d, want %d", c, g.A, c.A)
		}
	}
	t.Logf("worst difference from the profiles' arithmetic: %.2f levels", worst)
	if g := color.NRGBAModel.Convert(got.At(3, 0)).(color.NRGBA); g.R <= 200 {
		t.Errorf("P3 (200,100,50) came out %v: not more saturated in sRGB, so not converted", g)
	}
}

// Decode converts a JPEG's pixels from a profile too large for its answer,
// and says so.
func TestDecodeConvertsFromDroppedProfile(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	c := color.NRGBA{200, 100, 50, 255}
	for y := range 64 {
		for x := range 64 {
			img.Set(x, y, c)
		}
	}
	var plain bytes.Buffer
	if err := jpeg.Encode(&plain, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	b := plain.Bytes()
	file := append(append(append([]byte{}, b[:2]...), iccSegments(imgtest.DisplayP3Profile(600_000))...), b[2:]...)
	p, err := codec.Decode(context.Background(), file, codec.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.ICCDropped || !p.ICCConverted || p.ICC != nil {
		t.Fatalf("dropped %v, converted %v, %d profile bytes kept; want dropped, converted, none kept", p.ICCDropped, p.ICCConverted, len(p.ICC))
	}
	g := color.NRGBAModel.Convert(p.Image.At(32, 32)).(color.NRGBA)
	want := imgtest.P3ToSRGB(c)
	for k, v := range [3]uint8{g.R, g.G, g.B} {
		if math.Abs(float64(v)-want[k]) > 4 { // and the JPEG's own rounding
			t.Errorf("the patch decoded as %v, want about %.1f", g, want)
			break
		}
	}
}

// iccSegments is profile as a JPEG's APP2 segments carry it.
func iccSegments(profile []byte) []byte {
	const chunk = 65519
	n := (len(profile) + chunk - 1) / chunk
	var b bytes.Buffer
	for i := range n {
		part := profile[i*chunk : min((i+1)*chunk, len(profile))]
		b.Write([]byte{0xff, 0xe2})
		binary.Write(&b, binary.BigEndian, uint16(2+14+len(part)))
		b.WriteString("ICC_PROFILE\x00")
		b.Write([]byte{byte(i + 1), byte(n)})
		b.Write(part)
	}
	return b.Bytes()
}

// A profile the engine cannot read (noise behind an RGB header, a grey
// one on colour pixels) leaves the pixels as they are, and never panics.
func TestToSRGBUnreadableProfiles(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 4, 4))
	for _, p := range [][]byte{randomICC(4096), randomICC(2 << 20), fakeICC(4096, "GRAY"), imgtest.DisplayP3Profile(4)[:200]} {
		got, ok := codec.ToSRGB(img, p)
		if ok || got != image.Image(img) {
			t.Errorf("a %d-byte unreadable profile: converted %v, want the pixels left as they are", len(p), ok)
		}
	}
}

func BenchmarkToSRGB12MP(b *testing.B) {
	profile := imgtest.DisplayP3Profile(4096)
	img := image.NewYCbCr(image.Rect(0, 0, 4240, 2832), image.YCbCrSubsampleRatio420)
	for i := range img.Y {
		img.Y[i] = uint8(i)
	}
	for b.Loop() {
		if _, ok := codec.ToSRGB(img, profile); !ok {
			b.Fatal("not converted")
		}
	}
}
