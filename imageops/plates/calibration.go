package plates

import "carphoto/imageops/internal/nn"

// calibrated is each integer layer's input range (intLayers's order) on
// 120 training photos (60 of plates-web-cc0, 60 of plates-dashcam-ro) run
// through DetectUnread; zero: the layer stays in float.
// Written by go test -tags measure -run TestCalibrate -calibrate.
var calibrated = []nn.Range{
	{Lo: 0, Hi: 16.594473}, // 0 first block pw
	{Lo: 0, Hi: 22.158108}, // 1 first block pw
	{Lo: 0, Hi: 17.0608},   // 2 first block pw
	{Lo: 0, Hi: 15.854654}, // 3 first block pw
	{Lo: 0, Hi: 12.447783}, // 4 first block pw
	{Lo: 0, Hi: 12.775383}, // 5 first block pw
	{Lo: 0, Hi: 10.542889}, // 6 first block pw
	{Lo: 0, Hi: 18.591629}, // 7 first block pw
	{Lo: 0, Hi: 14.299696}, // 8 first l32
	{Lo: 0, Hi: 12.804893}, // 9 first l16
	{Lo: 0, Hi: 10.257928}, // 10 first m16 pw
	{Lo: 0, Hi: 16.66737},  // 11 first l8
	{Lo: 0, Hi: 9.555643},  // 12 first m8 pw
	{Lo: 0, Hi: 22.863426}, // 13 first r8
	{Lo: 0, Hi: 30.96443},  // 14 first l4
	{Lo: 0, Hi: 7.248665},  // 15 first m4 pw
	{Lo: 0, Hi: 7.924879},  // 16 first head
	{Lo: 0, Hi: 21.310764}, // 17 verifier block pw
	{Lo: 0, Hi: 19.671421}, // 18 verifier block pw
	{Lo: 0, Hi: 18.181227}, // 19 verifier block pw
	{Lo: 0, Hi: 15.543656}, // 20 verifier block pw
	{Lo: 0, Hi: 14.560634}, // 21 verifier block pw
}
