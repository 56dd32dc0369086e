package nn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Reader reads a weights file: tensors as a rank, that many dimensions and
// the little-endian float32 data, all uint32 little-endian. The first error
// sticks; check Err once at the end.
type Reader struct {
	b   []byte
	off int
	err error
}

// NewReader reads from b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Bytes returns the next n bytes.
func (r *Reader) Bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || r.off+n > len(r.b) {
		r.err = errors.New("truncated")
		return nil
	}
	out := r.b[r.off : r.off+n]
	r.off += n
	return out
}

// U32 returns the next uint32.
func (r *Reader) U32() uint32 {
	b := r.Bytes(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

// Floats reads one tensor and checks it has the given shape.
func (r *Reader) Floats(shape ...int) []float32 {
	size := r.header(shape)
	raw := r.Bytes(4 * size)
	if raw == nil {
		return nil
	}
	out := make([]float32, size)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

// header reads a tensor's rank and dimensions, checks them against shape
// and returns the number of values that follow.
func (r *Reader) header(shape []int) int {
	if r.err != nil {
		return 0
	}
	if rank := int(r.U32()); r.err == nil && rank != len(shape) {
		r.err = fmt.Errorf("tensor rank %d, want %d", rank, len(shape))
	}
	size := 1
	for i, want := range shape {
		if d := int(r.U32()); r.err == nil && d != want {
			r.err = fmt.Errorf("tensor dim %d is %d, want %d", i, d, want)
		}
		size *= want
	}
	return size
}

// Fail records err as the reader's error unless one is already recorded:
// for checks of the file's content the caller makes.
func (r *Reader) Fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// Err returns the first error met.
func (r *Reader) Err() error { return r.err }

// Remaining is the number of unread bytes.
func (r *Reader) Remaining() int { return len(r.b) - r.off }

// Halves reads one tensor stored as float16 values (the same header as
// Floats) and checks it has the given shape.
func (r *Reader) Halves(shape ...int) []float32 {
	size := r.header(shape)
	raw := r.Bytes(2 * size)
	if raw == nil {
		return nil
	}
	out := make([]float32, size)
	for i := range out {
		out[i] = half(uint16(raw[2*i]) | uint16(raw[2*i+1])<<8)
	}
	return out
}

// half converts an IEEE 754 binary16 value to float32.
func half(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // infinity or NaN
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: frac·2⁻²⁴
		v := float32(frac) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}
