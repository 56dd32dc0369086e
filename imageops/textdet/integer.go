package textdet

import "carphoto/imageops/internal/nn"

// The layers that can run on integers (nn.Range): the pointwise
// convolutions of the backbone and the neck's narrowing and widening ones,
// and the neck's and the head's 3×3 convolutions; floatLayers keeps some in
// float. The stem, the depthwise convolutions, the squeeze-excites and the
// transposed convolutions stay in float: they are a small part of the
// multiply-adds. The input ranges are calibrated on training photos
// (TestCalibrate writes calibration.go).

// intLayer is a layer that can run on integers: where its calibrated range
// and its calibration record live.
type intLayer struct {
	name string
	in8  *[]nn.Range
	seen *nn.Observer
}

// intLayers lists n's integer layers in a fixed order, that of calibrated.
func (n *net) intLayers() []intLayer {
	var ls []intLayer
	conv := func(name string, c *nn.Conv) { ls = append(ls, intLayer{name, &c.InRange, &c.Seen}) }
	dil := func(name string, c *nn.Dil3) { ls = append(ls, intLayer{name, &c.InRange, &c.Seen}) }
	for i := range n.blocks {
		conv("block pw", n.blocks[i].pw)
	}
	for i := range n.narrow {
		conv("narrow", n.narrow[i])
	}
	for i := 1; i < 4; i++ { // ins[0] runs on means only
		conv("ins", n.ins[i])
	}
	for i := 1; i < 4; i++ {
		dil("inp", n.inp[i])
	}
	ls = append(ls, intLayer{"finest", &n.finestIn, &n.finestSeen})
	dil("head", n.head)
	return ls
}

// floatLayers are the layers of intLayers kept in float: alone in integers
// each moved the probability map most on validation photos (by 0.11 to
// 0.19 at a pixel; TestSensitivity), and with them in integers text
// regions moved on validation photos (TestIntRegionsMatchFloat -tune):
// block 4's and block 12's pointwise convolutions, the coarsest level's
// narrowing and widening ones, the neck's 3×3 convolutions of the coarser
// levels and the head's.
var floatLayers = map[int]bool{4: true, 12: true, 17: true, 20: true, 21: true, 22: true, 23: true, 25: true}

// useInt gives n's integer layers their calibrated ranges.
func (n *net) useInt() {
	ls := n.intLayers()
	if len(ls) != len(calibrated) {
		return // stale calibration: all in float (TestCalibrated fails)
	}
	for i, l := range ls {
		if r := calibrated[i]; r != (nn.Range{}) && !floatLayers[i] {
			*l.in8 = []nn.Range{r}
		}
	}
}
