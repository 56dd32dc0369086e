package imgtest

import (
	"bytes"
	"encoding/binary"
	"image/color"
	"math"
)

// A colour profile of a real colour space, for the tests of what the
// service does with a photo's profile: Display P3's, built here, and the
// sRGB values its colours should come out as by the profiles' own
// arithmetic.

// The D50-adapted colorants of Display P3 and of sRGB, as their published
// profiles carry them, and the D50 white.
var (
	p3Colorants   = [3][3]float64{{0.515121, 0.241196, -0.001053}, {0.291977, 0.692245, 0.041885}, {0.157104, 0.066574, 0.784073}}
	srgbColorants = [3][3]float64{{0.436066, 0.222488, 0.013916}, {0.385147, 0.716873, 0.097076}, {0.143066, 0.060608, 0.714096}}
	d50           = [3]float64{0.964203, 1.0, 0.824905}
)

func srgbDecode(v float64) float64 {
	if v <= 0.04045 {
		return v / 12.92
	}
	return math.Pow((v+0.055)/1.055, 2.4)
}

func srgbEncode(v float64) float64 {
	if v <= 0.0031308 {
		return 12.92 * v
	}
	return 1.055*math.Pow(v, 1/2.4) - 0.055
}

// DisplayP3Profile writes an ICC v2 display profile of Display P3 whose tone
// curves are sampled at samples points each (real profiles ship 1,024 or
// 4,096; more makes a profile of any size, as a camera's or an editor's
// large profiles are).
func DisplayP3Profile(samples int) []byte {
	type tag struct {
		sig  string
		data []byte
	}
	xyz := func(v [3]float64) []byte {
		b := make([]byte, 20)
		copy(b, "XYZ ")
		for i, c := range v {
			binary.BigEndian.PutUint32(b[8+4*i:], uint32(int32(math.Round(c*65536))))
		}
		return b
	}
	curve := make([]byte, 12+2*samples)
	copy(curve, "curv")
	binary.BigEndian.PutUint32(curve[8:], uint32(samples))
	for i := range samples {
		v := srgbDecode(float64(i) / float64(samples-1))
		binary.BigEndian.PutUint16(curve[12+2*i:], uint16(math.Round(v*65535)))
	}
	desc := make([]byte, 12+12+67+4+16)
	copy(desc, "desc")
	binary.BigEndian.PutUint32(desc[8:], 11)
	copy(desc[12:], "Display P3\x00")
	tags := []tag{{"desc", desc}, {"wtpt", xyz(d50)},
		{"rXYZ", xyz(p3Colorants[0])}, {"gXYZ", xyz(p3Colorants[1])}, {"bXYZ", xyz(p3Colorants[2])},
		{"rTRC", curve}, {"gTRC", curve}, {"bTRC", curve}, {"cprt", append([]byte("text\x00\x00\x00\x00"), "none\x00"...)}}
	table := 4 + 12*len(tags)
	offset := 128 + table
	var body bytes.Buffer
	head := make([]byte, 128+table)
	binary.BigEndian.PutUint32(head[128:], uint32(len(tags)))
	var curveAt int
	for i, t := range tags {
		e := head[132+12*i:]
		copy(e, t.sig)
		at := offset + body.Len()
		if t.sig == "gTRC" || t.sig == "bTRC" {
			at = curveAt // the three curves share one copy
		} else {
			if t.sig == "rTRC" {
				curveAt = at
			}
			body.Write(t.data)
			for body.Len()%4 != 0 {
				body.WriteByte(0)
			}
		}
		binary.BigEndian.PutUint32(e[4:], uint32(at))
		binary.BigEndian.PutUint32(e[8:], uint32(len(t.data)))
	}
	p := append(head, body.Bytes()...)
	binary.BigEndian.PutUint32(p[0:], uint32(len(p)))
	binary.BigEndian.PutUint32(p[8:], 0x02100000)
	copy(p[12:], "mntr")
	copy(p[16:], "RGB ")
	copy(p[20:], "XYZ ")
	copy(p[36:], "acsp")
	for i, c := range d50 {
		binary.BigEndian.PutUint32(p[68+4*i:], uint32(int32(math.Round(c*65536))))
	}
	return p
}

// P3ToSRGB is the colour c of Display P3 in sRGB by the profiles' own
// arithmetic (relative colorimetric: linear light through both colorant
// matrices), clipped to sRGB's gamut.
func P3ToSRGB(c color.NRGBA) [3]float64 {
	var xyz [3]float64
	for i, v := range [3]uint8{c.R, c.G, c.B} {
		l := srgbDecode(float64(v) / 255)
		for k := range 3 {
			xyz[k] += l * p3Colorants[i][k]
		}
	}
	// Invert sRGB's colorant matrix (its columns are the colorants).
	m := [3][3]float64{}
	for i := range 3 {
		for k := range 3 {
			m[k][i] = srgbColorants[i][k]
		}
	}
	det := m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) - m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) + m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])
	inv := [3][3]float64{
		{(m[1][1]*m[2][2] - m[1][2]*m[2][1]) / det, (m[0][2]*m[2][1] - m[0][1]*m[2][2]) / det, (m[0][1]*m[1][2] - m[0][2]*m[1][1]) / det},
		{(m[1][2]*m[2][0] - m[1][0]*m[2][2]) / det, (m[0][0]*m[2][2] - m[0][2]*m[2][0]) / det, (m[0][2]*m[1][0] - m[0][0]*m[1][2]) / det},
		{(m[1][0]*m[2][1] - m[1][1]*m[2][0]) / det, (m[0][1]*m[2][0] - m[0][0]*m[2][1]) / det, (m[0][0]*m[1][1] - m[0][1]*m[1][0]) / det},
	}
	var out [3]float64
	for i := range 3 {
		l := inv[i][0]*xyz[0] + inv[i][1]*xyz[1] + inv[i][2]*xyz[2]
		out[i] = 255 * srgbEncode(min(max(l, 0), 1))
	}
	return out
}
