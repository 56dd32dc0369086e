#!/usr/bin/python3
"""Train the plate verifier: the detector's second stage (imageops/plates/verify.go).

The detector (train.py) is run at a low threshold so that it misses almost
no plate; it then proposes about twenty boxes a photo, most of them grilles,
badges, lamps and signs. The verifier looks at each proposal again, in a
window cut from the full-resolution photo around it, and says whether it is
a plate and where exactly the plate's box lies in the window.

Inputs: the labelled photos (held out: fnv32a(base name) % 5 == 0, never
read here) and the detector's proposals on every other photo, written by

    PLATES_MINE_OUT=/tmp/plates-candidates.jsonl \\
        go test -tags platesmine -run TestMine ./train/plates/mine/

Usage (from the repository root):

    nice -n 10 /usr/bin/python3 train/plates/verifier.py --data ../shared/datasets \\
        --candidates /tmp/plates-candidates.jsonl --out imageops/plates/verifier.bin

It writes the weights (batch norm folded) and
imageops/plates/testdata/verifier-parity.bin for the Go parity test, and
prints the validation split's recall and false detections per photo for a
range of acceptance thresholds, through a decoder that mirrors the Go one.
"""

import argparse
import io
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
from PIL import Image, ImageFilter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train import Block, ConvBN, SETS, UNLABELLED, copies, folded, normalise, parity_input, set_dir, split_of, unlabelled, use_extra, write_tensors  # noqa: E402
import synth  # noqa: E402

# The window around a proposal box (bw x bh): centred on it, WIN_W wide and
# half as high, resampled to IN_H x IN_W. Keep in step with verify.go.
IN_H, IN_W = 48, 96
CTX_W, CTX_H = 1.75, 3.5  # window width = max(CTX_W * bw, CTX_H * bh)
CONTEXT = 1.0  # the window's size as a multiple of that (a context verifier sees more of the car); --context
MAX_PROPOSALS = 24  # strongest proposals verified per photo (verify.go)
POS_JITTERS = 5  # jittered windows per labelled plate per epoch
SWAP = 0.0  # chance that a plate window's plate is repainted as another design (synth.py); --swap
TEXT = 0.0  # chance that a background window gets a caption written across its middle (synth.py); --text
ROLL = 0.0  # chance that a window is turned 8-25 degrees (a tilted camera) instead of the usual at most 8; --roll
SMALL_JPEG = 0.0  # chance that a window seen at a lower resolution is JPEG compressed at that resolution; --small-jpeg
TURN_PHOTO = False  # turned windows cut from the photo turned about their centre, not turned once cut; --turn-photo
DEGRADE = 0.0  # chance that a window is spoilt as a poor camera or upload would (degrade); --degrade


def window(box):
    x0, y0, x1, y1 = box
    bw, bh = max(x1 - x0, 1.0), max(y1 - y0, 1.0)
    ww = max(CONTEXT * CTX_W * bw, CONTEXT * CTX_H * bh, 8.0)
    wh = ww / 2
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return cx - ww / 2, cy - wh / 2, ww, wh


def axis(o, length, n, src):
    """Source indices and weights for n outputs covering [o, o+length) of an
    axis of src pixels: bilinear when enlarging, up to three evenly spread
    samples (a sparse box filter) when shrinking. Mirrors verify.go."""
    scale = length / n
    idx, wts = [], []
    if scale <= 1:
        f = np.clip(o + (np.arange(n) + 0.5) * scale - 0.5, 0, src - 1)
        i = np.floor(f).astype(np.int64)
        fr = (f - i).astype(np.float32)
        j = np.minimum(i + 1, src - 1)
        return [i, j], [1 - fr, fr]
    k = min(3, int(math.ceil(scale - 1e-9)))
    for s in range(k):
        f = o + (np.arange(n) + (s + 0.5) / k) * scale
        i = np.clip(np.floor(f).astype(np.int64), 0, src - 1)
        idx.append(i)
        wts.append(np.full(n, 1.0 / k, np.float32))
    return idx, wts


