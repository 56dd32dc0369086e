package plates

import "carphoto/imageops/internal/nn"

// The layers that can run on integers (nn.Range): the pointwise
// convolutions of the first stage (its blocks', the pyramid's laterals and
// the head) and of the verifier's blocks. The stems (3×3 over the colours),
// the depthwise convolutions and the verifier's two dense layers (on a 1×1
// map, which nn runs in float) stay in float. The input ranges are
// calibrated on training photos (TestCalibrate writes calibration.go);
// floatLayers keeps some in float. Only the embedded networks get them:
// the research networks of NewStages run in float.

// intLayer is a layer that can run on integers: its name and the layer.
type intLayer struct {
	name string
	c    *nn.Conv
}

// intLayers lists the first stage's then the jury's integer layers in a
// fixed order, that of calibrated.
func intLayers(n *net, j jury) []intLayer {
	var ls []intLayer
	for _, b := range []block{n.b4a, n.b4b, n.b8a, n.b8b, n.b16a, n.b16b, n.b32a, n.b32b} {
		ls = append(ls, intLayer{"first block pw", b.pw})
	}
	ls = append(ls,
		intLayer{"first l32", n.l32}, intLayer{"first l16", n.l16}, intLayer{"first m16 pw", n.m16.pw},
		intLayer{"first l8", n.l8}, intLayer{"first m8 pw", n.m8.pw}, intLayer{"first r8", n.r8},
		intLayer{"first l4", n.l4}, intLayer{"first m4 pw", n.m4.pw}, intLayer{"first head", n.head})
	for _, v := range j {
		for _, b := range v.blocks {
			ls = append(ls, intLayer{"verifier block pw", b.pw})
		}
	}
	return ls
}

// floatLayers are the layers of intLayers kept in float: all of them for
// now. On the validation photos of both plate sets (TestIntPlatesMatchFloat
// -photos validation -only) the first stage's backbone alone on integers
// moved 2 and 4 labelled plates across bench plates' 95%-hidden line, its
// pyramid and head alone 2 and 2, the verifier's five 2 (dash-cam, 104 →
// 102); its last three alone found the same 77 and 104 (2 dash-cam plates
// swapped) but changed 40 of 132 recorded answers (TestAnswers) and added
// a detection on plates-web-cc0-0415 where none is labelled.
var floatLayers = func() map[int]bool {
	m := map[int]bool{}
	for i := range 22 {
		m[i] = true
	}
	return m
}()

// useInt gives the integer layers of n and j their calibrated ranges.
func useInt(n *net, j jury) {
	ls := intLayers(n, j)
	if len(ls) != len(calibrated) {
		return // stale calibration: all in float (TestCalibrated fails)
	}
	for i, l := range ls {
		if r := calibrated[i]; r != (nn.Range{}) && !floatLayers[i] {
			l.c.InRange = []nn.Range{r}
		}
	}
}
