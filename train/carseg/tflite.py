"""A small reader of TensorFlow Lite model files (flatbuffers), enough for
DeepLabv3-MobileNetV2's quantised graph: the operators in order with their
options, and every tensor's shape, type, quantisation and constant data.

No TFLite runtime or generated schema package exists here, so the tables are
read by field index as tensorflow/lite/schema/schema.fbs declares them (a
field's vtable slot is 4 + 2·index). Only the fields used are named below.
"""

import flatbuffers
import numpy as np
from flatbuffers import number_types as N

# schema.fbs field indices.
MODEL_OPERATOR_CODES, MODEL_SUBGRAPHS, MODEL_BUFFERS = 1, 2, 4
OPCODE_DEPRECATED_BUILTIN, OPCODE_BUILTIN = 0, 3
SUBGRAPH_TENSORS, SUBGRAPH_INPUTS, SUBGRAPH_OUTPUTS, SUBGRAPH_OPERATORS = 0, 1, 2, 3
TENSOR_SHAPE, TENSOR_TYPE, TENSOR_BUFFER, TENSOR_NAME, TENSOR_QUANT = 0, 1, 2, 3, 4
QUANT_SCALE, QUANT_ZERO_POINT, QUANT_DIMENSION = 2, 3, 6
OP_OPCODE_INDEX, OP_INPUTS, OP_OUTPUTS, OP_OPTIONS = 0, 1, 2, 4
BUFFER_DATA = 0

# BuiltinOperator values this graph may hold.
OPS = {0: "ADD", 1: "AVERAGE_POOL_2D", 2: "CONCATENATION", 3: "CONV_2D",
       4: "DEPTHWISE_CONV_2D", 6: "DEQUANTIZE", 14: "LOGISTIC", 17: "MAX_POOL_2D",
       18: "MUL", 19: "RELU", 21: "RELU6", 22: "RESHAPE", 23: "RESIZE_BILINEAR",
       25: "SOFTMAX", 34: "PAD", 37: "BATCH_TO_SPACE_ND", 38: "SPACE_TO_BATCH_ND",
       40: "MEAN", 56: "ARG_MAX", 114: "QUANTIZE"}

# TensorType values to numpy.
TYPES = {0: np.float32, 1: np.float16, 2: np.int32, 3: np.uint8, 4: np.int64, 9: np.int8}

# Each option table's fields by index, as schema.fbs orders them: (name,
# flatbuffers type, default).
_I, _B = N.Int32Flags, N.Int8Flags
OPTIONS = {
    "CONV_2D": [("padding", _B, 0), ("stride_w", _I, 0), ("stride_h", _I, 0),
                ("activation", _B, 0), ("dilation_w", _I, 1), ("dilation_h", _I, 1)],
    "DEPTHWISE_CONV_2D": [("padding", _B, 0), ("stride_w", _I, 0), ("stride_h", _I, 0),
                          ("depth_multiplier", _I, 0), ("activation", _B, 0),
                          ("dilation_w", _I, 1), ("dilation_h", _I, 1)],
    "AVERAGE_POOL_2D": [("padding", _B, 0), ("stride_w", _I, 0), ("stride_h", _I, 0),
                        ("filter_w", _I, 0), ("filter_h", _I, 0), ("activation", _B, 0)],
    "MAX_POOL_2D": [("padding", _B, 0), ("stride_w", _I, 0), ("stride_h", _I, 0),
                    ("filter_w", _I, 0), ("filter_h", _I, 0), ("activation", _B, 0)],
    "CONCATENATION": [("axis", _I, 0), ("activation", _B, 0)],
    "ADD": [("activation", _B, 0)],
    "RESIZE_BILINEAR": [("new_height", _I, 0), ("new_width", _I, 0),
                        ("align_corners", N.BoolFlags, False),
                        ("half_pixel_centers", N.BoolFlags, False)],
}
PADDING = {0: "SAME", 1: "VALID"}
ACTIVATION = {0: None, 1: "RELU", 2: "RELU_N1_TO_1", 3: "RELU6"}


class _Table:
    """A flatbuffer table read by field index."""

    def __init__(self, buf, pos):
        self.t = flatbuffers.table.Table(buf, pos)

    def _off(self, i):
        return self.t.Offset(4 + 2 * i)

    def scalar(self, i, flags, default=0):
        o = self._off(i)
        return self.t.Get(flags, o + self.t.Pos) if o else default

    def table(self, i):
        o = self._off(i)
        return _Table(self.t.Bytes, self.t.Indirect(o + self.t.Pos)) if o else None

    def tables(self, i):
        o = self._off(i)
        if not o:
            return []
        start, n = self.t.Vector(o), self.t.VectorLen(o)
        return [_Table(self.t.Bytes, self.t.Indirect(start + 4 * k)) for k in range(n)]

    def array(self, i, dtype):
        o = self._off(i)
        if not o:
            return np.zeros(0, dtype)
        start, n = self.t.Vector(o), self.t.VectorLen(o)
        return np.frombuffer(self.t.Bytes, dtype, n, start).copy()

    def string(self, i):
        o = self._off(i)
        return self.t.String(o + self.t.Pos).decode() if o else ""


