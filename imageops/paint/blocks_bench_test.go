package paint

import (
	"context"
	"os"
	"testing"

	"carphoto/imageops/codec"
	"carphoto/imageops/plates"
)

// BenchmarkBlockBlur12MP is blur-plates on a 12 MP baseline JPEG through
// the block path, by stage: open (read the scan, build the preview),
// detect (the plate finder on the preview and its windows' blocks) and
// hide (blur the plates' MCUs, copy the rest). BLOCK_BENCH_JPEG names the
// photo; without it the benchmark uses a synthetic one with a plate.
func BenchmarkBlockBlur12MP(b *testing.B) {
	ctx := context.Background()
	data := blockPhoto(b, 4000, 3000)
	if p := os.Getenv("BLOCK_BENCH_JPEG"); p != "" {
		var err error
		if data, err = os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	}
	open := func() *BlockJPEG {
		src, err := OpenBlockJPEG(ctx, data, codec.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		return src
	}
	detect := func(src *BlockJPEG) []plates.Quad {
		found, err := plates.DetectIn(ctx, src)
		if err != nil {
			b.Fatal(err)
		}
		var quads []plates.Quad
		for _, f := range found {
			quads = append(quads, f.Quad)
		}
		return quads
	}
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			open()
		}
	})
	b.Run("detect", func(b *testing.B) {
		src := open()
		for b.Loop() {
			detect(src)
		}
	})
	b.Run("hide", func(b *testing.B) {
		src := open()
		quads := detect(src)
		b.ReportMetric(float64(len(quads)), "plates")
		for b.Loop() {
			if _, err := src.HidePlates(ctx, quads, StyleBlur); err != nil {
				b.Fatal(err)
			}
		}
	})
}
