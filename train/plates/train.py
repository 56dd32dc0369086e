#!/usr/bin/python3
"""Train the licence-plate detector that imageops/plates runs in pure Go.

The network is a small fully-convolutional detector (FCOS-like, one output
level at stride 4): per cell a plate score and the distances to the plate
box's left, top, right and bottom edges. It is trained on the non-held-out
80% of plates-web-cc0 and plates-dashcam-ro (held out: fnv32a(base name) % 5
== 0, never read here), with strong augmentation so that it generalises to
other countries and cameras.

Usage (from the repository root):

    /usr/bin/python3 train/plates/train.py --data ../shared/datasets \
        --out imageops/plates/weights.bin

It writes the weights (batch norm folded into the convolutions) as a compact
little-endian float32 file, and imageops/plates/testdata/parity.bin, which the
Go test uses to check that the Go inference matches torch.
"""

import argparse
import json
import math
import os
import random
import struct
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image, ImageEnhance, ImageFilter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import synth  # noqa: E402

SETS = ["plates-web-cc0", "plates-dashcam-ro"]
# The larger sets ../shared/datasets/extra/build.py builds outside the
# repository; --extra DIR (the build's OUT_DIR) adds them to SETS.
EXTRA_SETS = ["plates-openimages", "plates-openlpr"]
DIRS = {}  # set -> its folder, where not under --data


def use_extra(extra):
    """Adds the extra sets in the folder extra (if given) to SETS, in place,
    so that every program importing SETS reads them too."""
    if not extra:
        return
    for s in EXTRA_SETS:
        if s not in SETS:
            SETS.append(s)
        DIRS[s] = os.path.join(os.path.expanduser(extra), s)


def set_dir(data, s):
    """The folder of set s."""
    return DIRS.get(s, os.path.join(data, s))
WORK = 640  # long side of the working image, as in Go (workSide)
STRIDE = 4
SWAP = 0.0  # chance that a labelled plate in a sample is repainted as another design (synth.py); --swap
TEXT = 0.0  # chance that a sample gets a caption or watermark written on it, as background (synth.py); --text


def fnv32a(s):
    h = 0x811C9DC5
    for b in s.encode():
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def split_of(name):
    """heldout, val or train, fixed by file name hash."""
    h = fnv32a(name)
    if h % 5 == 0:
        return "heldout"
    if h % 5 == 1:
        return "val"
    return "train"


# ---------------------------------------------------------------- model
# The Go side (imageops/plates/net.go) builds the same layers in the same
# order; keep them in step.


class ConvBN(nn.Module):
    def __init__(self, cin, cout, k, stride=1, groups=1, relu=True):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.relu = relu

    def forward(self, x):
        x = self.bn(self.conv(x))
        return F.relu(x) if self.relu else x


class Block(nn.Module):
    """Depthwise 3x3 (stride s) + pointwise 1x1, residual when shapes match."""

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.dw = ConvBN(cin, cin, 3, stride, groups=cin)
        self.pw = ConvBN(cin, cout, 1)
        self.res = stride == 1 and cin == cout

    def forward(self, x):
        y = self.pw(self.dw(x))
        return x + y if self.res else y


# The first stage's widths: stem, the backbone at strides 4, 8, 16 and 32, the
# pyramid's width at strides 8-32 and at stride 4; the weights file's magic
# says which (imageops/plates/net.go reads both).
LAYOUTS = {
    "narrow": ((8, 24, 48, 64, 96, 32, 16), b"PLT1"),
    "wide": ((12, 32, 64, 96, 128, 48, 24), b"PLT2"),
}