def crop(arr, win, n_w=IN_W, n_h=IN_H, grey=False):
    """arr HWC uint8 -> n_h x n_w x 3 float32 (0..255) of the window; with
    grey, mid-grey where the window leaves the photo (as in a turned photo)
    instead of the photo's edge pixels repeated."""
    wx, wy, ww, wh = win
    h, w = arr.shape[:2]
    xi, xw = axis(wx, ww, n_w, w)
    yi, yw = axis(wy, wh, n_h, h)
    out = np.zeros((n_h, n_w, 3), np.float32)
    for a, wa in zip(yi, yw):
        rows = arr[a]
        for b, wb in zip(xi, xw):
            out += (wa[:, None] * wb[None, :])[:, :, None] * rows[:, b]
    if grey:
        xs = wx + (np.arange(n_w) + 0.5) * ww / n_w
        ys = wy + (np.arange(n_h) + 0.5) * wh / n_h
        out[(ys < 0) | (ys >= h), :] = 128
        out[:, (xs < 0) | (xs >= w)] = 128
    return out


# Layouts: the stem's channels, then each depthwise-separable block's
# (channels out, stride), then the hidden layer's width, and the weights
# file's magic. Keep in step with verify.go.
LAYOUTS = {
    # 48x96 -> 24x48 -> 12x24 -> 6x12 -> 3x6; about 1.1 M multiply-adds.
    "narrow": (12, ((24, 2), (24, 1), (48, 2), (48, 1), (64, 2)), 64, b"PLQ1"),
    # Wider from 12x24 on and one more block at 3x6; about 1.9 M.
    "wide": (12, ((24, 2), (32, 1), (64, 2), (64, 1), (128, 2), (128, 1)), 64, b"PLQ2"),
}


class Verifier(nn.Module):
    def __init__(self, layout="narrow"):
        super().__init__()
        stem, blocks, hidden, self.magic = LAYOUTS[layout]
        self.stem = ConvBN(3, stem, 3, 2)
        chans, cin = [], stem
        for cout, stride in blocks:
            chans.append(Block(cin, cout, stride))
            cin = cout
        self.blocks = nn.Sequential(*chans)
        self.drop = nn.Dropout(0.2)  # training only
        self.fc1 = nn.Linear(cin * (IN_H // 16) * (IN_W // 16), hidden)
        self.fc2 = nn.Linear(hidden, 9)  # the plate logit, then its four corners (x, y) in window units

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = F.relu(self.fc1(self.drop(x.flatten(1))))
        return self.fc2(x)


def export(net, path):
    """The weights as verify.go reads them; a context verifier's file starts
    with b"CTX1" and its window's scale (float32) before the usual file."""
    tensors = list(folded(net.stem))
    for b in net.blocks:
        tensors.extend(folded(b.dw))
        tensors.extend(folded(b.pw))
    for fc in [net.fc1, net.fc2]:
        w = fc.weight.detach().float()
        tensors.extend([w.view(w.shape[0], w.shape[1], 1, 1), fc.bias.detach().float()])
    magic = net.magic if CONTEXT == 1.0 else b"CTX1" + struct.pack("<f", CONTEXT) + net.magic
    write_tensors(path, magic, tensors)


def write_parity(net, path):
    with torch.no_grad():
        out = net(parity_input(IN_H, IN_W))[0]
    with open(path, "wb") as f:
        f.write(struct.pack("<I", out.shape[0]))
        f.write(out.numpy().astype("<f4").tobytes())


# ---------------------------------------------------------------- data


def iou(a, b):
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    i = ix * iy
    u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i
    return i / u if u > 0 else 0.0


def overlaps(a, b):
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])


