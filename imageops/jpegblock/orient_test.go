package jpegblock

import "testing"

// TestToDisplayedInvertsToStored walks every displayed pixel of odd-sized
// images to its stored pixel and back, for every orientation.
func TestToDisplayedInvertsToStored(t *testing.T) {
	for _, size := range [][2]int{{5, 3}, {1, 4}, {7, 1}, {4, 4}} {
		w, h := size[0], size[1] // stored
		for o := 1; o <= 8; o++ {
			dw, dh := w, h
			if o >= 5 {
				dw, dh = h, w
			}
			seen := map[[2]int]bool{}
			for y := range dh {
				for x := range dw {
					sx, sy := ToStored(o, x, y, w, h)
					if sx < 0 || sx >= w || sy < 0 || sy >= h || seen[[2]int{sx, sy}] {
						t.Fatalf("%d×%d orientation %d: displayed (%d,%d) maps to stored (%d,%d), outside or taken twice", w, h, o, x, y, sx, sy)
					}
					seen[[2]int{sx, sy}] = true
					if gx, gy := ToDisplayed(o, sx, sy, w, h); gx != x || gy != y {
						t.Fatalf("%d×%d orientation %d: (%d,%d) comes back as (%d,%d)", w, h, o, x, y, gx, gy)
					}
				}
			}
		}
	}
}