class Net(nn.Module):
    def __init__(self, layout="narrow"):
        super().__init__()
        (s, c4, c8, c16, c32, f, f4), self.magic = LAYOUTS[layout]
        self.stem = ConvBN(3, s, 3, 2)  # /2
        self.b4a = Block(s, c4, 2)  # /4
        self.b4b = Block(c4, c4)
        self.b8a = Block(c4, c8, 2)  # /8
        self.b8b = Block(c8, c8)
        self.b16a = Block(c8, c16, 2)  # /16
        self.b16b = Block(c16, c16)
        self.b32a = Block(c16, c32, 2)  # /32
        self.b32b = Block(c32, c32)
        self.l32 = ConvBN(c32, f, 1)
        self.l16 = ConvBN(c16, f, 1)
        self.m16 = Block(f, f)
        self.l8 = ConvBN(c8, f, 1)
        self.m8 = Block(f, f)
        self.r8 = ConvBN(f, f4, 1)
        self.l4 = ConvBN(c4, f4, 1)
        self.m4 = Block(f4, f4)
        self.head = nn.Conv2d(f4, 5, 1)
        nn.init.constant_(self.head.bias, 0.0)
        with torch.no_grad():
            self.head.bias[0] = -4.6
            self.head.weight.mul_(0.1)

    def forward(self, x):
        x = self.stem(x)
        f4 = self.b4b(self.b4a(x))
        f8 = self.b8b(self.b8a(f4))
        f16 = self.b16b(self.b16a(f8))
        f32 = self.b32b(self.b32a(f16))
        p = self.l32(f32)
        p = self.m16(self.l16(f16) + F.interpolate(p, scale_factor=2, mode="nearest"))
        p = self.m8(self.l8(f8) + F.interpolate(p, scale_factor=2, mode="nearest"))
        p = self.r8(p)
        p = self.m4(self.l4(f4) + F.interpolate(p, scale_factor=2, mode="nearest"))
        return self.head(p)


def folded(cbn):
    """Weights and bias of a ConvBN with batch norm folded in."""
    w = cbn.conv.weight.detach().double()
    bn = cbn.bn
    scale = bn.weight.detach().double() / torch.sqrt(bn.running_var.double() + bn.eps)
    w = w * scale.view(-1, 1, 1, 1)
    b = bn.bias.detach().double() - bn.running_mean.double() * scale
    return w.float(), b.float()


def export(net, path):
    """Writes the tensors in forward order: magic, count, then (ndim, dims, data)."""
    tensors = []

    def add(cbn):
        w, b = folded(cbn)
        tensors.extend([w, b])

    add(net.stem)
    for blk in [net.b4a, net.b4b, net.b8a, net.b8b, net.b16a, net.b16b, net.b32a, net.b32b]:
        add(blk.dw)
        add(blk.pw)
    add(net.l32)
    add(net.l16)
    add(net.m16.dw)
    add(net.m16.pw)
    add(net.l8)
    add(net.m8.dw)
    add(net.m8.pw)
    add(net.r8)
    add(net.l4)
    add(net.m4.dw)
    add(net.m4.pw)
    tensors.extend([net.head.weight.detach().float(), net.head.bias.detach().float()])
    write_tensors(path, net.magic, tensors)


def write_tensors(path, magic, tensors):
    """magic, the tensor count, then each tensor's rank, dims and float32
    data, little-endian: what imageops/internal/nn.Reader reads."""
    with open(path, "wb") as f:
        f.write(magic)
        f.write(struct.pack("<I", len(tensors)))
        for t in tensors:
            t = t.contiguous()
            f.write(struct.pack("<I", t.dim()))
            f.write(struct.pack("<%dI" % t.dim(), *t.shape))
            f.write(t.numpy().astype("<f4").tobytes())


def parity_input(h, w):
    """A deterministic test image, computed the same way in the Go test."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    c = np.stack(
        [np.sin(x * 0.37 + y * 0.11), np.cos(x * 0.05 - y * 0.29), np.sin(x * y * 0.013)]
    )
    return torch.from_numpy(c.astype(np.float32))[None]


def write_parity(net, path):
    h, w = 64, 96
    with torch.no_grad():
        out = net(parity_input(h, w))[0]
    with open(path, "wb") as f:
        f.write(struct.pack("<3I", *out.shape))
        f.write(out.numpy().astype("<f4").tobytes())


# ---------------------------------------------------------------- data


UNLABELLED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "unlabelled.json")


def unlabelled(paths=(UNLABELLED,)):
    """Plates the sets' labels miss, found by reviewing the detector's
    unlabelled detections on the training and validation photos by eye
    (README.md), from each file of paths: {(set, file): [(x0, y0, x1, y1),
    ...]}. Without them the networks are taught that these plates, mostly
    small ones in traffic, are background."""
    extra = {}
    for path in paths:
        for e in json.load(open(path)):
            extra.setdefault((e["set"], e["file"]), []).append(tuple(e["box"]))
    return extra


def copies(path, trained=("train",)):
    """The (set, file) of the photos in the trained splits that have a copy
    in another split (imageops/plates/testdata/copies.json, which TestListCopies writes:
    the web set holds the same photo under several names, the dash-cam set
    frames a moment apart). --drop-copies leaves them out, so that no
    validation or held-out photo is one the network learnt."""
    drop = set()
    for g in json.load(open(path)) if path else []:
        in_trained = [f for f in g["files"] if split_of(os.path.basename(f)) in trained]
        if len(in_trained) < len(g["files"]):
            drop |= {(g["set"], f) for f in in_trained}
    return drop


def load(data_dir, drop=frozenset()):
    items = {"train": [], "val": []}
    extra = unlabelled()
    for s in SETS:
        labels = json.load(open(os.path.join(set_dir(data_dir, s), "labels.json")))
        for e in labels:
            name = os.path.basename(e["file"])
            sp = split_of(name)
            if sp == "heldout" or (s, e["file"]) in drop:
                continue
            img = Photo(os.path.join(set_dir(data_dir, s), e["file"]))
            boxes = [(p["x"], p["y"], p["x"] + p["w"], p["y"] + p["h"]) for p in e["plates"]]
            boxes += extra.get((s, e["file"]), [])
            items[sp].append((name, img, np.array(boxes, dtype=np.float32).reshape(-1, 4)))
    return items


class Photo:
    """A photo read from its file when used: thousands of photos do not fit
    in memory decoded. PIL's size is read from the header."""

    def __init__(self, path):
        self.path = path
        with Image.open(path) as im:
            self.size = im.size

    def rgb(self):
        return Image.open(self.path).convert("RGB")


