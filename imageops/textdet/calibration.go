package textdet

import "carphoto/imageops/internal/nn"

// calibrated is each integer layer's input range (intLayers's order) on 40
// training photos of plates-web-cc0 and 40 of plates-dashcam-ro at side 960,
// leaving out 0 of the inputs at each end; zero: the layer stays in float.
// Written by go test -tags measure -run TestCalibrate -calibrate.
var calibrated = []nn.Range{
	{Lo: -0.1861944, Hi: 32.83806},   // 0 block pw
	{Lo: -8.41645, Hi: 11.133596},    // 1 block pw
	{Lo: -0.18557093, Hi: 38.28929},  // 2 block pw
	{Lo: -8.137497, Hi: 9.008865},    // 3 block pw
	{Lo: -0.14906989, Hi: 11.703621}, // 4 block pw
	{Lo: -12.377221, Hi: 9.394821},   // 5 block pw
	{Lo: -0.12484193, Hi: 5.6719995}, // 6 block pw
	{Lo: -0.1328111, Hi: 8.906657},   // 7 block pw
	{Lo: -0.103266455, Hi: 9.020069}, // 8 block pw
	{Lo: -0.10144137, Hi: 6.4336114}, // 9 block pw
	{Lo: -9.483007, Hi: 10.971804},   // 10 block pw
	{Lo: -1.2053785, Hi: 59.874386},  // 11 block pw
	{Lo: -0.06272505, Hi: 16.46619},  // 12 block pw
	{Lo: -0.10469858, Hi: 20.314995}, // 13 block pw
	{Lo: -0.80714756, Hi: 41.291992}, // 14 narrow
	{Lo: -0.41027167, Hi: 14.924382}, // 15 narrow
	{Lo: -0.2161345, Hi: 13.709698},  // 16 narrow
	{Lo: -0.431345, Hi: 226.25029},   // 17 narrow
	{Lo: -23.149988, Hi: 26.400032},  // 18 ins
	{Lo: -21.928482, Hi: 19.101442},  // 19 ins
	{Lo: -454.5462, Hi: 542.41455},   // 20 ins
	{Lo: -2534.312, Hi: 1435.2269},   // 21 inp
	{Lo: -2527.4504, Hi: 1433.4993},  // 22 inp
	{Lo: -2525.4346, Hi: 1432.4392},  // 23 inp
	{Lo: -49.6285, Hi: 42.941647},    // 24 finest
	{Lo: -27345.96, Hi: 19050.424},   // 25 head
}
