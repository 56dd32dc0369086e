#!/usr/bin/python3
"""Convert PP-PicoDet-S 320 (COCO, ONNX) into the program imageops/vehicles embeds.

    /usr/bin/python3 train/vehicles/picodet.py --onnx ../shared/models/picodet_s_320_coco.onnx \
        --out imageops/vehicles/picodet_s_320.bin

The ONNX file is hpc203/picodet-onnxruntime @dfe4d6cd0a18cd4126ee381e81df8a0b1e6ad97b :
coco/picodet_s_320_coco.onnx, PaddleDetection's published export of PP-PicoDet-S 320
(weights Apache-2.0); it is pinned by its size and MD5 below and the program refuses any other.

The graph (ESNet backbone, CSP-PAN neck, GFL head; 133 convolutions) is written as a
program of operations on numbered tensors ("slots") that imageops/vehicles runs in order:

    conv      a convolution of a run of a slot's channels (a view) into a new slot, with
              the activation that follows it in the graph: hard-swish (x·clip(x+3,0,6)/6),
              ReLU, hard sigmoid or none (3×3 dense at stride 2, 3×3 and 5×5 depthwise
              at stride 1 or 2, 1×1)
    se        squeeze-excite in place: GlobalAveragePool, 1×1 + ReLU, 1×1 + HardSigmoid,
              Mul
    gather    a new slot made of channels of other slots, in a given order: a Concat, and
              with it the channel shuffle (Reshape, Transpose, Reshape) that follows it.
              ESNet's shuffle is folded here: the program has no shuffle, the Concat
              copies its channels straight into the shuffled order, so each following
              Split is a contiguous run of channels (a view) and the shuffle costs no
              pass of its own
    maxpool   3×3 max-pool at stride 2, padding 1 (the stem's)
    up2       nearest 2× enlargement (Resize "nearest", "half_pixel" at scale 2 is
              pixel repetition)
    add       the sum of two slots (the neck's extra level)
    output    a level's head: 112 channels, 80 class logits (the graph's Sigmoid is
              left to Go) then 4×8 box-side distributions (GFL, reg_max 7)

Each operation: its code (uint32), its slots and fields (uint32), for conv its kind,
stride, activation and output channels, then the activation's two float parameters, the weights (ONNX layout) and biases
as nn.Reader tensors (rank, dims, little-endian float32), then the slots no later
operation reads (freed). Magic "PDT1", then the slot count and the operation count.

--golden writes the parity test's data: each photo resized to 320×320 (stretched, OpenCV
INTER_AREA; NAME.png), onnxruntime's head outputs for it (NAME.head.bin.gz: per level
the 80 class scores quantised as uint16 p·65535 and the 32 box logits as float16, anchor
by anchor), and the boxes decoded from them by decode() here (NAME.boxes.json). The
reference run uses onnxruntime-node (`npm install --ignore-scripts onnxruntime-node@1`
in a scratch directory; --ort names its node_modules).
"""

import argparse
import gzip
import hashlib
import json
import os
import struct
import subprocess
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper

ONNX_SIZE = 4040569
ONNX_MD5 = "5b1c9c6fc4ed5185fd5557f4c0d9658c"

SIDE = 320
MEAN = (103.53, 116.28, 123.675)  # B, G, R
STD = (57.375, 57.12, 58.395)
STRIDES = (8, 16, 32, 64)
REG_MAX = 7
CLASSES = 80

OP_CONV, OP_SE, OP_GATHER, OP_MAXPOOL, OP_UP2, OP_ADD, OP_OUTPUT = range(7)
# nn.Kind's values
FULL3, DEPTH3, POINT, DEPTH5 = range(4)
ACT_NONE, ACT_RELU, ACT_HSWISH, ACT_HSIGMOID = range(4)


