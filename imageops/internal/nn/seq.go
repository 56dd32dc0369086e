package nn

import "math"

// The layers of a sequence network (PP-OCRv4's text recogniser): a text
// line's columns become a sequence of steps, each a C×1×T tensor's column
// (channel-major, H = 1), which linear layers (pointwise convolutions),
// layer norm and multi-head softmax attention read. Also the pooling and
// strides the recogniser's backbone uses to shrink the line's height
// faster than its width.

// Swish applies x·sigmoid(x) to x in place and returns x.
func Swish(x *Tensor) *Tensor {
	for i, v := range x.Data {
		x.Data[i] = v / (1 + exp32(-v))
	}
	return x
}

// LayerNorm normalises each step (column) of x over its channels, to mean
// 0 and variance 1 (plus eps), then scales channel c by gain[c] and adds
// offset[c]. It returns a new tensor.
func LayerNorm(x *Tensor, gain, offset []float32, eps float32) *Tensor {
	n := x.H * x.W
	y := scratch(x.C, x.H, x.W)
	for i := range n {
		var s float64
		for c := range x.C {
			s += float64(x.Data[c*n+i])
		}
		mean := s / float64(x.C)
		var v float64
		for c := range x.C {
			d := float64(x.Data[c*n+i]) - mean
			v += d * d
		}
		inv := 1 / math.Sqrt(v/float64(x.C)+float64(eps))
		for c := range x.C {
			y.Data[c*n+i] = float32((float64(x.Data[c*n+i])-mean)*inv)*gain[c] + offset[c]
		}
	}
	return y
}

// Attention is multi-head self-attention over the steps of qkv, whose
// 3·D channels are the queries, keys and values (D each, in that order),
// each split into heads groups of D/heads channels: every head's output at
// step t is the mean of its values over all steps, weighted by the softmax
// of scale × the dot products of t's query with their keys. It returns the
// D×1×T result, the heads' channels in order.
func Attention(qkv *Tensor, heads int, scale float32) *Tensor {
	d := qkv.C / 3
	dh := d / heads
	t := qkv.H * qkv.W
	y := scratch(d, 1, t)
	clear(y.Data)
	w := make([]float32, t)
	for h := range heads {
		q := qkv.Data[(h*dh)*t : (h*dh+dh)*t]
		k := qkv.Data[(d+h*dh)*t : (d+h*dh+dh)*t]
		v := qkv.Data[(2*d+h*dh)*t : (2*d+h*dh+dh)*t]
		out := y.Data[(h*dh)*t : (h*dh+dh)*t]
		for i := range t {
			clear(w)
			for c := range dh {
				qc := q[c*t+i] * scale
				kc := k[c*t : (c+1)*t]
				for j, kv := range kc {
					w[j] += qc * kv
				}
			}
			top := w[0]
			for _, s := range w {
				top = max(top, s)
			}
			var sum float32
			for j, s := range w {
				e := exp32(s - top)
				w[j] = e
				sum += e
			}
			for c := range dh {
				vc := v[c*t : (c+1)*t]
				var acc float32
				for j, p := range w {
					acc += p * vc[j]
				}
				out[c*t+i] = acc / sum
			}
		}
	}
	return y
}

// AvgPool returns the means of x's non-overlapping kh×kw blocks (a partial
// block at the right or bottom edge is dropped, as ONNX's AveragePool with
// no padding does).
func AvgPool(x *Tensor, kh, kw int) *Tensor {
	oh, ow := x.H/kh, x.W/kw
	y := scratch(x.C, oh, ow)
	inv := 1 / float32(kh*kw)
	for c := range x.C {
		src, dst := x.Plane(c), y.Plane(c)
		for oy := range oh {
			for ox := range ow {
				var s float32
				for dy := range kh {
					row := src[(oy*kh+dy)*x.W+ox*kw:]
					for dx := range kw {
						s += row[dx]
					}
				}
				dst[oy*ow+ox] = s * inv
			}
		}
	}
	return y
}

// Subsample returns every sy-th row and sx-th column of x, from the first:
// a convolution at stride (sy, sx) from its result at stride 1, when its
// padding centres the kernel (k/2 each side).
func Subsample(x *Tensor, sy, sx int) *Tensor {
	oh, ow := (x.H+sy-1)/sy, (x.W+sx-1)/sx
	y := scratch(x.C, oh, ow)
	for c := range x.C {
		src, dst := x.Plane(c), y.Plane(c)
		for oy := range oh {
			row := src[oy*sy*x.W:]
			for ox := range ow {
				dst[oy*ow+ox] = row[ox*sx]
			}
		}
	}
	return y
}

// Shifts returns, for a one-row tensor x (C×1×T), the 3·C×1×T tensor of x
// shifted right by one step, x, and x shifted left by one step, zero where
// a shift leaves a gap: a 1×3 convolution (padding 1) of x is a pointwise
// one of it, its weights [co][k·C+c] = w[co][c][k].
func Shifts(x *Tensor) *Tensor {
	t := x.W
	y := scratch(3*x.C, 1, t)
	for c := range x.C {
		src := x.Data[c*x.H*t : c*x.H*t+t]
		left, mid, right := y.Plane(c), y.Plane(x.C+c), y.Plane(2*x.C+c)
		left[0] = 0
		copy(left[1:], src[:t-1])
		copy(mid, src)
		copy(right, src[1:])
		right[t-1] = 0
	}
	return y
}
