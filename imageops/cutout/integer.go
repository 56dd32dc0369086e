package cutout

import "carphoto/imageops/internal/nn"

// U²-Net-p's 3×3 convolutions run on integers (nn.Range) where that leaves
// the mask as it was: their input ranges are calibrated on training photos
// of cars-seg (TestCalibrate writes calibration.go).

// intLayer is a convolution that can run on integers.
type intLayer struct {
	name string
	c    *nn.Dil3
}

// intLayers lists n's convolutions in a fixed order, that of calibrated.
func (n *u2net) intLayers() []intLayer {
	var ls []intLayer
	add := func(name string, b *rsu) {
		ls = append(ls, intLayer{name + " in", b.in})
		for _, c := range b.enc {
			ls = append(ls, intLayer{name + " enc", c})
		}
		for _, c := range b.dec {
			ls = append(ls, intLayer{name + " dec", c})
		}
	}
	for _, b := range n.down {
		add("down", b)
	}
	for _, b := range n.up {
		add("up", b)
	}
	for _, c := range n.side {
		ls = append(ls, intLayer{"side", c})
	}
	return ls
}

// useInt gives n's convolutions their calibrated ranges; a zero range
// keeps a layer in float.
func (n *u2net) useInt() {
	ls := n.intLayers()
	if len(ls) != len(calibrated) {
		return // stale calibration: all in float (TestCalibrated fails)
	}
	for i, l := range ls {
		if r := calibrated[i]; r != (nn.Range{}) {
			l.c.InRange = []nn.Range{r}
		}
	}
}