class Tensor:
    """One tensor: name, shape (NHWC), numpy type, quantisation (scale and
    zero point arrays, the channel axis they run along) and its constant
    data, or None for an activation."""

    def __init__(self, t, buffers):
        self.name = t.string(TENSOR_NAME)
        self.shape = tuple(int(d) for d in t.array(TENSOR_SHAPE, "<i4"))
        self.dtype = TYPES[t.scalar(TENSOR_TYPE, N.Int8Flags)]
        q = t.table(TENSOR_QUANT)
        self.scale = q.array(QUANT_SCALE, "<f4") if q else np.zeros(0, np.float32)
        self.zero_point = q.array(QUANT_ZERO_POINT, "<i8") if q else np.zeros(0, np.int64)
        self.axis = q.scalar(QUANT_DIMENSION, N.Int32Flags) if q else 0
        raw = buffers[t.scalar(TENSOR_BUFFER, N.Uint32Flags)].array(BUFFER_DATA, np.uint8)
        self.data = None
        if raw.size:
            self.data = np.frombuffer(raw.tobytes(), self.dtype).reshape(self.shape)

    def dequantised(self):
        """The constant data as float64: (q − zero point)·scale, per tensor or
        per channel along axis."""
        v = self.data.astype(np.float64)
        if self.dtype == np.float32 or self.scale.size == 0:
            return v
        if self.scale.size == 1:
            return (v - self.zero_point[0]) * self.scale[0]
        shape = [1] * v.ndim
        shape[self.axis] = -1
        return (v - self.zero_point.reshape(shape)) * self.scale.astype(np.float64).reshape(shape)

    def quant(self):
        """Scale and zero point of a per-tensor quantised activation."""
        return float(self.scale[0]), int(self.zero_point[0])


class Operator:
    """One operator: its name, input and output tensor indices (−1 for an
    absent optional input) and its options by name."""

    def __init__(self, op, codes):
        self.name = codes[op.scalar(OP_OPCODE_INDEX, N.Uint32Flags)]
        self.inputs = [int(i) for i in op.array(OP_INPUTS, "<i4")]
        self.outputs = [int(i) for i in op.array(OP_OUTPUTS, "<i4")]
        self.options = {}
        opt = op.table(OP_OPTIONS)
        for k, (field, flags, default) in enumerate(OPTIONS.get(self.name, [])):
            self.options[field] = opt.scalar(k, flags, default) if opt else default
        if "padding" in self.options:
            self.options["padding"] = PADDING[self.options["padding"]]
        if "activation" in self.options:
            self.options["activation"] = ACTIVATION[self.options["activation"]]


class Model:
    """A model file's first subgraph."""

    def __init__(self, data):
        root = flatbuffers.encode.Get(flatbuffers.packer.uoffset, data, 0)
        m = _Table(data, root)
        codes = []
        for c in m.tables(MODEL_OPERATOR_CODES):
            code = max(c.scalar(OPCODE_DEPRECATED_BUILTIN, N.Int8Flags),
                       c.scalar(OPCODE_BUILTIN, N.Int32Flags))
            codes.append(OPS.get(code, "OP%d" % code))
        buffers = m.tables(MODEL_BUFFERS)
        g = m.tables(MODEL_SUBGRAPHS)[0]
        self.tensors = [Tensor(t, buffers) for t in g.tables(SUBGRAPH_TENSORS)]
        self.inputs = [int(i) for i in g.array(SUBGRAPH_INPUTS, "<i4")]
        self.outputs = [int(i) for i in g.array(SUBGRAPH_OUTPUTS, "<i4")]
        self.operators = [Operator(op, codes) for op in g.tables(SUBGRAPH_OPERATORS)]

    def describe(self):
        """One line per operator: its name, options and tensors' shapes."""
        lines = []
        for i, op in enumerate(self.operators):
            ins = ", ".join("%s%s" % ("c" if self.tensors[t].data is not None else "",
                                      self.tensors[t].shape) for t in op.inputs if t >= 0)
            outs = ", ".join(str(self.tensors[t].shape) for t in op.outputs)
            lines.append("%3d %-18s %s  [%s] -> %s" % (i, op.name, op.options, ins, outs))
        return "\n".join(lines)


def load(path):
    with open(path, "rb") as f:
        return Model(bytearray(f.read()))


if __name__ == "__main__":
    import sys
    m = load(sys.argv[1])
    print("inputs", [(m.tensors[i].name, m.tensors[i].shape, m.tensors[i].quant()) for i in m.inputs])
    print("outputs", [(m.tensors[i].name, m.tensors[i].shape) for i in m.outputs])
    print(m.describe())
