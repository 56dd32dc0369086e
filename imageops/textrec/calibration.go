package textrec

import "carphoto/imageops/internal/nn"

// calibrated is each integer layer's input range (intLayers's order) on the
// 377 lines (labelled plates and the text detector's line-shaped regions) of
// 60 training photos of plates-web-cc0 and 60 of plates-dashcam-ro; zero:
// the layer stays in float.
// Written by go test -tags measure -run TestCalibrate -calibrate.
var calibrated = []nn.Range{
	{Lo: -0.06278485, Hi: 4.1946335},  // 0 block pw
	{Lo: -0.022777228, Hi: 2.4883356}, // 1 block pw
	{Lo: -0.011652965, Hi: 1.5367067}, // 2 block pw
	{Lo: -0.012272582, Hi: 0.489064},  // 3 block pw
	{Lo: -0.01635743, Hi: 0.4895133},  // 4 block pw
	{Lo: -0.00877025, Hi: 0.27065292}, // 5 block pw
	{Lo: -0.04436619, Hi: 0.41357434}, // 6 block pw
	{Lo: -0.015868409, Hi: 0.4503685}, // 7 block pw
	{Lo: -0.016956318, Hi: 0.641994},  // 8 block pw
	{Lo: -0.020376237, Hi: 0.5722201}, // 9 block pw
	{Lo: -0.68802196, Hi: 2.4189053},  // 10 block pw
	{Lo: -0.93834764, Hi: 3.3964498},  // 11 block pw
	{Lo: -0.026342226, Hi: 1.1788328}, // 12 block pw
	{Lo: -0.14908664, Hi: 7.8050203},  // 13 block pw
	{Lo: -1.3269677, Hi: 77.1956},     // 14 conv1
	{Lo: -0.27846456, Hi: 4.8858037},  // 15 conv2
	{Lo: -2.1756213, Hi: 4.1148243},   // 16 qkv
	{Lo: -2.7964604, Hi: 1.666804},    // 17 proj
	{Lo: -2.9046388, Hi: 8.359901},    // 18 fc1
	{Lo: -0.27846456, Hi: 4.6193476},  // 19 fc2
	{Lo: -3.1051645, Hi: 6.0985723},   // 20 qkv
	{Lo: -4.931004, Hi: 2.6001897},    // 21 proj
	{Lo: -4.7841616, Hi: 7.8691206},   // 22 fc1
	{Lo: -0.27846456, Hi: 5.9910665},  // 23 fc2
	{Lo: -1.4555954, Hi: 1.8187939},   // 24 conv3
	{Lo: -1.3269677, Hi: 77.1956},     // 25 conv4
	{Lo: -0.27846453, Hi: 1.3954928},  // 26 conv5
	{Lo: -0.27846456, Hi: 12.701152},  // 27 head
}
