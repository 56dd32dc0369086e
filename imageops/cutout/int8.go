package cutout

import "carphoto/imageops/internal/nn"

// U²-Net-p's 3×3 convolutions run in 8 bits (nn.Range) where that leaves
// the mask as it was: their input ranges are calibrated on training photos
// of cars-seg (TestCalibrate writes calibration.go).

// layer8 is a convolution that can run in 8 bits.
type layer8 struct {
	name string
	c    *nn.Dil3
}

// layers8 lists n's convolutions in a fixed order, that of calibrated.
func (n *u2net) layers8() []layer8 {
	var ls []layer8
	add := func(name string, b *rsu) {
		ls = append(ls, layer8{name + " in", b.in})
		for _, c := range b.enc {
			ls = append(ls, layer8{name + " enc", c})
		}
		for _, c := range b.dec {
			ls = append(ls, layer8{name + " dec", c})
		}
	}
	for _, b := range n.down {
		add("down", b)
	}
	for _, b := range n.up {
		add("up", b)
	}
	for _, c := range n.side {
		ls = append(ls, layer8{"side", c})
	}
	return ls
}

// use8 gives n's convolutions their calibrated ranges; a zero range
// keeps a layer in float.
func (n *u2net) use8() {
	ls := n.layers8()
	if len(ls) != len(calibrated) {
		return // stale calibration: all in float (TestCalibrated fails)
	}
	for i, l := range ls {
		if r := calibrated[i]; r != (nn.Range{}) {
			l.c.In8 = []nn.Range{r}
		}
	}
}