def load(data, cand_files, missed=(UNLABELLED,), plateless=None, plateless_times=1, drop=frozenset()):
    """Photos with their labels, the plates the labels miss (the files of
    missed) and proposals; with several proposal files (the first stage at
    different working sizes) a photo gets each file's strongest
    MAX_PROPOSALS. The photos the file plateless lists (car photos with no
    plate in sight, train/plates/plateless.json) join the training photos
    with no plates: all their windows are background, each photo taken
    plateless_times times an epoch (fresh jitter and random boxes each time)."""
    cands = {}
    for cand_file in cand_files:
        for line in open(cand_file):
            r = json.loads(line)
            props = sorted(r["cands"] or [], key=lambda c: -c[0])[:MAX_PROPOSALS]
            cands.setdefault((r["set"], r["file"]), []).extend(props)
    items = {"train": [], "val": []}
    extra = unlabelled(missed)
    for s in SETS:
        for e in json.load(open(os.path.join(set_dir(data, s), "labels.json"))):
            sp = split_of(os.path.basename(e["file"]))
            if sp == "heldout" or (s, e["file"]) in drop:
                continue
            arr = np.asarray(Image.open(os.path.join(set_dir(data, s), e["file"])).convert("RGB"))
            gts = [(p["x"], p["y"], p["x"] + p["w"], p["y"] + p["h"]) for p in e["plates"]]
            gts += extra.get((s, e["file"]), [])
            items[sp].append((s, e["file"], arr, gts, cands.get((s, e["file"]), [])))
    for e in json.load(open(plateless)) if plateless else []:
        arr = np.asarray(Image.open(os.path.join(data, e["set"], e["file"])).convert("RGB"))
        items["train"] += [(e["set"], e["file"], arr, [], cands[(e["set"], e["file"])])] * plateless_times
    return items


def match(box, gts):
    """The label a proposal is judged by: (1, plate) when it is on a plate,
    (0, None) when it touches none, (-1, None) when ambiguous."""
    best, bi = None, 0.0
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    for g in gts:
        v = iou(box, g)
        inside = g[0] <= cx <= g[2] and g[1] <= cy <= g[3]
        if inside:
            v = max(v, 0.3)
        if v > bi:
            best, bi = g, v
    if best is not None and bi >= 0.3:
        return 1, best
    if any(overlaps(box, g) for g in gts):
        return -1, None
    return 0, None


def jitter(g, big=True):
    x0, y0, x1, y1 = g
    w, h = x1 - x0, y1 - y0
    r = 0.35 if big else 0.08
    nw, nh = w * math.exp(random.uniform(-r, r)), h * math.exp(random.uniform(-r, r))
    cx = (x0 + x1) / 2 + random.uniform(-0.6, 0.6) * r * w
    cy = (y0 + y1) / 2 + random.uniform(-0.6, 0.6) * r * h
    return (cx - nw / 2, cy - nh / 2, cx + nw / 2, cy + nh / 2)


def samples(items):
    """One epoch of (crop, label, target box in window units)."""
    out = []
    for _, _, arr, gts, cands in items:
        h, w = arr.shape[:2]
        boxes = []
        for g in gts:
            if g[2] - g[0] < 4 or g[3] - g[1] < 3:
                continue
            boxes += [jitter(g) for _ in range(POS_JITTERS)]
        boxes += [jitter(c[1:], False) for c in cands]
        for _ in range(2):  # random plate-shaped boxes anywhere
            bh = math.exp(random.uniform(math.log(6), math.log(max(7, h / 4))))
            bw = bh * math.exp(random.uniform(math.log(1.2), math.log(5.5)))
            x0, y0 = random.uniform(0, max(1, w - bw)), random.uniform(0, max(1, h - bh))
            boxes.append((x0, y0, x0 + bw, y0 + bh))
        for b in boxes:
            lab, g = match(b, gts)
            if lab < 0:
                continue
            win = window(b)
            t = np.zeros(8, np.float32)
            if lab:
                t = box_quad(g, win)
            out.append((arr, win, lab, t))
    random.shuffle(out)
    return out


