package jpegblock

import (
	"bytes"
	"image/jpeg"
	"os"
	"testing"
)

// BenchmarkParse12MP reads a 12 MP 4:2:0 JPEG's scan once and builds the
// quarter-scale preview: the work the block path does for every photo
// before the plate finder runs. BLOCK_BENCH_JPEG names another file.
func BenchmarkParse12MP(b *testing.B) {
	data := benchJPEG(b)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := Parse(data, 1, 640); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeImage12MP decodes a 12 MP 4:2:0 JPEG whole, beside the
// standard library's decoder. BLOCK_BENCH_JPEG names another file.
func BenchmarkDecodeImage12MP(b *testing.B) {
	data := benchJPEG(b)
	b.Run("jpegblock", func(b *testing.B) {
		for b.Loop() {
			if _, err := DecodeImage(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("image-jpeg", func(b *testing.B) {
		for b.Loop() {
			if _, err := jpeg.Decode(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchJPEG is the file BLOCK_BENCH_JPEG names, or a synthetic 12 MP
// 4:2:0 JPEG.
func benchJPEG(b *testing.B) []byte {
	if p := os.Getenv("BLOCK_BENCH_JPEG"); p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	return encodeGo(b, photo(4000, 3000))
}
