package jpegblock

import "testing"

func TestQualityInvertsIJGScaling(t *testing.T) {
	for q := 1; q <= 100; q++ {
		var tab [64]uint16
		for i, v := range ijgTable(&stdLuminanceQuant, q, 255) {
			tab[i] = uint16(v)
		}
		// Clamping to 255 makes a few of the lowest qualities share a
		// table; any quality with the same table is right.
		if got := Quality(tab, 0); ijgTable(&stdLuminanceQuant, got, 255) != ijgTable(&stdLuminanceQuant, q, 255) {
			t.Errorf("quality %d estimated as %d", q, got)
		}
	}
}