def photometric(x):
    """x: IN_H x IN_W x 3 float 0..255, augmented in place-ish."""
    if random.random() < 0.8:
        m = x.mean()
        x = (x - m) * math.exp(random.uniform(-0.5, 0.4)) + m * math.exp(random.uniform(-0.6, 0.4))
    if random.random() < 0.5:
        x = x[:, :, np.random.permutation(3)]
    if random.random() < 0.2:
        x = x.mean(2, keepdims=True).repeat(3, 2)
    if random.random() < 0.3:
        x = x + np.random.normal(0, random.uniform(2, 10), x.shape)
    return np.clip(x, 0, 255)


def draw_turn():
    """A window's rotation (radians) and shear, or None: ±8° now and then,
    8–25° for a share ROLL of the windows (a camera held askew). (No draw
    for the roll unless asked for, so that runs without it repeat the
    earlier ones exactly.)"""
    roll = ROLL and random.random() < ROLL
    if roll or random.random() < 0.35:
        ang = math.radians(random.choice((-1, 1)) * random.uniform(8, 25) if roll else random.uniform(-8, 8))
        return ang, random.uniform(-0.15, 0.15)
    return None


def turned(im, turn, size, fill=(128, 128, 128)):
    """im (PIL) turned and sheared about its centre, cut to size about the
    centre, fill (mid-grey) where nothing was; and the matrix (window pixels about
    the centre) that moves a point of im to the result."""
    ang, sh = turn
    ca, sa = math.cos(ang), math.sin(ang)
    m = np.array([[ca, ca * sh - sa], [sa, sa * sh + ca]])
    inv = np.linalg.inv(m)
    cx, cy = im.size[0] / 2, im.size[1] / 2
    ox, oy = (im.size[0] - size[0]) / 2, (im.size[1] - size[1]) / 2
    # Output pixel p shows im at inv (p + o - c) + c.
    im = im.transform(size, Image.AFFINE,
                      (inv[0, 0], inv[0, 1], cx - inv[0, 0] * (cx - ox) - inv[0, 1] * (cy - oy),
                       inv[1, 0], inv[1, 1], cy - inv[1, 0] * (cx - ox) - inv[1, 1] * (cy - oy)),
                      Image.BILINEAR, fillcolor=fill)
    return im, m


def box_quad(g, win):
    """The corners of box g (photo pixels), clockwise from the top-left, in
    units of the window win: the target the verifier learns. A labelled
    box is the plate's bounds; a turned window turns its corners along
    (turned_quad), so the network learns the corners of turned plates."""
    wx, wy, ww, wh = win
    x0, y0, x1, y1 = (g[0] - wx) / ww, (g[1] - wy) / wh, (g[2] - wx) / ww, (g[3] - wy) / wh
    return np.array([x0, y0, x1, y0, x1, y1, x0, y1], np.float32)


def quad_bounds(q):
    """x0, y0, x1, y1 of a quad's corners (8 values)."""
    q = np.asarray(q).reshape(4, 2)
    return q[:, 0].min(), q[:, 1].min(), q[:, 0].max(), q[:, 1].max()


def turned_quad(t, m):
    """The corner target t (window units) of a window turned by m about its
    centre: each corner moved with the window."""
    c = np.array([IN_W / 2, IN_H / 2])
    q = (t.reshape(4, 2) * [IN_W, IN_H] - c) @ m.T + c
    return (q / [IN_W, IN_H]).astype(np.float32).reshape(8)


def mirrored_quad(t):
    """The corner target t of a window mirrored left to right: x flipped,
    and the corners reordered to start at the (new) top-left again."""
    q = t.reshape(4, 2).copy()
    q[:, 0] = 1 - q[:, 0]
    return q[[1, 0, 3, 2]].reshape(8).astype(np.float32)


# A window to be turned is first cut this much larger about its centre (at
# the same scale), so that its corners, once turned, show the photo (or grey
# where the photo ends) rather than a fill; 25° and the largest shear fit.
BIG_W, BIG_H = 144, 128


