package jpegblock

import (
	"os"
	"testing"
)

// BenchmarkParse12MP reads a 12 MP 4:2:0 JPEG's scan once and builds the
// quarter-scale preview: the work the block path does for every photo
// before the plate finder runs. BLOCK_BENCH_JPEG names another file.
func BenchmarkParse12MP(b *testing.B) {
	var data []byte
	if p := os.Getenv("BLOCK_BENCH_JPEG"); p != "" {
		var err error
		if data, err = os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	} else {
		data = encodeGo(b, photo(4000, 3000))
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := Parse(data, 1, 640); err != nil {
			b.Fatal(err)
		}
	}
}
