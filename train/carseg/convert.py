"""Converts DeepLabv3-MobileNetV2's quantised TFLite graph (PASCAL VOC) into
the weights file imageops/carseg embeds, and writes the parity test's data.

    /usr/bin/python3 train/carseg/convert.py --tflite ../shared/models/deeplabv3_mnv2_pascal_quant.tflite \
        --out imageops/carseg/deeplabv3_mnv2.bin
    /usr/bin/python3 train/carseg/convert.py --tflite ... --golden imageops/carseg/testdata --side 321 PHOTO...
    /usr/bin/python3 train/carseg/convert.py --tflite ... --describe

The graph is MobileNetV2 (a 3×3 stride-2 stem, then inverted-residual
blocks: 1×1 expansion, 3×3 depthwise at stride 1 or 2 or dilation 2, 1×1
projection, a residual add where the shapes allow) at output stride 16, and
DeepLabv3's head as the MobileNet variant has it: a 1×1 branch and an image
pooling branch (global mean, 1×1, broadcast), concatenated, projected by a
1×1 and turned into 21 class scores by a 1×1. The walk checks that pattern
operator by operator and refuses anything else.

File "CSG1", all little-endian uint32 unless said:
  magic; stem channels; block count; per block: in, hidden, out channels,
  expands (0/1), stride, dilation; head channels; classes;
  then each convolution in graph order (stem; per block [expansion],
  depthwise, projection; head branch, pooling branch, projection, logits):
  weights as rank, dims (our layout: out, in, kh, kw; depthwise out, 1, 3, 3),
  float32 scale, int32 zero point and the uint8 values; biases as rank 1,
  dims, float32 values (int32 bias × its scale, exactly); float32 lo, hi:
  the range TFLite's quantisation gives the convolution's input.
"""

import argparse
import hashlib
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tflite  # noqa: E402

PINNED = {
    "24e0c7de2a7de463867ef28735f67b70": "deeplabv3_mnv2_pascal_quant.tflite",
    "812e53a98aa4447c1c89c1566a35053c": "deeplabv3_mnv2_dm05_pascal_quant.tflite",
}


class Conv:
    """One convolution of the graph, in our layout."""

    def __init__(self, m, op, kind):
        w, b = m.tensors[op.inputs[1]], m.tensors[op.inputs[2]]
        if w.scale.size != 1:
            raise ValueError("%s: per-channel weights" % w.name)
        q = w.data
        self.kind = kind
        if kind == "depthwise":
            q = q.transpose(3, 0, 1, 2)  # 1HWC -> C1HW
        else:
            q = q.transpose(0, 3, 1, 2)  # OHWI -> OIHW
        self.q = np.ascontiguousarray(q)
        self.scale, self.zero = float(w.scale[0]), int(w.zero_point[0])
        self.bias = b.dequantised().astype(np.float32)
        x = m.tensors[op.inputs[0]]
        s, z = x.quant()
        self.range = ((0 - z) * s, (255 - z) * s)
        self.options = op.options

    def write(self, f):
        f.write(struct.pack("<I", self.q.ndim))
        f.write(struct.pack("<%dI" % self.q.ndim, *self.q.shape))
        f.write(struct.pack("<fi", self.scale, self.zero))
        f.write(self.q.astype(np.uint8).tobytes())
        f.write(struct.pack("<II", 1, self.bias.size))
        f.write(self.bias.astype("<f4").tobytes())
        f.write(struct.pack("<ff", *self.range))


def expect(op, name, **opts):
    if op.name != name or any(op.options.get(k) != v for k, v in opts.items()):
        raise ValueError("want %s %s, got %s %s" % (name, opts, op.name, op.options))