def big_window(win):
    """The larger window (photo pixels) a window to be turned is first cut
    as: BIG_W x BIG_H window pixels about the same centre."""
    wx, wy, ww, wh = win
    bw, bh = ww * BIG_W / IN_W, wh * BIG_H / IN_H
    return wx + ww / 2 - bw / 2, wy + wh / 2 - bh / 2, bw, bh


def turned_crop(arr, win, turn):
    """The window cut from the photo turned about the window's centre (a
    camera held askew turns the whole photo), and the turn's matrix. Where
    the window leaves the photo: half the time mid-grey (a photo turned in
    an editor), half the time the photo's edge repeated, as Go cuts it."""
    grey = random.random() < 0.5
    big = crop(arr, big_window(win), BIG_W, BIG_H, grey=grey)
    im, m = turned(Image.fromarray(np.clip(big, 0, 255).astype(np.uint8)), turn, (IN_W, IN_H))
    return np.asarray(im).astype(np.float32), m


def geometric(x, lab, t, may_turn=True):
    """Small rotation and shear of the window about its centre (plates seen
    at an angle), its box target moved along; then, now and then, the window
    seen at a lower resolution (plates a few pixels high), blurred or JPEG
    compressed. x: IN_H x IN_W x 3 float 0..255. may_turn=False: the window
    was turned as it was cut (turned_crop) or is not to be."""
    im = Image.fromarray(np.clip(x, 0, 255).astype(np.uint8))
    tw = draw_turn() if may_turn else None
    if tw:
        im, m = turned(im, tw, (IN_W, IN_H), tuple(int(v) for v in x.reshape(-1, 3).mean(0)))
        if lab:
            t = turned_quad(t, m)
    r = random.random()
    if r < 0.25:
        f = random.uniform(1.5, 4)
        small = im.resize((max(4, round(IN_W / f)), max(2, round(IN_H / f))), Image.BOX)
        if SMALL_JPEG and random.random() < SMALL_JPEG:
            # A small plate in a JPEG photo: the blocks are the photo's
            # pixels, so they are compressed at the small size, before the
            # window is enlarged (the JPEG below compresses the window).
            small = jpeg(small, random.randint(25, 85))
        im = small.resize((IN_W, IN_H), Image.BILINEAR)
    elif r < 0.4:
        im = im.filter(ImageFilter.GaussianBlur(random.uniform(0.4, 1.3)))
    if random.random() < 0.2:
        im = jpeg(im, random.randint(20, 70))
    return np.asarray(im).astype(np.float32), t


def degrade(x):
    """x (IN_H x IN_W x 3 float 0..255) spoilt in one of the ways customers'
    photos are, harder than the usual augmentation: a camera moving (motion
    blur along a mostly level line), a dark frame with sensor noise, an
    overexposed one (burnt highlights), heavy JPEG, soft focus."""
    kind = random.randrange(5)
    if kind == 0:
        n = random.randint(3, 13)
        ang = random.uniform(-math.pi / 6, math.pi / 6) if random.random() < 0.7 else random.uniform(0, math.pi)
        h, w = x.shape[:2]
        pad = np.pad(x, ((n, n), (n, n), (0, 0)), mode="edge")
        acc = np.zeros_like(x)
        for k in range(n):
            d = k - (n - 1) / 2
            dx, dy = int(round(d * math.cos(ang))), int(round(d * math.sin(ang)))
            acc += pad[n + dy:n + dy + h, n + dx:n + dx + w]
        x = acc / n
    elif kind == 1:
        x = x * random.uniform(0.15, 0.5) + np.random.normal(0, random.uniform(3, 12), x.shape)
    elif kind == 2:
        x = 255 * (np.clip(x, 0, 255) / 255) ** random.uniform(0.4, 0.75) * random.uniform(1.05, 1.4)
    else:
        im = Image.fromarray(np.clip(x, 0, 255).astype(np.uint8))
        if kind == 3:
            im = jpeg(im, random.randint(8, 25))
        else:
            im = im.filter(ImageFilter.GaussianBlur(random.uniform(1.0, 2.5)))
        x = np.asarray(im).astype(np.float32)
    return np.clip(x, 0, 255).astype(np.float32)


