package textrec

import "carphoto/imageops/internal/nn"

// The layers that can run on integers (nn.Range): the backbone's pointwise
// convolutions and the neck's and head's (the 1×3 ones as the pointwise
// convolutions over nn.Shifts they are held as). The stem, the depthwise
// convolutions and the squeeze-excites (one pixel) stay in float. The input
// ranges are calibrated on plates of training photos (TestCalibrate writes
// calibration.go); floatLayers keeps some in float.

// intLayer is a layer that can run on integers: its name and the layer.
type intLayer struct {
	name string
	c    *nn.Conv
}

// intLayers lists n's integer layers in a fixed order, that of calibrated.
func (n *net) intLayers() []intLayer {
	var ls []intLayer
	for i := range n.blocks {
		ls = append(ls, intLayer{"block pw", n.blocks[i].pw})
	}
	ls = append(ls, intLayer{"conv1", n.conv1}, intLayer{"conv2", n.conv2})
	for i := range n.enc {
		e := &n.enc[i]
		ls = append(ls, intLayer{"qkv", e.qkv}, intLayer{"proj", e.proj}, intLayer{"fc1", e.fc1}, intLayer{"fc2", e.fc2})
	}
	ls = append(ls, intLayer{"conv3", n.conv3}, intLayer{"conv4", n.conv4}, intLayer{"conv5", n.conv5}, intLayer{"head", n.head})
	return ls
}

// floatLayers are the layers of intLayers kept in float: the four whose
// calibrated ranges are widest for their values (the first and last
// pointwise convolutions of the backbone, the neck's two 1×3 ones, whose
// inputs reach 77): alone in integers each changed what 3 to 5 of 210 lines
// of validation photos read (TestIntLinesMatchFloat -lines validation
// -only), and with them in float the other 24 changed 3.
var floatLayers = map[int]bool{0: true, 13: true, 14: true, 25: true}

// useInt gives n's integer layers their calibrated ranges.
func (n *net) useInt() {
	ls := n.intLayers()
	if len(ls) != len(calibrated) {
		return // stale calibration: all in float (TestCalibrated fails)
	}
	for i, l := range ls {
		if r := calibrated[i]; r != (nn.Range{}) && !floatLayers[i] {
			l.c.InRange = []nn.Range{r}
		}
	}
}