def _shrink(img, region, crop, sx, sy):
    """The region scaled down with an area filter, padded with grey."""
    w0, h0 = img.size
    x0, y0, x1, y1 = region
    cx0, cy0 = max(0, int(math.floor(x0))), max(0, int(math.floor(y0)))
    cx1, cy1 = min(w0, int(math.ceil(x1))), min(h0, int(math.ceil(y1)))
    out = Image.new("RGB", (crop, crop), (128, 128, 128))
    if cx1 <= cx0 or cy1 <= cy0:
        return out
    tw = max(1, int(round((cx1 - cx0) * sx)))
    th = max(1, int(round((cy1 - cy0) * sy)))
    part = img.crop((cx0, cy0, cx1, cy1)).resize((tw, th), Image.BILINEAR, reducing_gap=None)
    out.paste(part, (int(round((cx0 - x0) * sx)), int(round((cy0 - y0) * sy))))
    return out


def normalise(arr):
    """uint8 HWC -> float CHW, as Go's normalise."""
    return (arr.astype(np.float32) / 255.0 - 0.5) / 0.25


def augment(photo, boxes, crop):
    """A random crop x crop training sample with its plate boxes."""
    img = photo.rgb()
    w0, h0 = img.size
    base = WORK / max(w0, h0)
    s = base * math.exp(random.uniform(math.log(0.45), math.log(1.7)))
    sx = sy = s
    if random.random() < 0.3:  # aspect jitter
        sx *= math.exp(random.uniform(-0.15, 0.15))
    b = boxes.copy()
    b[:, [0, 2]] *= sx
    b[:, [1, 3]] *= sy
    nw, nh = w0 * sx, h0 * sy
    # Crop (in scaled pixels), preferring one that holds a plate.
    if len(b) and random.random() < 0.65:
        k = random.randrange(len(b))
        pcx, pcy = (b[k, 0] + b[k, 2]) / 2, (b[k, 1] + b[k, 3]) / 2
        ox = int(pcx - random.uniform(0.1, 0.9) * crop)
        oy = int(pcy - random.uniform(0.1, 0.9) * crop)
    else:
        ox = random.randint(int(min(0, nw - crop)), int(max(0, nw - crop)))
        oy = random.randint(int(min(0, nh - crop)), int(max(0, nh - crop)))
    # Cut the crop's region out of the original first, then scale only it.
    region = (ox / sx, oy / sy, (ox + crop) / sx, (oy + crop) / sy)
    im = img.transform((crop, crop), Image.EXTENT, region, Image.BILINEAR, fillcolor=(128, 128, 128)) \
        if sx >= 1 else _shrink(img, region, crop, sx, sy)
    b = b - [ox, oy, ox, oy]
    # Now and then a plate repainted as one of another country, and text
    # that is not a plate written on the background (synth.py).
    if SWAP or TEXT:
        arr = np.array(im)
        for i in range(len(b)):
            if random.random() < SWAP:
                b[i] = synth.swap(arr, tuple(b[i]), random)
        if random.random() < TEXT:
            for _ in range(random.randint(1, 2)):
                synth.scribble(arr, b, random, 6, 40)
        im = Image.fromarray(arr)
    # Small rotation/shear around the crop centre.
    if random.random() < 0.5:
        ang = math.radians(random.uniform(-10, 10))
        sh = random.uniform(-0.15, 0.15)
        cx = cy = crop / 2
        ca, sa = math.cos(ang), math.sin(ang)
        m = np.array([[ca, ca * sh - sa], [sa, sa * sh + ca]])
        inv = np.linalg.inv(m)
        # PIL wants the inverse map (output -> input).
        a, bb_, c_ = inv[0, 0], inv[0, 1], cx - inv[0, 0] * cx - inv[0, 1] * cy
        d, e, f = inv[1, 0], inv[1, 1], cy - inv[1, 0] * cx - inv[1, 1] * cy
        im = im.transform((crop, crop), Image.AFFINE, (a, bb_, c_, d, e, f), Image.BILINEAR,
                          fillcolor=(128, 128, 128))
        nb = []
        for x0, y0, x1, y1 in b:
            pts = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]]) - [cx, cy]
            q = pts @ m.T + [cx, cy]
            # The box of a rotated box is loose; pull it in part way.
            bx0, by0 = q.min(0)
            bx1, by1 = q.max(0)
            ix = (bx1 - bx0 - (x1 - x0)) * 0.25
            iy = (by1 - by0 - (y1 - y0)) * 0.25
            nb.append([bx0 + ix, by0 + iy, bx1 - ix, by1 - iy])
        b = np.array(nb, dtype=np.float32).reshape(-1, 4)
    arr = np.asarray(im)
    # Photometric.
    pil = Image.fromarray(arr)
    if random.random() < 0.8:
        pil = ImageEnhance.Brightness(pil).enhance(math.exp(random.uniform(-0.6, 0.4)))
        pil = ImageEnhance.Contrast(pil).enhance(math.exp(random.uniform(-0.5, 0.4)))
        pil = ImageEnhance.Color(pil).enhance(random.uniform(0.0, 1.6))
    if random.random() < 0.25:
        pil = pil.filter(ImageFilter.GaussianBlur(random.uniform(0.3, 1.4)))
    arr = np.asarray(pil).astype(np.float32)
    if random.random() < 0.5:  # any colour of plate: permute channels
        arr = arr[:, :, np.random.permutation(3)]
    if random.random() < 0.3:
        arr = arr + np.random.normal(0, random.uniform(2, 10), arr.shape)
    if random.random() < 0.5:
        arr = arr[:, ::-1]
        b = b[:, [2, 1, 0, 3]].copy()
        b[:, 0] = crop - b[:, 0]
        b[:, 2] = crop - b[:, 2]
    arr = np.clip(arr, 0, 255)
    return normalise(arr).transpose(2, 0, 1).copy(), b