def jpeg(im, quality):
    """im after a round trip through JPEG at this quality."""
    buf = io.BytesIO()
    im.save(buf, "JPEG", quality=quality)
    return Image.open(io.BytesIO(buf.getvalue())).convert("RGB")


def swapped(arr, win, t, turn=None):
    """The window with its plate (t, window units) repainted as a plate of
    another design (synth.py), painted on a copy of the photo's part under
    the window, and the new plate's box in window units; with turn, the
    window cut turned (turned_crop)."""
    wx, wy, ww, wh = win
    h, w = arr.shape[:2]
    b = quad_bounds(t)
    g = (wx + b[0] * ww, wy + b[1] * wh, wx + b[2] * ww, wy + b[3] * wh)
    # The new plate may be taller than the old one: take the window's part
    # of the photo and a plate height more above and below (and all a
    # turned window's larger cut shows, so that the part ends only where
    # the photo does).
    sx, sy, sw, sh = big_window(win) if turn else win
    rx0 = max(0, int(math.floor(min(sx, g[0]))) - 2)
    rx1 = min(w, int(math.ceil(max(sx + sw, g[2]))) + 2)
    ph = g[3] - g[1]
    ry0 = max(0, int(math.floor(min(sy, g[1] - ph))) - 2)
    ry1 = min(h, int(math.ceil(max(sy + sh, g[3] + ph))) + 2)
    if rx1 <= rx0 or ry1 <= ry0:
        return cut(arr, win, 1, t, turn)
    part = arr[ry0:ry1, rx0:rx1].copy()
    n = synth.swap(part, (g[0] - rx0, g[1] - ry0, g[2] - rx0, g[3] - ry0), random)
    n = (n[0] + rx0, n[1] + ry0, n[2] + rx0, n[3] + ry0)
    t = box_quad(n, win)
    return cut(part, (wx - rx0, wy - ry0, ww, wh), 1, t, turn)


def cut(arr, win, lab, t, turn=None):
    """The window and its plate's box (t, when lab), turned as it is cut
    when turn is given."""
    if turn is None:
        return crop(arr, win), t
    x, m = turned_crop(arr, win, turn)
    return x, (turned_quad(t, m) if lab else t)


