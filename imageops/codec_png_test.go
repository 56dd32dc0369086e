package imageops

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// subFilter's word-at-a-time subtraction gives the byte-by-byte filter for
// every length and pixel size, borrows included.
func TestSubFilterMatchesBytewise(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, channels := range []int{1, 3, 4} {
		for n := 0; n <= 70; n++ {
			row := make([]byte, n)
			for i := range row {
				row[i] = byte(r.Uint32())
			}
			want := make([]byte, n)
			for i := range row {
				if i < channels {
					want[i] = row[i]
				} else {
					want[i] = row[i] - row[i-channels]
				}
			}
			got := make([]byte, n)
			subFilter(got, row, channels)
			if !bytes.Equal(got, want) {
				t.Fatalf("%d channels, %d bytes: got %v, want %v", channels, n, got, want)
			}
		}
	}
}
