package vehicles

import (
	"context"
	_ "embed"
	"fmt"
	"sync"

	"carphoto/imageops/internal/nn"
)

// weightsBin is PP-PicoDet-S 320 (PaddleDetection, Apache-2.0) from the ONNX
// export pinned in train/vehicles/README.md, converted by
// train/vehicles/picodet.py into a program of operations on numbered
// tensors: 133 convolutions with batch norm folded in, float32 weights.
//
//go:embed picodet_s_320.bin
var weightsBin []byte

// The operation codes of the program (picodet.py's OP_*).
const (
	opConv = iota
	opSE
	opGather
	opMaxPool
	opUp2
	opAdd
	opOutput
)

// The activation codes of a convolution.
const (
	actNone = iota
	actReLU
	actHardSwish
	actHardSigmoid
)

// op is one operation of the program.
type op struct {
	code int
	// in and out are slots; first and count the run of in's channels a
	// convolution reads.
	in, in2, out int
	first, count int
	conv         *nn.Conv
	se           *nn.SE
	// gather lists the new slot's channels: slot and channel of each.
	gather [][2]int
	// free are the slots no later operation reads.
	free []int
}

// program is the network: its operations in order over slots of tensors,
// slot 0 the input.
type program struct {
	slots int
	ops   []op
}

// parseProgram reads the file train/vehicles/picodet.py writes.
func parseProgram(data []byte) (*program, error) {
	r := nn.NewReader(data)
	if string(r.Bytes(4)) != "PDT1" {
		return nil, fmt.Errorf("vehicle detector weights: bad magic")
	}
	p := &program{slots: int(r.U32())}
	n := int(r.U32())
	slot := func() int {
		s := int(r.U32())
		if s >= p.slots && r.Err() == nil {
			r.Fail(fmt.Errorf("slot %d of %d", s, p.slots))
		}
		return s
	}
	channels := make([]int, p.slots) // each slot's channel count, as written
	channels[0] = 3
	outputs := 0
	for i := 0; i < n && r.Err() == nil; i++ {
		o := op{code: int(r.U32())}
		switch o.code {
		case opConv:
			o.in, o.first, o.count, o.out = slot(), int(r.U32()), int(r.U32()), slot()
			kind, stride, act, cout := nn.Kind(r.U32()), int(r.U32()), r.U32(), int(r.U32())
			prm := r.Floats(2)
			c := &nn.Conv{Kind: kind, Cin: o.count, Cout: cout, Stride: stride}
			if kind > nn.Depth5 || ((kind == nn.Depth3 || kind == nn.Depth5) && cout != o.count) {
				r.Fail(fmt.Errorf("operation %d: kind %d, %d to %d channels", i, kind, o.count, cout))
			}
			c.Weights = r.Floats(c.WeightShape()...)
			c.Biases = r.Floats(cout)
			if r.Err() == nil && (o.first+o.count > channels[o.in] || (kind != nn.Point && stride != 1 && stride != 2)) {
				r.Fail(fmt.Errorf("operation %d: channels %d+%d of %d, stride %d", i, o.first, o.count, channels[o.in], stride))
			}
			switch act {
			case actReLU:
				c.ReLU = true
			case actHardSwish:
				c.Act = nn.Act{Kind: nn.HardSwish, A: 1, B: 0}
			case actHardSigmoid:
				c.Act = nn.Act{Kind: nn.HardSigmoid, A: prm[0], B: prm[1]}
			}
			o.conv = c
			channels[o.out] = c.Cout
		case opSE:
			o.in = slot()
			cr := int(r.U32())
			prm := r.Floats(2)
			c := channels[o.in]
			reduce := &nn.Conv{Kind: nn.Point, Cin: c, Cout: cr, ReLU: true}
			reduce.Weights = r.Floats(cr, c, 1, 1)
			reduce.Biases = r.Floats(cr)
			expand := &nn.Conv{Kind: nn.Point, Cin: reduce.Cout, Cout: c, Act: nn.Act{Kind: nn.HardSigmoid}}
			expand.Weights = r.Floats(c, reduce.Cout, 1, 1)
			expand.Biases = r.Floats(c)
			if r.Err() == nil {
				expand.Act.A, expand.Act.B = prm[0], prm[1]
			}
			o.se = &nn.SE{Reduce: reduce, Expand: expand}
		case opGather:
			o.out = slot()
			o.gather = make([][2]int, r.U32())
			for k := range o.gather {
				o.gather[k] = [2]int{slot(), int(r.U32())}
				if r.Err() == nil && o.gather[k][1] >= channels[o.gather[k][0]] {
					r.Fail(fmt.Errorf("operation %d: channel %d of slot %d", i, o.gather[k][1], o.gather[k][0]))
				}
			}
			channels[o.out] = len(o.gather)
		case opMaxPool, opUp2:
			o.in, o.out = slot(), slot()
			channels[o.out] = channels[o.in]
		case opAdd:
			o.in, o.in2, o.out = slot(), slot(), slot()
			channels[o.out] = channels[o.in]
		case opOutput:
			o.in = slot()
			if channels[o.in] != Classes+4*bins {
				r.Fail(fmt.Errorf("operation %d: output of %d channels", i, channels[o.in]))
			}
			outputs++
		default:
			r.Fail(fmt.Errorf("operation %d: code %d", i, o.code))
		}
		o.free = make([]int, r.U32())
		for k := range o.free {
			o.free[k] = slot()
		}
		p.ops = append(p.ops, o)
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("vehicle detector weights: %w", err)
	}
	if r.Remaining() != 0 || len(p.ops) != n || outputs != len(strides) {
		return nil, fmt.Errorf("vehicle detector weights: %d operations of %d, %d outputs, %d trailing bytes",
			len(p.ops), n, outputs, r.Remaining())
	}
	return p, nil
}

