package codec_test

import (
	"bytes"
	"carphoto/internal/testenv/datasets"
	"context"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	xdraw "golang.org/x/image/draw"

	"carphoto/imageops/codec"
)

// benchPhotoSource is a real car photo, upscaled for the 12 MP benchmarks.
// It is read from the shared data sets, never copied into the repository;
// without it the benchmarks use a synthetic texture.
var benchPhotoSource = filepath.Join(datasets.Dir(), "cars-seg", "images", "cars-seg-0000.jpg")

var bench12MP = sync.OnceValues(func() (*image.RGBA, []byte) {
	const w, h = 4000, 3000
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	if f, err := os.Open(benchPhotoSource); err == nil {
		src, err := jpeg.Decode(f)
		f.Close()
		if err == nil {
			xdraw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, src.Bounds(), xdraw.Src, nil)
		}
	}
	// Sensor-like noise, so that the upscale does not compress unrealistically
	// well; without the source photo it is the whole texture.
	r := rand.New(rand.NewPCG(12, 12))
	for i := 0; i < len(dst.Pix); i += 4 {
		n := int(r.Uint32()%17) - 8
		for c := i; c < i+3; c++ {
			dst.Pix[c] = uint8(min(max(int(dst.Pix[c])+n, 0), 255))
		}
		dst.Pix[i+3] = 255
	}
	var b bytes.Buffer
	if err := codec.EncodeJPEG(&b, dst, 90, randomICC(3144)); err != nil {
		panic(err)
	}
	return dst, b.Bytes()
})

// cutout12MP is the 12 MP photo with an elliptical opaque "car" on a
// transparent background, like a car-shadow input or output.
var cutout12MP = sync.OnceValue(func() *image.NRGBA {
	src, _ := bench12MP()
	b := src.Bounds()
	dst := image.NewNRGBA(b)
	cx, cy, rx, ry := b.Dx()/2, b.Dy()*3/5, b.Dx()*2/5, b.Dy()/4
	for y := 0; y < b.Dy(); y++ {
		for x := 0; x < b.Dx(); x++ {
			dx, dy := float64(x-cx)/float64(rx), float64(y-cy)/float64(ry)
			if dx*dx+dy*dy <= 1 {
				i := y*src.Stride + 4*x
				copy(dst.Pix[i:i+4], src.Pix[i:i+4])
			}
		}
	}
	return dst
})

func BenchmarkDecodeConfig12MP(b *testing.B) {
	_, data := bench12MP()
	b.SetBytes(int64(len(data)))
	cpu0 := cpuTime()
	for b.Loop() {
		if _, _, _, err := codec.DecodeConfig(data, codec.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
}

func BenchmarkDecodeJPEG12MP(b *testing.B) {
	for _, o := range []int{1, 6} {
		_, data := bench12MP()
		data = withSegments(data, jpegSegment(0xE1, append([]byte("Exif\x00\x00"), exifTIFF(o, true)...)))
		name := map[int]string{1: "upright", 6: "turned"}[o]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := codec.Decode(context.Background(), data, codec.Limits{}); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu0)
		})
	}
}

func BenchmarkDecodePNG12MP(b *testing.B) {
	var buf bytes.Buffer
	if err := codec.EncodePNG(&buf, cutout12MP(), randomICC(3144)); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := codec.Decode(context.Background(), data, codec.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
}

func BenchmarkEncodeJPEG12MP(b *testing.B) {
	_, data := bench12MP()
	p, err := codec.Decode(context.Background(), data, codec.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	rgba, _ := bench12MP()
	for _, in := range []struct {
		name string
		img  image.Image
	}{{"YCbCr", p.Image}, {"RGBA", rgba}} {
		b.Run(in.name, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				if err := codec.EncodeJPEG(io.Discard, in.img, 90, p.ICC); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu0)
		})
		// The standard library, for comparison.
		b.Run(in.name+"/image-jpeg", func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				if err := jpeg.Encode(io.Discard, in.img, &jpeg.Options{Quality: 90}); err != nil {
					b.Fatal(err)
				}
			}
			reportCPU(b, cpu0)
		})
	}
}

func BenchmarkEncodePNG12MP(b *testing.B) {
	rgba, _ := bench12MP()
	for _, in := range []struct {
		name string
		img  image.Image
	}{{"opaque RGBA photo", rgba}, {"NRGBA cut-out", cutout12MP()}} {
		b.Run(in.name, func(b *testing.B) {
			var size int
			cpu0 := cpuTime()
			for b.Loop() {
				var out bytes.Buffer
				if err := codec.EncodePNG(&out, in.img, randomICC(3144)); err != nil {
					b.Fatal(err)
				}
				size = out.Len()
			}
			reportCPU(b, cpu0)
			b.ReportMetric(float64(size)/1e6, "MB/file")
		})
		// The standard library at its fastest, for comparison.
		b.Run(in.name+"/image-png-BestSpeed", func(b *testing.B) {
			enc := png.Encoder{CompressionLevel: png.BestSpeed}
			var size int
			cpu0 := cpuTime()
			for b.Loop() {
				var out bytes.Buffer
				if err := enc.Encode(&out, in.img); err != nil {
					b.Fatal(err)
				}
				size = out.Len()
			}
			reportCPU(b, cpu0)
			b.ReportMetric(float64(size)/1e6, "MB/file")
		})
	}
}

func BenchmarkHasTransparency12MP(b *testing.B) {
	rgba, _ := bench12MP()
	cpu0 := cpuTime()
	for b.Loop() {
		if codec.HasTransparency(rgba) {
			b.Fatal("opaque photo reported transparent")
		}
	}
	reportCPU(b, cpu0)
}