def batches(samps, bs, augment=True):
    for i in range(0, len(samps), bs):
        chunk = samps[i:i + bs]
        xs, ls, ts = [], [], []
        for arr, win, lab, t in chunk:
            turn = draw_turn() if augment and TURN_PHOTO else None
            if augment and lab and SWAP and random.random() < SWAP:
                x, t = swapped(arr, win, t, turn)
            else:
                x, t = cut(arr, win, lab, t, turn)
                if augment and not lab and TEXT and random.random() < TEXT:
                    # Text that is not a plate where a plate would be.
                    x = np.ascontiguousarray(x.astype(np.uint8))
                    synth.scribble(x[IN_H // 4:IN_H - IN_H // 4, IN_W // 16:IN_W - IN_W // 16], [], random, 7, 18)
                    x = x.astype(np.float32)
            if augment:
                x, t = geometric(x, lab, t, may_turn=not TURN_PHOTO)
                if DEGRADE and random.random() < DEGRADE:
                    x = degrade(x)
                x = photometric(x)
                if random.random() < 0.5:
                    x = x[:, ::-1]
                    if lab:
                        t = mirrored_quad(t)
            xs.append(normalise(x).transpose(2, 0, 1))
            ls.append(lab)
            ts.append(t)
        yield (torch.from_numpy(np.ascontiguousarray(np.stack(xs))), torch.tensor(ls, dtype=torch.float32),
               torch.from_numpy(np.stack(ts)))


def loss_fn(out, lab, t):
    lc = F.binary_cross_entropy_with_logits(out[:, 0], lab)
    pos = lab > 0
    if pos.any():
        lr = F.smooth_l1_loss(out[pos, 1:], t[pos], beta=0.02) * 4
    else:
        lr = out.sum() * 0
    return lc, lr


# ---------------------------------------------------------------- evaluation
# The Go decoder: verify the strongest proposals, keep those the verifier
# accepts, refine their boxes, drop overlapping ones, add the margin.


def verify(net, arr, cands):
    if not cands:
        return []
    wins = [window(c[1:]) for c in cands]
    x = np.stack([normalise(crop(arr, w)).transpose(2, 0, 1) for w in wins])
    with torch.no_grad():
        out = net(torch.from_numpy(x)).numpy()
    res = []
    for c, (wx, wy, ww, wh), o in zip(cands, wins, out):
        p = 1 / (1 + math.exp(-o[0]))
        b = quad_bounds(o[1:])
        res.append((p, c[0], (wx + b[0] * ww, wy + b[1] * wh, wx + b[2] * ww, wy + b[3] * wh), c[1:]))
    return res


def decide(res, thr, mh, mw, nms=0.3):
    acc = sorted([r for r in res if r[0] >= thr], key=lambda r: -r[0])
    keep = []
    for r in acc:
        if all(iou(r[2], k[2]) < nms for k in keep):
            keep.append(r)
    dets = []
    for r in keep:
        x0, y0, x1, y1 = r[2]
        w, h = x1 - x0, y1 - y0
        my = mh * h
        mx = mw * w + 0.5 * my
        dets.append((x0 - mx, y0 - my, x1 + mx, y1 + my))
    return dets


def coverage(g, dets, n=20):
    x0, y0, x1, y1 = g
    xs = x0 + (np.arange(n) + 0.5) * (x1 - x0) / n
    ys = y0 + (np.arange(n) + 0.5) * (y1 - y0) / n
    X, Y = np.meshgrid(xs, ys)
    m = np.zeros(X.shape, bool)
    for d in dets:
        m |= (X >= d[0]) & (X <= d[2]) & (Y >= d[1]) & (Y <= d[3])
    return m.mean()


def evaluate(net, items, thrs=(0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8), margins=((0.25, 0.08), (0.35, 0.1), (0.5, 0.15))):
    net.eval()
    allres = [(s, arr.shape, gts, verify(net, arr, cands)) for s, _, arr, gts, cands in items]
    net.train()
    for s in SETS:
        rows = [r for r in allres if r[0] == s]
        for mh, mw in margins:
            line = []
            for thr in thrs:
                found = total = false = 0
                for _, shape, gts, res in rows:
                    dets = decide(res, thr, mh, mw)
                    for g in gts:
                        total += 1
                        found += coverage(g, dets) >= 0.95
                    false += sum(1 for d in dets if not any(overlaps(d, g) for g in gts))
                line.append("%.2f:%.3f/%.2f" % (thr, found / max(1, total), false / max(1, len(rows))))
            print("  val %-18s margin %.2f/%.2f  " % (s, mh, mw) + " ".join(line), flush=True)


def main():
    global SWAP, TEXT, ROLL, SMALL_JPEG, CONTEXT, TURN_PHOTO, DEGRADE
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="../shared/datasets")
    ap.add_argument("--candidates", action="append",
                    help="proposals written by TestMine (repeat for several working sizes)")
    ap.add_argument("--out", default="imageops/plates/verifier.bin")
    ap.add_argument("--parity", default="imageops/plates/testdata/verifier-parity.bin")
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--all", action="store_true", help="train on train+val (no tuning split)")
    ap.add_argument("--missed", action="append",
                    help="plates the labels miss (default train/plates/unlabelled.json; repeat to add files)")
    ap.add_argument("--swap", type=float, default=SWAP, help="chance a plate window's plate is repainted (synth.py)")
    ap.add_argument("--text", type=float, default=TEXT, help="chance a background window gets a caption (synth.py)")
    ap.add_argument("--roll", type=float, default=ROLL, help="chance a window is turned 8-25 degrees instead of at most 8")
    ap.add_argument("--small-jpeg", type=float, default=SMALL_JPEG,
                    help="chance a window seen at a lower resolution is JPEG compressed at that resolution")
    ap.add_argument("--plateless", help="car photos with no plate in sight, as more background (train/plates/plateless.json)")
    ap.add_argument("--plateless-times", type=int, default=1, help="how many times an epoch each --plateless photo is used")
    ap.add_argument("--layout", choices=sorted(LAYOUTS), default="narrow", help="the network's widths (LAYOUTS)")
    ap.add_argument("--drop-copies", help="leave out training photos with a copy in another split (imageops/plates/testdata/copies.json)")
    ap.add_argument("--context", type=float, default=CONTEXT,
                    help="the window's size as a multiple of the usual (a context verifier: where on the car the proposal sits)")
    ap.add_argument("--degrade", type=float, default=DEGRADE,
                    help="chance a window is spoilt as a poor camera or upload would: motion blur, dark and noisy, overexposed, heavy JPEG, soft")
    ap.add_argument("--turn-photo", action="store_true",
                    help="cut turned windows from the photo turned about their centre (grey or its edge repeated where it ends), not turn them once cut")
    ap.add_argument("--extra", help="the folder ../shared/datasets/extra/build.py wrote: train on its sets too")
    args = ap.parse_args()
    use_extra(args.extra)
    SWAP, TEXT, ROLL, SMALL_JPEG, CONTEXT = args.swap, args.text, args.roll, args.small_jpeg, args.context
    TURN_PHOTO = args.turn_photo
    DEGRADE = args.degrade

    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    t0 = time.time()
    items = load(args.data, args.candidates or ["/tmp/plates-candidates.jsonl"], args.missed or [UNLABELLED], args.plateless,
                 args.plateless_times, copies(args.drop_copies, ("train", "val") if args.all else ("train",)))
    train = items["train"] + (items["val"] if args.all else [])
    print("train %d photos, val %d (loaded in %.0fs)" % (len(train), len(items["val"]), time.time() - t0), flush=True)
    net = Verifier(args.layout)
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    # An epoch's window count varies a little (jittered boxes that land
    # ambiguously are skipped), so the schedule is sized from the first and
    # holds its last rate if an epoch runs longer.
    per_epoch = math.ceil(len(samples(train)) / args.batch)
    total = args.epochs * per_epoch + 10
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, total_steps=total, pct_start=0.1)
    for ep in range(1, args.epochs + 1):
        samps = samples(train)
        npos = sum(1 for s in samps if s[2])
        tc = tr = nb = 0
        for x, lab, t in batches(samps, args.batch):
            lc, lr_ = loss_fn(net(x), lab, t)
            opt.zero_grad()
            (lc + lr_).backward()
            opt.step()
            if sched.last_epoch < total - 1:
                sched.step()
            tc += lc.item()
            tr += lr_.item()
            nb += 1
        print("epoch %d: %d samples (%d plates) loss cls %.4f box %.4f (%.0fs)" % (
            ep, len(samps), npos, tc / nb, tr / nb, time.time() - t0), flush=True)
        net.eval()
        export(net, args.out)
        net.train()
        if ep % 10 == 0 or ep == args.epochs:
            evaluate(net, items["val"])
    net.eval()
    export(net, args.out)
    os.makedirs(os.path.dirname(args.parity), exist_ok=True)
    write_parity(net, args.parity)
    torch.save(net.state_dict(), "/tmp/plates-verifier.pt")
    print("done in %.0fs" % (time.time() - t0), flush=True)


if __name__ == "__main__":
    main()
