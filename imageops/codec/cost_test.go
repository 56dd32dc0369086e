package codec_test

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"

	"carphoto"
	"carphoto/imageops/codec"
)

// An honest 60 MP lossless file, a few kilobytes, is refused from its
// header before any pixel is decoded: 400 invalid_params naming what its
// decode would take and what would fit, with under 1 MB allocated (its
// decode would take 480 MB, the PNG's 240 MB, and seconds of CPU).
func TestDecodeCostRefusedFromHeader(t *testing.T) {
	for _, tc := range []struct {
		file, want string
	}{
		{"sixty-lossless.webp", "7745×7745 lossless WebP: decoding it would take 457 MB"},
		{"sixty.png", "7745×7745 PNG: decoding it would take 228 MB"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = codec.Decode(context.Background(), data, codec.Limits{})
			runtime.ReadMemStats(&after)
			if carphoto.ErrorCode(err) != carphoto.EInvalidParams || !strings.Contains(carphoto.ErrorMessage(err), tc.want) {
				t.Fatalf("Decode: %v; want invalid_params saying %q", err, tc.want)
			}
			if !strings.Contains(carphoto.ErrorMessage(err), "send it as a JPEG") {
				t.Errorf("message %q does not say what to send instead", carphoto.ErrorMessage(err))
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Errorf("refusing it allocated %d KB, want under 1 MB", n>>10)
			}
			if _, _, _, err := codec.DecodeConfig(data, codec.Limits{}); carphoto.ErrorCode(err) != carphoto.EInvalidParams {
				t.Errorf("DecodeConfig (the web's check): %v, want the same refusal", err)
			}
			if testing.Short() {
				return
			}
			// Under a budget that holds it, the same file decodes: the
			// estimate refuses by cost, not by kind.
			img, err := codec.Decode(context.Background(), data, codec.Limits{MaxDecodeBytes: 1 << 30})
			if err != nil || img.Image.Bounds().Dx() != 7745 {
				t.Fatalf("Decode under a 1 GB budget: %v", err)
			}
		})
	}
}
