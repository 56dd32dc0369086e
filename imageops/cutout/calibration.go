package cutout

import "carphoto/imageops/internal/nn"

// calibrated is each convolution's input range (intLayers's order) on 40
// training photos of cars-seg, leaving out 0 of the inputs at each end;
// zero: the layer stays in float. Written by go test -tags measure -run TestCalibrate
// -calibrate.
var calibrated = []nn.Range{
	{Lo: -2.117904, Hi: 2.64}, // 0 down in: all -2.117904 to 2.64
	{Lo: 0, Hi: 18.779099},    // 1 down enc: all 0 to 18.779099
	{Lo: 0, Hi: 26.39126},     // 2 down enc: all 0 to 26.39126
	{Lo: 0, Hi: 18.220816},    // 3 down enc: all 0 to 18.220816
	{Lo: 0, Hi: 19.81985},     // 4 down enc: all 0 to 19.81985
	{Lo: 0, Hi: 17.622128},    // 5 down enc: all 0 to 17.622128
	{Lo: 0, Hi: 10.245679},    // 6 down enc: all 0 to 10.245679
	{Lo: 0, Hi: 6.5455804},    // 7 down enc: all 0 to 6.5455804
	{Lo: 0, Hi: 26.39126},     // 8 down dec: all 0 to 26.39126
	{Lo: 0, Hi: 18.220816},    // 9 down dec: all 0 to 18.220816
	{Lo: 0, Hi: 19.81985},     // 10 down dec: all 0 to 19.81985
	{Lo: 0, Hi: 17.622128},    // 11 down dec: all 0 to 17.622128
	{Lo: 0, Hi: 10.245679},    // 12 down dec: all 0 to 10.245679
	{Lo: 0, Hi: 7.850884},     // 13 down dec: all 0 to 7.850884
	{Lo: 0, Hi: 23.828442},    // 14 down in: all 0 to 23.828442
	{Lo: 0, Hi: 11.51131},     // 15 down enc: all 0 to 11.51131
	{Lo: 0, Hi: 11.855162},    // 16 down enc: all 0 to 11.855162
	{Lo: 0, Hi: 13.945837},    // 17 down enc: all 0 to 13.945837
	{Lo: 0, Hi: 9.126736},     // 18 down enc: all 0 to 9.126736
	{Lo: 0, Hi: 6.335539},     // 19 down enc: all 0 to 6.335539
	{Lo: 0, Hi: 4.869807},     // 20 down enc: all 0 to 4.869807
	{Lo: 0, Hi: 11.855162},    // 21 down dec: all 0 to 11.855162
	{Lo: 0, Hi: 13.945837},    // 22 down dec: all 0 to 13.945837
	{Lo: 0, Hi: 9.126736},     // 23 down dec: all 0 to 9.126736
	{Lo: 0, Hi: 6.335539},     // 24 down dec: all 0 to 6.335539
	{Lo: 0, Hi: 6.7814484},    // 25 down dec: all 0 to 6.7814484
	{Lo: 0, Hi: 14.452555},    // 26 down in: all 0 to 14.452555
	{Lo: 0, Hi: 10.991656},    // 27 down enc: all 0 to 10.991656
	{Lo: 0, Hi: 12.653756},    // 28 down enc: all 0 to 12.653756
	{Lo: 0, Hi: 13.330007},    // 29 down enc: all 0 to 13.330007
	{Lo: 0, Hi: 10.263126},    // 30 down enc: all 0 to 10.263126
	{Lo: 0, Hi: 5.9436226},    // 31 down enc: all 0 to 5.9436226
	{Lo: 0, Hi: 12.653756},    // 32 down dec: all 0 to 12.653756
	{Lo: 0, Hi: 13.330007},    // 33 down dec: all 0 to 13.330007
	{Lo: 0, Hi: 10.263126},    // 34 down dec: all 0 to 10.263126
	{Lo: 0, Hi: 8.622948},     // 35 down dec: all 0 to 8.622948
	{Lo: 0, Hi: 17.340132},    // 36 down in: all 0 to 17.340132
	{Lo: 0, Hi: 10.003843},    // 37 down enc: all 0 to 10.003843
	{Lo: 0, Hi: 12.344321},    // 38 down enc: all 0 to 12.344321
	{Lo: 0, Hi: 11.10982},     // 39 down enc: all 0 to 11.10982
	{Lo: 0, Hi: 7.1725616},    // 40 down enc: all 0 to 7.1725616
	{Lo: 0, Hi: 12.344321},    // 41 down dec: all 0 to 12.344321
	{Lo: 0, Hi: 11.10982},     // 42 down dec: all 0 to 11.10982
	{Lo: 0, Hi: 10.313837},    // 43 down dec: all 0 to 10.313837
	{Lo: 0, Hi: 13.776532},    // 44 down in: all 0 to 13.776532
	{Lo: 0, Hi: 9.795302},     // 45 down enc: all 0 to 9.795302
	{Lo: 0, Hi: 9.791944},     // 46 down enc: all 0 to 9.791944
	{Lo: 0, Hi: 8.139901},     // 47 down enc: all 0 to 8.139901
	{Lo: 0, Hi: 6.95686},      // 48 down enc: all 0 to 6.95686
	{Lo: 0, Hi: 9.791944},     // 49 down dec: all 0 to 9.791944
	{Lo: 0, Hi: 8.139901},     // 50 down dec: all 0 to 8.139901
	{Lo: 0, Hi: 8.4771185},    // 51 down dec: all 0 to 8.4771185
	{Lo: 0, Hi: 12.330453},    // 52 down in: all 0 to 12.330453
	{Lo: 0, Hi: 4.2546544},    // 53 down enc: all 0 to 4.2546544
	{Lo: 0, Hi: 9.675073},     // 54 down enc: all 0 to 9.675073
	{Lo: 0, Hi: 7.014012},     // 55 down enc: all 0 to 7.014012
	{Lo: 0, Hi: 6.7836003},    // 56 down enc: all 0 to 6.7836003
	{Lo: 0, Hi: 9.675073},     // 57 down dec: all 0 to 9.675073
	{Lo: 0, Hi: 7.0803185},    // 58 down dec: all 0 to 7.0803185
	{Lo: 0, Hi: 7.9250665},    // 59 down dec: all 0 to 7.9250665
	{Lo: 0, Hi: 26.661417},    // 60 up in: all 0 to 26.661417
	{Lo: 0, Hi: 5.6698885},    // 61 up enc: all 0 to 5.6698885
	{Lo: 0, Hi: 12.536924},    // 62 up enc: all 0 to 12.536924
	{Lo: 0, Hi: 11.1692505},   // 63 up enc: all 0 to 11.1692505
	{Lo: 0, Hi: 12.320938},    // 64 up enc: all 0 to 12.320938
	{Lo: 0, Hi: 10.934753},    // 65 up enc: all 0 to 10.934753
	{Lo: 0, Hi: 9.53204},      // 66 up enc: all 0 to 9.53204
	{Lo: 0, Hi: 7.5132523},    // 67 up enc: all 0 to 7.5132523
	{Lo: 0, Hi: 48.40686},     // 68 up dec: all 0 to 48.40686
	{Lo: 0, Hi: 53.655567},    // 69 up dec: all 0 to 53.655567
	{Lo: 0, Hi: 12.320938},    // 70 up dec: all 0 to 12.320938
	{Lo: 0, Hi: 10.934753},    // 71 up dec: all 0 to 10.934753
	{Lo: 0, Hi: 9.53204},      // 72 up dec: all 0 to 9.53204
	{Lo: 0, Hi: 8.441688},     // 73 up dec: all 0 to 8.441688
	{Lo: 0, Hi: 14.452555},    // 74 up in: all 0 to 14.452555
	{Lo: 0, Hi: 6.0260377},    // 75 up enc: all 0 to 6.0260377
	{Lo: 0, Hi: 26.463223},    // 76 up enc: all 0 to 26.463223
	{Lo: 0, Hi: 10.634702},    // 77 up enc: all 0 to 10.634702
	{Lo: 0, Hi: 12.147288},    // 78 up enc: all 0 to 12.147288
	{Lo: 0, Hi: 10.132255},    // 79 up enc: all 0 to 10.132255
	{Lo: 0, Hi: 7.1765304},    // 80 up enc: all 0 to 7.1765304
	{Lo: 0, Hi: 228.09879},    // 81 up dec: all 0 to 228.09879
	{Lo: 0, Hi: 10.634702},    // 82 up dec: all 0 to 10.634702
	{Lo: 0, Hi: 12.147288},    // 83 up dec: all 0 to 12.147288
	{Lo: 0, Hi: 10.132255},    // 84 up dec: all 0 to 10.132255
	{Lo: 0, Hi: 7.1765304},    // 85 up dec: all 0 to 7.1765304
	{Lo: 0, Hi: 17.340132},    // 86 up in: all 0 to 17.340132
	{Lo: 0, Hi: 5.765892},     // 87 up enc: all 0 to 5.765892
	{Lo: 0, Hi: 8.908864},     // 88 up enc: all 0 to 8.908864
	{Lo: 0, Hi: 7.893866},     // 89 up enc: all 0 to 7.893866
	{Lo: 0, Hi: 8.916918},     // 90 up enc: all 0 to 8.916918
	{Lo: 0, Hi: 6.8352523},    // 91 up enc: all 0 to 6.8352523
	{Lo: 0, Hi: 8.908864},     // 92 up dec: all 0 to 8.908864
	{Lo: 0, Hi: 7.893866},     // 93 up dec: all 0 to 7.893866
	{Lo: 0, Hi: 8.916918},     // 94 up dec: all 0 to 8.916918
	{Lo: 0, Hi: 8.11886},      // 95 up dec: all 0 to 8.11886
	{Lo: 0, Hi: 13.776532},    // 96 up in: all 0 to 13.776532
	{Lo: 0, Hi: 5.398623},     // 97 up enc: all 0 to 5.398623
	{Lo: 0, Hi: 9.722261},     // 98 up enc: all 0 to 9.722261
	{Lo: 0, Hi: 10.855652},    // 99 up enc: all 0 to 10.855652
	{Lo: 0, Hi: 9.575503},     // 100 up enc: all 0 to 9.575503
	{Lo: 0, Hi: 9.722261},     // 101 up dec: all 0 to 9.722261
	{Lo: 0, Hi: 10.855652},    // 102 up dec: all 0 to 10.855652
	{Lo: 0, Hi: 9.928855},     // 103 up dec: all 0 to 9.928855
	{Lo: 0, Hi: 12.330453},    // 104 up in: all 0 to 12.330453
	{Lo: 0, Hi: 5.44152},      // 105 up enc: all 0 to 5.44152
	{Lo: 0, Hi: 8.164918},     // 106 up enc: all 0 to 8.164918
	{Lo: 0, Hi: 7.5960345},    // 107 up enc: all 0 to 7.5960345
	{Lo: 0, Hi: 6.8445673},    // 108 up enc: all 0 to 6.8445673
	{Lo: 0, Hi: 8.164918},     // 109 up dec: all 0 to 8.164918
	{Lo: 0, Hi: 7.5960345},    // 110 up dec: all 0 to 7.5960345
	{Lo: 0, Hi: 7.44782},      // 111 up dec: all 0 to 7.44782
	{Lo: 0, Hi: 6.062921},     // 112 side: all 0 to 6.062921
	{Lo: 0, Hi: 26.661417},    // 113 side: all 0 to 26.661417
	{Lo: 0, Hi: 11.5440445},   // 114 side: all 0 to 11.5440445
	{Lo: 0, Hi: 11.329409},    // 115 side: all 0 to 11.329409
	{Lo: 0, Hi: 8.249531},     // 116 side: all 0 to 8.249531
	{Lo: 0, Hi: 6.8807783},    // 117 side: all 0 to 6.8807783
}