def walk(m):
    """The network's layers: stem, blocks, head, checked against the pattern."""
    ops = m.operators
    expect(ops[0], "CONV_2D", stride_h=2, activation="RELU6", padding="SAME")
    stem = Conv(m, ops[0], "full")
    i, blocks = 1, []
    out = ops[0].outputs[0]
    while ops[i].name != "AVERAGE_POOL_2D":
        blk = {"in": out}
        cin = m.tensors[out].shape[3]
        if ops[i].name == "CONV_2D":
            expect(ops[i], "CONV_2D", stride_h=1, activation="RELU6")
            blk["expand"] = Conv(m, ops[i], "point")
            i += 1
        expect(ops[i], "DEPTHWISE_CONV_2D", activation="RELU6", depth_multiplier=1, padding="SAME")
        o = ops[i].options
        if o["stride_h"] != o["stride_w"] or o["dilation_h"] != o["dilation_w"]:
            raise ValueError("op %d: unequal strides or dilations" % i)
        if o["stride_h"] > 1 and o["dilation_h"] > 1:
            raise ValueError("op %d: strided and dilated" % i)
        blk["dw"] = Conv(m, ops[i], "depthwise")
        blk["stride"], blk["dilation"] = o["stride_h"], o["dilation_h"]
        i += 1
        expect(ops[i], "CONV_2D", stride_h=1, activation=None)
        blk["project"] = Conv(m, ops[i], "point")
        out = ops[i].outputs[0]
        i += 1
        if ops[i].name == "ADD":
            if sorted(ops[i].inputs) != sorted([blk["in"], out]):
                raise ValueError("op %d: residual of another tensor" % i)
            out = ops[i].outputs[0]
            i += 1
            blk["residual"] = True
        blk["cin"], blk["hidden"] = cin, blk["dw"].q.shape[0]
        blk["cout"] = blk["project"].q.shape[0]
        if bool(blk.get("residual")) != (blk["stride"] == 1 and cin == blk["cout"]):
            raise ValueError("block %d: residual where shapes differ or none where equal" % len(blocks))
        blocks.append(blk)
    backbone = out
    pool = ops[i]
    expect(pool, "AVERAGE_POOL_2D", padding="VALID")
    head = {}
    for op in ops[i + 1:]:
        if op.name == "CONV_2D" and op.inputs[0] == backbone:
            expect(op, "CONV_2D", activation="RELU")
            head["branch"], head["branch_out"] = Conv(m, op, "point"), op.outputs[0]
        elif op.name == "CONV_2D" and op.inputs[0] == pool.outputs[0]:
            expect(op, "CONV_2D", activation="RELU")
            head["pool"] = Conv(m, op, "point")
        elif op.name == "CONCATENATION":
            expect(op, "CONCATENATION", axis=3)
            # The pooled branch (resized, requantised) first, then the 1×1 branch.
            if op.inputs[1] != head["branch_out"]:
                raise ValueError("concatenation order")
            head["concat"] = op.outputs[0]
        elif op.name == "CONV_2D" and op.inputs[0] == head.get("concat"):
            expect(op, "CONV_2D", activation="RELU")
            head["project"], head["project_out"] = Conv(m, op, "point"), op.outputs[0]
        elif op.name == "CONV_2D" and op.inputs[0] == head.get("project_out"):
            expect(op, "CONV_2D", activation=None)
            head["logits"] = Conv(m, op, "point")
        elif op.name in ("RESIZE_BILINEAR", "QUANTIZE", "ARG_MAX"):
            if op.name == "RESIZE_BILINEAR":
                expect(op, "RESIZE_BILINEAR", align_corners=True, half_pixel_centers=False)
        else:
            raise ValueError("unexpected %s in the head" % op.name)
    return stem, blocks, head


def write(path, stem, blocks, head):
    with open(path, "wb") as f:
        f.write(b"CSG1")
        f.write(struct.pack("<II", stem.q.shape[0], len(blocks)))
        for b in blocks:
            f.write(struct.pack("<6I", b["cin"], b["hidden"], b["cout"], int("expand" in b),
                                b["stride"], b["dilation"]))
        f.write(struct.pack("<II", head["branch"].q.shape[0], head["logits"].q.shape[0]))
        stem.write(f)
        for b in blocks:
            if "expand" in b:
                b["expand"].write(f)
            b["dw"].write(f)
            b["project"].write(f)
        for k in ("branch", "pool", "project", "logits"):
            head[k].write(f)


def golden(args, graph):
    """For each photo: the photo stretched to side² (NAME.png, what both
    sides read), the interpreter's class scores at the features' side
    (NAME.logits: uint32 classes, side, side, then float32 values) and its
    class map at side² (NAME.classes.png)."""
    import cv2
    import torch
    os.makedirs(args.golden, exist_ok=True)
    for p in args.photos:
        name = os.path.splitext(os.path.basename(p))[0]
        bgr = cv2.resize(cv2.imread(p), (args.side, args.side), interpolation=cv2.INTER_AREA)
        cv2.imwrite(os.path.join(args.golden, name + ".png"), bgr)
        rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
        with torch.no_grad():
            low, up = graph.logits(graph.prepare(rgb))
        low = low[0].numpy().astype("<f4")
        with open(os.path.join(args.golden, name + ".logits"), "wb") as f:
            f.write(struct.pack("<3I", *low.shape))
            f.write(low.tobytes())
        classes = up[0].argmax(0).numpy().astype(np.uint8)
        cv2.imwrite(os.path.join(args.golden, name + ".classes.png"), classes)
        counts = {c: int((classes == c).sum()) for c in np.unique(classes)}
        print(name, "classes", counts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tflite", required=True)
    ap.add_argument("--out")
    ap.add_argument("--golden")
    ap.add_argument("--side", type=int, default=321)
    ap.add_argument("--describe", action="store_true")
    ap.add_argument("photos", nargs="*")
    args = ap.parse_args()
    data = open(args.tflite, "rb").read()
    md5 = hashlib.md5(data).hexdigest()
    if md5 not in PINNED:
        sys.exit("%s: md5 %s is none of the pinned files" % (args.tflite, md5))
    m = tflite.Model(bytearray(data))
    stem, blocks, head = walk(m)
    if args.describe:
        print(m.describe())
        for k, b in enumerate(blocks):
            print("block %2d: %d -> %d -> %d, expands %s, stride %d, dilation %d" % (
                k, b["cin"], b["hidden"], b["cout"], "expand" in b, b["stride"], b["dilation"]))
    if args.out:
        write(args.out, stem, blocks, head)
        print("wrote", args.out, os.path.getsize(args.out), "bytes")
    if args.golden:
        import interp
        golden(args, interp.Graph(m))


if __name__ == "__main__":
    main()