def load(path):
    raw = open(path, "rb").read()
    md5 = hashlib.md5(raw).hexdigest()
    if len(raw) != ONNX_SIZE or md5 != ONNX_MD5:
        raise SystemExit(f"{path}: {len(raw)} bytes, md5 {md5}; want {ONNX_SIZE} bytes, md5 {ONNX_MD5} "
                         "(hpc203/picodet-onnxruntime @dfe4d6cd coco/picodet_s_320_coco.onnx)")
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
        self.users = {}
        for n in self.nodes:
            for i in n.input:
                self.users.setdefault(i, []).append(n)

    def only(self, name, op):
        us = self.users.get(name, [])
        return us[0] if len(us) == 1 and us[0].op_type == op else None

    def scalar(self, name):
        v = self.consts.get(name)
        return None if v is None or v.size != 1 else float(v.reshape(()))

    def hardswish(self, name):
        """x·clip(x+3, 0, 6)/6 reading name: the nodes it spans and its output, or None."""
        us = self.users.get(name, [])
        if sorted(u.op_type for u in us) != ["Add", "Mul"]:
            return None
        add = [u for u in us if u.op_type == "Add"][0]
        mul = [u for u in us if u.op_type == "Mul"][0]
        clip = self.only(add.output[0], "Clip")
        div = self.only(mul.output[0], "Div")
        assert clip is not None and div is not None and clip.output[0] in mul.input
        assert self.scalar(add.input[1]) == 3 and self.scalar(clip.input[1]) == 0
        assert self.scalar(clip.input[2]) == 6 and self.scalar(div.input[1]) == 6
        return {id(add), id(clip), id(mul), id(div)}, div.output[0]

    def shuffle(self, name):
        """Reshape (1, g, C/g, H, W), Transpose (0, 2, 1, 3, 4), Reshape back, reading
        name: (the groups, the nodes it spans, its output), or None."""
        r1 = self.only(name, "Reshape")
        if r1 is None:
            return None
        shape = self.consts[r1.input[1]].astype(int).tolist()
        t = self.only(r1.output[0], "Transpose")
        r2 = self.only(t.output[0], "Reshape")
        assert len(shape) == 5 and attrs(t)["perm"] == [0, 2, 1, 3, 4] and r2 is not None
        return shape[1], {id(r1), id(t), id(r2)}, r2.output[0]


class Program:
    """The operations, and for every ONNX value the channels it is: (slot, first, count)."""

    def __init__(self):
        self.ops = []
        self.slots = 1  # slot 0: the input image
        self.values = {}
        self.channels = {0: 3}

    def slot(self, c):
        s = self.slots
        self.slots += 1
        self.channels[s] = c
        return s


