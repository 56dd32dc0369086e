"""A float interpreter of DeepLabv3-MobileNetV2's TFLite graph in PyTorch:
the reference executor for the Go engine's segmenter (no TFLite runtime
exists here).

It walks the graph's operators in order and runs each in float32 on
dequantised weights and biases ((q − zero point)·scale); activations are not
requantised between layers, so QUANTIZE is the identity. TFLite's SAME
padding is computed as TFLite does (the extra pixel of an odd total after,
not before). The graph is built for 513² (its average pool is 33×33, its
resizes name 33² and 513²); at another side s (s − 1 a multiple of 16) the
pool is the global mean it is at 513², the resizes go to the features' side
(s − 1)/16 + 1 and to s.
"""

import math

import numpy as np
import torch
import torch.nn.functional as F

import tflite


def same_pads(size, k, stride, dilation):
    """TFLite's SAME padding of one axis: (before, after)."""
    out = (size + stride - 1) // stride
    eff = (k - 1) * dilation + 1
    total = max((out - 1) * stride + eff - size, 0)
    return total // 2, total - total // 2


def activate(x, act):
    if act == "RELU":
        return F.relu(x)
    if act == "RELU6":
        return x.clamp(0, 6)
    if act is None:
        return x
    raise ValueError("activation %s" % act)


class Graph:
    """The model's operators with their weights as float32 torch tensors."""

    def __init__(self, model):
        self.m = model
        self.consts = {}
        for op in model.operators:
            for t in op.inputs:
                if t >= 0 and model.tensors[t].data is not None and t not in self.consts:
                    self.consts[t] = model.tensors[t].dequantised()
        self.input = model.inputs[0]
        self.in_scale, self.in_zero = model.tensors[self.input].quant()
        self.side = model.tensors[self.input].shape[1]

    def prepare(self, rgb):
        """An RGB uint8 H×W×3 photo (already at the network's input size) as
        the float input the quantised graph sees: (v − 128)/128."""
        x = torch.from_numpy(rgb.astype(np.float32)).permute(2, 0, 1)[None]
        return (x - self.in_zero) * self.in_scale

    def run(self, x, stop=None):
        """Runs the graph on x (1×3×s×s). Returns the tensors by index (NCHW):
        every operator's output; stop, an operator index, ends early."""
        m = self.m
        s = x.shape[2]
        feat = (s - 1) // 16 + 1
        vals = {self.input: x}
        for i, op in enumerate(m.operators):
            if stop is not None and i == stop:
                break
            o = op.options
            a = vals.get(op.inputs[0])
            if op.name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
                w = torch.from_numpy(self.consts[op.inputs[1]].astype(np.float32))
                b = torch.from_numpy(self.consts[op.inputs[2]].astype(np.float32))
                if op.name == "CONV_2D":
                    w = w.permute(0, 3, 1, 2)  # OHWI -> OIHW
                    groups = 1
                else:
                    w = w.permute(3, 0, 1, 2)  # 1HWC -> C1HW
                    groups = a.shape[1]
                kh, kw = w.shape[2], w.shape[3]
                dh, dw = o["dilation_h"], o["dilation_w"]
                if o["padding"] == "SAME":
                    ph = same_pads(a.shape[2], kh, o["stride_h"], dh)
                    pw = same_pads(a.shape[3], kw, o["stride_w"], dw)
                    a = F.pad(a, (pw[0], pw[1], ph[0], ph[1]))
                y = F.conv2d(a, w, b, stride=(o["stride_h"], o["stride_w"]),
                             dilation=(dh, dw), groups=groups)
                y = activate(y, o["activation"])
            elif op.name == "ADD":
                y = activate(a + vals[op.inputs[1]], o["activation"])
            elif op.name == "AVERAGE_POOL_2D":
                if (o["filter_h"], o["filter_w"]) != (33, 33) or o["padding"] != "VALID":
                    raise ValueError("pool %s" % o)
                y = a.mean(dim=(2, 3), keepdim=True)  # the whole 33² map at 513²
            elif op.name == "RESIZE_BILINEAR":
                size = tuple(int(v) for v in m.tensors[op.inputs[1]].data)
                size = {(33, 33): (feat, feat), (513, 513): (s, s)}[size]
                if not o["align_corners"] or o["half_pixel_centers"]:
                    raise ValueError("resize %s" % o)
                if a.shape[2:] == (1, 1):
                    y = a.expand(-1, -1, size[0], size[1])
                elif tuple(a.shape[2:]) == size:
                    y = a
                else:
                    y = F.interpolate(a, size=size, mode="bilinear", align_corners=True)
            elif op.name == "QUANTIZE":
                y = a
            elif op.name == "CONCATENATION":
                if o["axis"] != 3:
                    raise ValueError("concat axis %d" % o["axis"])
                y = torch.cat([vals[t] for t in op.inputs], dim=1)
            elif op.name == "ARG_MAX":
                y = a.argmax(dim=1)
            else:
                raise ValueError("operator %s" % op.name)
            vals[op.outputs[0]] = y
        return vals

    def logits(self, x):
        """The 21 class scores at the features' side (before the last
        upsampling) and upsampled to the input's side."""
        vals = self.run(x, stop=len(self.m.operators) - 2)  # up to the 33→33 resize
        low = vals[self.m.operators[-3].outputs[0]]
        up = F.interpolate(low, size=x.shape[2:], mode="bilinear", align_corners=True)
        return low, up


def load(path):
    return Graph(tflite.load(path))