def targets(boxes, size):
    """cls (1 plate, 0 background, -1 ignore) and ltrb (log, in strides) maps."""
    n = size // STRIDE
    cls = np.zeros((n, n), np.float32)
    reg = np.zeros((4, n, n), np.float32)
    regmask = np.zeros((n, n), np.float32)
    centres = np.arange(n) * STRIDE + STRIDE / 2 - 0.5
    area_at = np.full((n, n), np.inf, np.float32)
    for x0, y0, x1, y1 in boxes:
        w, h = x1 - x0, y1 - y0
        if w < 2 or h < 2:
            continue
        cx0, cy0, cx1, cy1 = max(x0, 0), max(y0, 0), min(x1, size), min(y1, size)
        if cx1 <= cx0 or cy1 <= cy0:
            continue
        visible = (cx1 - cx0) * (cy1 - cy0) / (w * h)
        ix = (centres >= x0 - 1) & (centres <= x1 + 1)
        iy = (centres >= y0 - 1) & (centres <= y1 + 1)
        region = np.outer(iy, ix)
        if visible < 0.6 or w < 5:
            cls[region & (cls == 0)] = -1
            continue
        mx, my = (x0 + x1) / 2, (y0 + y1) / 2
        rx, ry = max(0.3 * w, 2.5), max(0.3 * h, 2.5)
        px = np.abs(centres - mx) <= rx
        py = np.abs(centres - my) <= ry
        pos = np.outer(py, px)
        cls[region & ~pos & (cls == 0)] = -1
        area = w * h
        take = pos & (area < area_at)
        if not take.any():
            continue
        area_at[take] = area
        cls[take] = 1
        gy, gx = np.nonzero(take)
        cxs, cys = centres[gx], centres[gy]
        d = np.stack([cxs - x0, cys - y0, x1 - cxs, y1 - cys])
        reg[:, gy, gx] = np.log(np.maximum(d, 0.5) / STRIDE)
        regmask[take] = 1
    return cls, reg, regmask