def convert(model):
    g = Graph(model)
    p = Program()
    p.values[model.graph.input[0].name] = (0, 0, 3)
    done = set()
    outputs = []
    for n in g.nodes:
        if id(n) in done:
            continue
        op = n.op_type
        a = attrs(n)
        if op == "Conv":
            slot, first, count = p.values[n.input[0]]
            w = g.consts[n.input[1]]
            b = g.consts[n.input[2]] if len(n.input) > 2 else np.zeros(w.shape[0])
            k, s, group = a["kernel_shape"][0], a["strides"][0], a.get("group", 1)
            assert a["kernel_shape"] == [k, k] and a["pads"] == [k // 2] * 4 and a["dilations"] == [1, 1]
            if group == 1:
                kind = {1: POINT, 3: FULL3}[k]
                assert kind == POINT or s == 2
            else:
                assert group == count == w.shape[0] and w.shape[1] == 1
                kind = {3: DEPTH3, 5: DEPTH5}[k]
            assert w.shape[1] * group == count
            cur, act, params = n.output[0], ACT_NONE, (1.0, 0.0)
            hs = g.hardswish(cur)
            if hs is not None:
                done |= hs[0]
                cur, act = hs[1], ACT_HSWISH
            elif g.only(cur, "Relu") is not None:
                r = g.only(cur, "Relu")
                done.add(id(r))
                cur, act = r.output[0], ACT_RELU
            elif g.only(cur, "Split") is not None:  # a level's head
                sp = g.only(cur, "Split")
                assert attrs(sp)["split"] == [CLASSES, 4 * (REG_MAX + 1)]
                done.add(id(sp))
                out = p.slot(w.shape[0])
                p.ops.append(dict(code=OP_CONV, ins=[slot], first=first, count=count, out=out, kind=kind,
                                  stride=s, act=ACT_NONE, params=(1.0, 0.0), w=w, b=b))
                p.ops.append(dict(code=OP_OUTPUT, ins=[out]))
                outputs.append(out)
                continue
            out = p.slot(w.shape[0])
            p.ops.append(dict(code=OP_CONV, ins=[slot], first=first, count=count, out=out, kind=kind, stride=s,
                              act=act, params=params, w=w, b=b))
            p.values[cur] = (out, 0, w.shape[0])
        elif op == "GlobalAveragePool":
            # Squeeze-excite: GAP, Conv, Relu, Conv, HardSigmoid, Mul(x, gate).
            x = n.input[0]
            c1 = g.only(n.output[0], "Conv")
            r = g.only(c1.output[0], "Relu")
            c2 = g.only(r.output[0], "Conv")
            hsig = g.only(c2.output[0], "HardSigmoid")
            mul = g.only(hsig.output[0], "Mul")
            assert sorted(u.op_type for u in g.users[x]) == ["GlobalAveragePool", "Mul"] and x in mul.input
            ha = attrs(hsig)
            slot, first, count = p.values[x]
            assert first == 0 and count == p.channels[slot]
            p.ops.append(dict(code=OP_SE, ins=[slot], w1=g.consts[c1.input[1]], b1=g.consts[c1.input[2]],
                              w2=g.consts[c2.input[1]], b2=g.consts[c2.input[2]],
                              params=(ha["alpha"], ha["beta"])))
            done |= {id(c1), id(r), id(c2), id(hsig), id(mul)}
            p.values[mul.output[0]] = p.values[x]
        elif op == "Concat":
            assert a["axis"] == 1
            chans = []
            for i in n.input:
                slot, first, count = p.values[i]
                chans += [(slot, first + c) for c in range(count)]
            cur = n.output[0]
            sh = g.shuffle(cur)
            if sh is not None:
                groups, nodes, cur = sh
                done |= nodes
                per = len(chans) // groups
                # Output channel j of the shuffle is input channel (j % groups)·per + j // groups.
                chans = [chans[(j % groups) * per + j // groups] for j in range(len(chans))]
            out = p.slot(len(chans))
            p.ops.append(dict(code=OP_GATHER, ins=sorted({c[0] for c in chans}), out=out, chans=chans))
            p.values[cur] = (out, 0, len(chans))
        elif op == "Split":
            assert a["axis"] == 1
            slot, first, count = p.values[n.input[0]]
            at = first
            for o, size in zip(n.output, a["split"]):
                p.values[o] = (slot, at, size)
                at += size
            assert at == first + count
        elif op == "MaxPool":
            assert a["kernel_shape"] == [3, 3] and a["strides"] == [2, 2] and a["pads"] == [1] * 4
            assert a.get("ceil_mode", 0) == 0
            slot, first, count = p.values[n.input[0]]
            assert first == 0 and count == p.channels[slot]
            out = p.slot(count)
            p.ops.append(dict(code=OP_MAXPOOL, ins=[slot], out=out))
            p.values[n.output[0]] = (out, 0, count)
        elif op == "Resize":
            assert a["mode"] == b"nearest" and a["coordinate_transformation_mode"] == b"half_pixel"
            assert a.get("nearest_mode", b"round_prefer_floor") == b"round_prefer_floor"
            assert g.consts[n.input[2]].tolist() == [1, 1, 2, 2]
            slot, first, count = p.values[n.input[0]]
            assert first == 0 and count == p.channels[slot]
            out = p.slot(count)
            p.ops.append(dict(code=OP_UP2, ins=[slot], out=out))
            p.values[n.output[0]] = (out, 0, count)
        elif op == "Add":
            x, y = (p.values[i] for i in n.input)
            assert x[1] == y[1] == 0 and x[2] == y[2] == p.channels[x[0]] == p.channels[y[0]]
            out = p.slot(x[2])
            p.ops.append(dict(code=OP_ADD, ins=[x[0], y[0]], out=out))
            p.values[n.output[0]] = (out, 0, x[2])
        elif op in ("Sigmoid", "Reshape", "Transpose"):
            # After a head's Split: the graph's output layout, which Go reads as it is.
            assert any(o.name.startswith("save_infer_model") for o in model.graph.output)
        else:
            raise SystemExit(f"unsupported op {op} ({n.name})")
    assert len(outputs) == len(STRIDES)
    # Each slot is freed after the last operation reading it.
    last = {}
    for i, o in enumerate(p.ops):
        for s in o["ins"]:
            last[s] = i
    for s in outputs:
        last.pop(s)
    for o in p.ops:
        o["free"] = []
    for s, i in last.items():
        p.ops[i]["free"].append(s)
    return p


def tensor(f, arr):
    arr = np.asarray(arr, dtype=np.float64)
    f.write(struct.pack("<I", arr.ndim))
    for d in arr.shape:
        f.write(struct.pack("<I", d))
    f.write(arr.astype("<f4").tobytes())


def u32(f, *vs):
    for v in vs:
        f.write(struct.pack("<I", v))


def export(p, path):
    with open(path, "wb") as f:
        f.write(b"PDT1")
        u32(f, p.slots, len(p.ops))
        for o in p.ops:
            u32(f, o["code"])
            c = o["code"]
            if c == OP_CONV:
                u32(f, o["ins"][0], o["first"], o["count"], o["out"], o["kind"], o["stride"], o["act"], o["w"].shape[0])
                tensor(f, o["params"])
                tensor(f, o["w"])
                tensor(f, o["b"])
            elif c == OP_SE:
                u32(f, o["ins"][0], o["w1"].shape[0])
                tensor(f, o["params"])
                for k in ("w1", "b1", "w2", "b2"):
                    tensor(f, o[k])
            elif c == OP_GATHER:
                u32(f, o["out"], len(o["chans"]))
                for s, ch in o["chans"]:
                    u32(f, s, ch)
            elif c in (OP_MAXPOOL, OP_UP2):
                u32(f, o["ins"][0], o["out"])
            elif c == OP_ADD:
                u32(f, o["ins"][0], o["ins"][1], o["out"])
            elif c == OP_OUTPUT:
                u32(f, o["ins"][0])
            u32(f, len(o["free"]), *sorted(o["free"]))
    names = ["conv", "se", "gather", "maxpool", "up2", "add", "output"]
    counts = {k: sum(o["code"] == i for o in p.ops) for i, k in enumerate(names)}
    print(f"{path}: {len(p.ops)} operations {counts}, {p.slots} slots, {os.path.getsize(path)} bytes")


def normalise(bgr):
    """A 320×320 BGR uint8 photo to the network's 1×3×320×320 input: (v − mean)/std,
    blue first (PaddleDetection reads photos with OpenCV)."""
    x = bgr.astype(np.float32)
    out = np.empty((1, 3) + bgr.shape[:2], np.float32)
    for c in range(3):
        out[0, c] = (x[:, :, c] - np.float32(MEAN[c])) / np.float32(STD[c])
    return out


ORT_JS = r"""
const ort = require(process.argv[2] + '/onnxruntime-node');
const fs = require('fs');
(async () => {
  const s = await ort.InferenceSession.create(process.argv[3]);
  for (const f of process.argv.slice(4)) {
    const buf = fs.readFileSync(f);
    const x = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
    const out = await s.run({image: new ort.Tensor('float32', x, [1, 3, 320, 320])});
    for (let i = 0; i < 8; i++) {
      const t = out['save_infer_model/scale_' + i + '.tmp_1'];
      fs.writeFileSync(f + '.' + i, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
    }
  }
})();
"""


def run_ort(ort, onnx_path, inputs):
    """onnxruntime-node's outputs for each 1×3×320×320 input: per level (cls A×80, reg A×32)."""
    with tempfile.TemporaryDirectory() as d:
        js = os.path.join(d, "run.js")
        open(js, "w").write(ORT_JS)
        files = []
        for i, x in enumerate(inputs):
            f = os.path.join(d, f"in{i}.f32")
            x.astype("<f4").tofile(f)
            files.append(f)
        subprocess.run(["node", js, ort, onnx_path] + files, check=True)
        res = []
        for f in files:
            outs = [np.fromfile(f"{f}.{i}", "<f4") for i in range(8)]
            res.append([(outs[l].reshape(-1, CLASSES), outs[4 + l].reshape(-1, 4 * (REG_MAX + 1)))
                        for l in range(4)])
        return res


def decode(levels, w=SIDE, h=SIDE, threshold=0.3, iou=0.6):
    """GFL's boxes from a photo's head outputs, in the network's 320×320 pixels: at
    anchor (x, y) of a level of stride s, centre ((x+0.5)s, (y+0.5)s); each side's
    distance is s × the expectation of the softmax of its 8 logits over 0..7; a box per
    anchor, its best class, kept from score threshold; then non-maximum suppression per
    class at IoU iou, then again among the vehicles (car, bus and truck one class) on
    the boxes kept. The independent reference for the Go decoder."""
    boxes = []
    for (cls, reg), s in zip(levels, STRIDES):
        n = int(round(np.sqrt(cls.shape[0])))
        for i in range(cls.shape[0]):
            c = int(np.argmax(cls[i]))
            score = float(cls[i, c])
            if score < threshold:
                continue
            y, x = divmod(i, n)
            cx, cy = (x + 0.5) * s, (y + 0.5) * s
            d = reg[i].reshape(4, REG_MAX + 1).astype(np.float64)
            e = np.exp(d - d.max(1, keepdims=True))
            dist = (e / e.sum(1, keepdims=True)) @ np.arange(REG_MAX + 1) * s
            boxes.append(dict(cls=c, score=score, box=[max(cx - dist[0], 0), max(cy - dist[1], 0),
                                                       min(cx + dist[2], w), min(cy + dist[3], h)]))
    boxes.sort(key=lambda b: -b["score"])
    for same in (lambda a, b: a == b, lambda a, b: a in VEHICLES and b in VEHICLES):
        kept = []
        for b in boxes:
            if all(not same(k["cls"], b["cls"]) or box_iou(k["box"], b["box"]) <= iou for k in kept):
                kept.append(b)
        boxes = kept
    return boxes


VEHICLES = (2, 5, 7)  # COCO's car, bus, truck


def box_iou(a, b):
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    area = lambda r: (r[2] - r[0]) * (r[3] - r[1])
    return inter / (area(a) + area(b) - inter + 1e-12)


def export_golden(onnx_path, ort, photos, dir):
    import cv2
    os.makedirs(dir, exist_ok=True)
    smalls, bases = [], []
    for p in photos:
        bgr = cv2.imread(p, cv2.IMREAD_COLOR)
        small = cv2.resize(bgr, (SIDE, SIDE), interpolation=cv2.INTER_AREA)
        base = os.path.splitext(os.path.basename(p))[0]
        cv2.imwrite(os.path.join(dir, base + ".png"), small)
        # The network reads the PNG as written (lossless): the same pixels Go reads.
        smalls.append(cv2.imread(os.path.join(dir, base + ".png"), cv2.IMREAD_COLOR))
        bases.append(base)
    outs = run_ort(ort, onnx_path, [normalise(s) for s in smalls])
    for base, levels in zip(bases, outs):
        with open(os.path.join(dir, base + ".head.bin.gz"), "wb") as raw, \
                gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            for cls, reg in levels:
                f.write(np.round(np.clip(cls, 0, 1) * 65535).astype("<u2").tobytes())
                f.write(reg.astype("<f2").tobytes())
        boxes = decode(levels)
        json.dump([dict(cls=b["cls"], score=round(b["score"], 5), box=[round(v, 3) for v in b["box"]])
                   for b in boxes], open(os.path.join(dir, base + ".boxes.json"), "w"), indent=1)
        print(f"{base}: {len(boxes)} boxes: " + ", ".join(f"{b['cls']}:{b['score']:.2f}" for b in boxes[:8]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--out")
    ap.add_argument("--golden", help="directory for the parity test's photos and outputs")
    ap.add_argument("--ort", default="/tmp/ort/node_modules", help="node_modules holding onnxruntime-node")
    ap.add_argument("photos", nargs="*")
    args = ap.parse_args()
    model = load(args.onnx)
    if args.out:
        export(convert(model), args.out)
    if args.golden:
        export_golden(args.onnx, args.ort, args.photos, args.golden)


if __name__ == "__main__":
    main()
