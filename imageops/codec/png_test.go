package codec

import (
	"bytes"
	stdadler32 "hash/adler32"
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

// adler32 is hash/adler32's checksum, across the lengths where its modulo
// steps fall and from a running sum.
func TestAdler32MatchesHashAdler32(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{0, 1, 7, 8, 9, 63, 5551, 5552, 5553, 20000, 100003} {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(r.Uint32())
		}
		if n == 20000 {
			for i := range p {
				p[i] = 0xff // the largest sums
			}
		}
		if got, want := adler32(1, p), stdadler32.Checksum(p); got != want {
			t.Errorf("%d bytes: %08x, want %08x", n, got, want)
		}
		h := stdadler32.New()
		h.Write(p[:n/3])
		h.Write(p[n/3:])
		if got, want := adler32(adler32(1, p[:n/3]), p[n/3:]), h.Sum32(); got != want {
			t.Errorf("%d bytes in two parts: %08x, want %08x", n, got, want)
		}
	}
}