def batch(items, bs, crop):
    xs, cs, rs, ms = [], [], [], []
    for _ in range(bs):
        _, img, boxes = random.choice(items)
        x, b = augment(img, boxes, crop)
        c, r, m = targets(b, crop)
        xs.append(x)
        cs.append(c)
        rs.append(r)
        ms.append(m)
    return (torch.from_numpy(np.stack(xs)), torch.from_numpy(np.stack(cs)),
            torch.from_numpy(np.stack(rs)), torch.from_numpy(np.stack(ms)))


def loss_fn(out, cls, reg, regmask):
    logit = out[:, 0]
    valid = cls >= 0
    t = cls.clamp(min=0)
    p = torch.sigmoid(logit)
    ce = F.binary_cross_entropy_with_logits(logit, t, reduction="none")
    pt = p * t + (1 - p) * (1 - t)
    alpha = 0.25 * t + 0.75 * (1 - t)
    focal = (alpha * (1 - pt) ** 2 * ce * valid).sum()
    npos = max(1.0, float(regmask.sum()))
    l1 = (F.smooth_l1_loss(out[:, 1:], reg, reduction="none", beta=0.1).sum(1) * regmask).sum()
    # GIoU of the boxes the distances describe, for scale-free box quality.
    p = torch.exp(out[:, 1:].clamp(-4, 6))
    t = torch.exp(reg)
    inter = (torch.min(p[:, 0], t[:, 0]) + torch.min(p[:, 2], t[:, 2])) * \
        (torch.min(p[:, 1], t[:, 1]) + torch.min(p[:, 3], t[:, 3]))
    union = (p[:, 0] + p[:, 2]) * (p[:, 1] + p[:, 3]) + (t[:, 0] + t[:, 2]) * (t[:, 1] + t[:, 3]) - inter
    hull = (torch.max(p[:, 0], t[:, 0]) + torch.max(p[:, 2], t[:, 2])) * \
        (torch.max(p[:, 1], t[:, 1]) + torch.max(p[:, 3], t[:, 3]))
    giou = inter / union - (hull - union) / hull
    lg = ((1 - giou) * regmask).sum()
    return focal / npos, (0.5 * l1 + 2 * lg) / npos


# ---------------------------------------------------------------- evaluation
# Mirrors the Go decoder closely enough to tune on the validation split.


def prepare(img):
    w0, h0 = img.size
    s = WORK / max(w0, h0)
    nw, nh = max(1, round(w0 * s)), max(1, round(h0 * s))
    im = img.resize((nw, nh), Image.BOX if s < 1 else Image.BILINEAR)
    pw, ph = (nw + 31) // 32 * 32, (nh + 31) // 32 * 32
    x = np.zeros((3, ph, pw), np.float32)
    x[:, :nh, :nw] = normalise(np.asarray(im)).transpose(2, 0, 1)
    return torch.from_numpy(x)[None], s


def decode(out, s, thr, nms_iou=0.3, margin=(0.10, 0.25)):
    score = torch.sigmoid(out[0]).numpy()
    reg = np.exp(out[1:].numpy()) * STRIDE
    n, m = score.shape
    ys, xs = np.nonzero(score > thr)
    cand = []
    for y, x in zip(ys, xs):
        c = score[y, x]
        cx, cy = x * STRIDE + STRIDE / 2 - 0.5, y * STRIDE + STRIDE / 2 - 0.5
        l, t, r, b = reg[:, y, x]
        cand.append((c, cx - l, cy - t, cx + r, cy + b))
    cand.sort(key=lambda c: -c[0])
    keep = []
    for c in cand:
        if all(iou(c[1:], k[1:]) < nms_iou for k in keep):
            keep.append(c)
    res = []
    for c, x0, y0, x1, y1 in keep:
        w, h = x1 - x0, y1 - y0
        mx, my = margin[0] * w + 0.5 * margin[1] * h, margin[1] * h
        res.append((c, (x0 - mx) / s, (y0 - my) / s, (x1 + mx) / s, (y1 + my) / s))
    return res


def iou(a, b):
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    i = ix * iy
    u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i
    return i / u if u > 0 else 0