var (
	loadOnce sync.Once
	loaded   *program
	loadErr  error
)

// embeddedProgram parses the embedded weights once.
func embeddedProgram() (*program, error) {
	loadOnce.Do(func() { loaded, loadErr = parseProgram(weightsBin) })
	return loaded, loadErr
}

// run runs the program on x (3×320×320, normalised; not freed) and returns
// the head's outputs, finest level first: each Classes class logits then
// 4×bins box-side logits per anchor, channel-major. It checks ctx between
// operations.
func (p *program) run(ctx context.Context, x *nn.Tensor) ([]*nn.Tensor, error) {
	t := make([]*nn.Tensor, p.slots)
	t[0] = x
	var outs []*nn.Tensor
	release := func() {
		for i, v := range t[1:] {
			if v != nil {
				nn.Free(v)
				t[i+1] = nil
			}
		}
	}
	for i := range p.ops {
		if err := ctx.Err(); err != nil {
			release()
			return nil, err
		}
		o := &p.ops[i]
		switch o.code {
		case opConv:
			in := t[o.in]
			if o.first != 0 || o.count != in.C {
				in = in.View(o.first, o.count)
			}
			t[o.out] = o.conv.Apply(in)
		case opSE:
			o.se.Apply(t[o.in])
		case opGather:
			src := t[o.gather[0][0]]
			y := nn.Scratch(len(o.gather), src.H, src.W)
			for k, g := range o.gather {
				copy(y.Plane(k), t[g[0]].Plane(g[1]))
			}
			t[o.out] = y
		case opMaxPool:
			t[o.out] = nn.MaxPool3s2(t[o.in])
		case opUp2:
			t[o.out] = nn.Upsample(t[o.in], 2)
		case opAdd:
			a := t[o.in]
			y := nn.Scratch(a.C, a.H, a.W)
			copy(y.Data, a.Data)
			t[o.out] = nn.Add(y, t[o.in2])
		case opOutput:
			outs = append(outs, t[o.in])
			t[o.in] = nil
		}
		for _, s := range o.free {
			if s != 0 && t[s] != nil {
				nn.Free(t[s])
				t[s] = nil
			}
		}
	}
	return outs, nil
}
