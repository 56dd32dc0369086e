package plates

import (
	"carphoto/internal/testenv/datasets"
	"context"
	"image"
	"testing"

	"carphoto/internal/testenv/imgtest"
)

// A weaker detection lying mostly inside a stronger one is part of that
// plate (the dealer's text on its frame), not a second plate: it is
// dropped, while a plate beside another is kept.
func TestDetectionInsideAPlateIsDropped(t *testing.T) {
	quad := func(x0, y0, x1, y1 float64) Quad {
		return Quad{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}
	}
	v := func(p float64, x0, y0, x1, y1 float64) verified {
		return verified{p: p, first: 0.9, box: box{x0: x0, y0: y0, x1: x1, y1: y1}, quad: quad(x0, y0, x1, y1)}
	}
	judged := []verified{
		v(0.99, 30, 130, 330, 223),  // the plate
		v(0.95, 86, 203, 126, 218),  // text on its frame, inside it
		v(0.95, 400, 130, 600, 190), // another car's plate, beside it
	}
	got := DefaultSettings().Judge.plates(judged, image.Rect(0, 0, 800, 400))
	if len(got) != 2 {
		t.Fatalf("%d plates, want 2 (the plate and the one beside it): %v", len(got), got)
	}
	for _, p := range got {
		if p.Quad == quad(86, 203, 126, 218) {
			t.Errorf("the text inside the plate was kept as a plate of its own")
		}
	}
}

// On a close-up whose plate frame carries the dealer's lettering, one
// plate is found, not three.
func TestCloseUpWithFrameLettering(t *testing.T) {
	path := datasets.File(t, "plates-web-cc0", "images/plates-web-cc0-0005.jpg")
	found, err := Detect(context.Background(), imgtest.DecodeFile(t, path))
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 {
		t.Errorf("%d plates found, want 1: %v", len(found), found)
	}
}