def covered(box, dets, w, h):
    """Fraction of box inside the union of the detected boxes (rasterised)."""
    x0, y0, x1, y1 = [int(round(v)) for v in box]
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    if x1 <= x0 or y1 <= y0:
        return 1.0
    m = np.zeros((y1 - y0, x1 - x0), bool)
    for d in dets:
        a0, b0 = max(x0, int(math.floor(d[1]))), max(y0, int(math.floor(d[2])))
        a1, b1 = min(x1, int(math.ceil(d[3]))), min(y1, int(math.ceil(d[4])))
        if a1 > a0 and b1 > b0:
            m[b0 - y0:b1 - y0, a0 - x0:a1 - x0] = True
    return m.mean()


def evaluate(net, items, thrs=(0.2, 0.3, 0.4, 0.5)):
    net.eval()
    outs = []
    with torch.no_grad():
        for name, img, boxes in items:
            x, s = prepare(img.rgb())
            outs.append((net(x)[0], s, img.size, boxes, name))
    res = {}
    for thr in thrs:
        for set_ in SETS:
            found = total = false = nimg = 0
            for out, s, (w, h), boxes, name in outs:
                if not name.startswith(set_):
                    continue
                dets = decode(out, s, thr)
                nimg += 1
                for b in boxes:
                    total += 1
                    found += covered(b, dets, w, h) >= 0.95
                for d in dets:
                    if all(iou(d[1:], b) == 0 for b in boxes):
                        false += 1
            res[(thr, set_)] = (found / max(1, total), false / max(1, nimg))
    net.train()
    return res


def main():
    global SWAP, TEXT
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="../shared/datasets")
    ap.add_argument("--out", default="imageops/plates/weights.bin")
    ap.add_argument("--parity", default="imageops/plates/testdata/parity.bin")
    ap.add_argument("--steps", type=int, default=4500)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--crop", type=int, default=224)
    ap.add_argument("--lr", type=float, default=4e-3)
    # One thread: on a shared machine torch's OpenMP workers spin-wait, and
    # two threads cost ten times the CPU per step of one (measured).
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--all", action="store_true", help="train on train+val (no tuning split)")
    ap.add_argument("--swap", type=float, default=SWAP, help="chance a plate is repainted (synth.py)")
    ap.add_argument("--text", type=float, default=TEXT, help="chance a sample gets a caption as background (synth.py)")
    ap.add_argument("--init", help="start from these weights (a torch state dict) instead of random")
    ap.add_argument("--layout", choices=sorted(LAYOUTS), default="narrow", help="the network's widths (LAYOUTS)")
    ap.add_argument("--drop-copies", help="leave out training photos with a copy in another split (imageops/plates/testdata/copies.json)")
    ap.add_argument("--extra", help="the folder ../shared/datasets/extra/build.py wrote: train on its sets too")
    args = ap.parse_args()
    SWAP, TEXT = args.swap, args.text
    use_extra(args.extra)

    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    t0 = time.time()
    items = load(args.data, copies(args.drop_copies, ("train", "val") if args.all else ("train",)))
    train = items["train"] + (items["val"] if args.all else [])
    print("train %d images, val %d images (loaded in %.0fs)" % (
        len(train), len(items["val"]), time.time() - t0), flush=True)

    net = Net(args.layout)
    if args.init:
        net.load_state_dict(torch.load(args.init))
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, total_steps=args.steps, pct_start=0.05)
    net.train()
    for step in range(1, args.steps + 1):
        x, c, r, m = batch(train, args.batch, args.crop)
        out = net(x)
        lc, lr_ = loss_fn(out, c, r, m)
        loss = lc + lr_
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 50 == 0:
            print("step %d loss cls %.3f reg %.3f (%.0fs)" % (step, lc.item(), lr_.item(), time.time() - t0), flush=True)
        if step % 100 == 0 or step == args.steps:
            os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
            net.eval()
            export(net, args.out)
            net.train()
            if step == args.steps:
                for k, v in sorted(evaluate(net, items["val"]).items()):
                    print("  val thr %.2f %-18s recall %.3f false/img %.3f" % (k[0], k[1], v[0], v[1]), flush=True)
    net.eval()
    export(net, args.out)
    os.makedirs(os.path.dirname(args.parity), exist_ok=True)
    write_parity(net, args.parity)
    torch.save(net.state_dict(), "/tmp/plates-last.pt")
    print("done in %.0fs" % (time.time() - t0), flush=True)


if __name__ == "__main__":
    main()
