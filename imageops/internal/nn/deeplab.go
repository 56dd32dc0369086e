package nn

import (
	"encoding/binary"
	"math"
)

// The layers DeepLabv3 on MobileNetV2 adds to the kit: ReLU6 (an Act),
// depthwise 3×3 at dilation 2 (as the 5×5 kernel it equals), bilinear
// resampling with the corners aligned (TensorFlow's align_corners), and
// weights stored as uint8 with a scale and zero point, as TFLite quantised
// them.

// relu6 clamps p to [0, 6] in place.
func relu6(p []float32) {
	if use.avx2 && len(p) >= 8 {
		relu6AVX2(&p[0], len(p))
		p = p[len(p)&^7:]
	}
	for i, v := range p {
		if v < 0 {
			p[i] = 0
		} else if v > 6 {
			p[i] = 6
		}
	}
}

// Dilated2As5 returns the weights of c depthwise 3×3 kernels at dilation 2
// (c×1×3×3) as 5×5 kernels with zeros between the taps (c×1×5×5): a Depth5
// convolution with them (padding 2) is the dilated one, exactly. It costs
// 25 multiply-adds a pixel against 9, on the small late maps where the
// networks dilate.
func Dilated2As5(w []float32, c int) []float32 {
	out := make([]float32, c*25)
	for ch := range c {
		for ky := range 3 {
			for kx := range 3 {
				out[ch*25+2*ky*5+2*kx] = w[ch*9+ky*3+kx]
			}
		}
	}
	return out
}

// ResizeAligned returns x resampled bilinearly to h×w with the corner
// pixels' centres aligned: output pixel i samples input position
// i·(n−1)/(on−1) (TensorFlow's align_corners=True, PyTorch's too). A 1×1
// input is broadcast.
func ResizeAligned(x *Tensor, h, w int) *Tensor {
	y := scratch(x.C, h, w)
	x0, x1, fx := alignedAxis(x.W, w)
	y0, y1, fy := alignedAxis(x.H, h)
	for c := range x.C {
		src, dst := x.Plane(c), y.Plane(c)
		for oy := range h {
			a, b, f := src[y0[oy]*x.W:(y0[oy]+1)*x.W], src[y1[oy]*x.W:(y1[oy]+1)*x.W], fy[oy]
			drow := dst[oy*w : (oy+1)*w]
			for ox := range drow {
				top := a[x0[ox]] + (a[x1[ox]]-a[x0[ox]])*fx[ox]
				bot := b[x0[ox]] + (b[x1[ox]]-b[x0[ox]])*fx[ox]
				drow[ox] = top + (bot-top)*f
			}
		}
	}
	return y
}

// alignedAxis maps each of n output samples onto an axis of sn input
// samples with the end samples aligned: the two neighbours and the second's
// weight.
func alignedAxis(sn, n int) (i0, i1 []int, f []float32) {
	i0, i1, f = make([]int, n), make([]int, n), make([]float32, n)
	scale := 0.0
	if n > 1 {
		scale = float64(sn-1) / float64(n-1)
	}
	for i := range n {
		s := float64(i) * scale
		j := min(int(s), sn-1)
		i0[i], i1[i], f[i] = j, min(j+1, sn-1), float32(s-float64(j))
	}
	return i0, i1, f
}

// Quantised reads one tensor stored as uint8 values q with a float32 scale
// and an int32 zero point z after its header (the same header as Floats),
// checks it has the given shape and returns (q − z)·scale.
func (r *Reader) Quantised(shape ...int) []float32 {
	size := r.header(shape)
	head := r.Bytes(8)
	raw := r.Bytes(size)
	if raw == nil || head == nil {
		return nil
	}
	scale := float64(math.Float32frombits(binary.LittleEndian.Uint32(head)))
	zero := int(int32(binary.LittleEndian.Uint32(head[4:])))
	out := make([]float32, size)
	for i, q := range raw {
		out[i] = float32(float64(int(q)-zero) * scale)
	}
	return out
}

// F32 returns the next float32 (a value the file stores bare, with no
// tensor header).
func (r *Reader) F32() float32 { return math.Float32frombits(r.U32()) }
