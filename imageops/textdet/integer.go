package textdet

import (
	"slices"

	"carphoto/imageops/internal/nn"
)

// The layers that can run on integers (nn.Range): the pointwise
// convolutions of the backbone and the neck's narrowing and widening ones,
// and the neck's and the head's 3×3 convolutions; floatLayers keeps some in
// float. The stem, the depthwise convolutions, the squeeze-excites and the
// transposed convolutions stay in float: they are a small part of the
// multiply-adds. The input ranges are calibrated on training photos
// (TestCalibrate writes calibration.go, and calibration_channels.go for
// the layers of perChannel).

// intLayer is a layer that can run on integers: where its calibrated range
// and its calibration record live, and its input channels (0: they vary).
type intLayer struct {
	name string
	in8  *[]nn.Range
	seen *nn.Observer
	cin  int
}

// intLayers lists n's integer layers in a fixed order, that of calibrated.
func (n *net) intLayers() []intLayer {
	var ls []intLayer
	conv := func(name string, c *nn.Conv) { ls = append(ls, intLayer{name, &c.InRange, &c.Seen, c.Cin}) }
	dil := func(name string, c *nn.Dil3) { ls = append(ls, intLayer{name, &c.InRange, &c.Seen, c.Cin}) }
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
	ls = append(ls, intLayer{"finest", &n.finestIn, &n.finestSeen, 0})
	dil("head", n.head)
	return ls
}

// floatLayers are the layers of intLayers kept in float: alone in integers
// each moved the probability map most on validation photos (by 0.11 to
// 0.19 at a pixel; TestSensitivity), and with them in integers text
// regions moved on validation photos (TestIntRegionsMatchFloat -tune):
// block 4's and block 12's pointwise convolutions, the coarsest level's
// narrowing and widening ones. (With a range for each of their input
// channels, too, validation regions moved by up to 52 working pixels.)
var floatLayers = map[int]bool{4: true, 12: true, 17: true, 20: true}

// perChannel are the layers of intLayers that run on integers with a
// range for each input channel (calibratedChannels), not one for all: the
// neck's 3×3 convolutions of the three coarser levels and the head's.
// Their inputs' channels differ in scale by up to a hundred times (one
// range for all, -2 500 to 1 400, left most channels a few dozen steps);
// with one range each, they held the float network's regions on held-out
// and validation photos where with one for all they did not (docs/research/performance.md).
var perChannel = []int{21, 22, 23, 25}

// useInt gives n's integer layers their calibrated ranges.
func (n *net) useInt() {
	ls := n.intLayers()
	if len(ls) != len(calibrated) {
		return // stale calibration: all in float (TestCalibrated fails)
	}
	for i, l := range ls {
		if r := calibrated[i]; r != (nn.Range{}) && !floatLayers[i] && !slices.Contains(perChannel, i) {
			*l.in8 = []nn.Range{r}
		}
	}
	for _, i := range perChannel {
		if rs := calibratedChannels[i]; len(rs) == ls[i].cin {
			*ls[i].in8 = rs
		} // else stale: that layer in float (TestCalibrated fails)
	}
}
