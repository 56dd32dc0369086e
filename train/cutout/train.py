#!/usr/bin/python3
"""Train the car cut-out network and export it for imageops/cutout.

    python3 train/cutout/train.py --data ../shared/datasets/cars-seg --out imageops/cutout/weights.bin

The network is a small U-Net of depthwise-separable convolutions that maps an RGB
image (any size divisible by 32) to car logits at half its resolution. The Go
package imageops/cutout runs the same network by hand; keep the two in step
(architecture constants, the input normalisation, nearest-neighbour upsampling,
the order of tensors in the exported file).

A cars-seg image is held out (never trained on nor used for tuning) when
fnv32a(base file name) % 5 == 0. Of the rest, fnv32a % 7 == 3 forms a
validation split used only to print progress; --final trains on every
non-held-out image.
"""

import argparse
import json
import math
import os
import random
import struct
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

# Channel widths of the five encoder levels (1/2 .. 1/32 of the input).
WIDTHS = [16, 32, 64, 128, 256]
MEAN, STD = 0.5, 0.25  # input = (rgb/255 - MEAN) / STD

# Training input sizes (h, w), one drawn per batch: 4:3 mostly, other aspects too.
SIZES = {
    "large": [(192, 256), (224, 288), (256, 320), (256, 256), (192, 320), (288, 224)],
    "small": [(192, 256), (160, 224), (224, 288), (192, 192), (160, 256), (256, 192)],
}


def fnv32a(s):
    h = 0x811C9DC5
    for b in s.encode():
        h ^= b
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def held_out(name):
    return fnv32a(name) % 5 == 0


class DS(nn.Module):
    """Depthwise 3x3 (+BN+ReLU) then pointwise 1x1 (+BN+ReLU)."""

    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.dw = nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False)
        self.bn1 = nn.BatchNorm2d(cin)
        self.pw = nn.Conv2d(cin, cout, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)

    def forward(self, x):
        x = F.relu(self.bn1(self.dw(x)))
        return F.relu(self.bn2(self.pw(x)))


class Stem(nn.Module):
    """Dense 3x3 stride-2 convolution from RGB (+BN+ReLU)."""

    def __init__(self, cout):
        super().__init__()
        self.conv = nn.Conv2d(3, cout, 3, 2, 1, bias=False)
        self.bn = nn.BatchNorm2d(cout)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class Net(nn.Module):
    def __init__(self, w=WIDTHS):
        super().__init__()
        self.widths = list(w)
        self.stem = Stem(w[0])
        self.e1 = DS(w[0], w[0])
        self.e2 = nn.Sequential(DS(w[0], w[1], 2), DS(w[1], w[1]))
        self.e3 = nn.Sequential(DS(w[1], w[2], 2), DS(w[2], w[2]))
        self.e4 = nn.Sequential(DS(w[2], w[3], 2), DS(w[3], w[3]))
        self.e5 = nn.Sequential(DS(w[3], w[4], 2), DS(w[4], w[4]), DS(w[4], w[4]))
        self.d4 = DS(w[4] + w[3], w[3])
        self.d3 = DS(w[3] + w[2], w[2])
        self.d2 = DS(w[2] + w[1], w[1])
        self.d1 = DS(w[1] + w[0], w[0])
        self.head = nn.Conv2d(w[0], 1, 1)

    def forward(self, x):
        s1 = self.e1(self.stem(x))
        s2 = self.e2(s1)
        s3 = self.e3(s2)
        s4 = self.e4(s3)
        s5 = self.e5(s4)
        up = lambda t: F.interpolate(t, scale_factor=2, mode="nearest")
        y = self.d4(torch.cat([up(s5), s4], 1))
        y = self.d3(torch.cat([up(y), s3], 1))
        y = self.d2(torch.cat([up(y), s2], 1))
        y = self.d1(torch.cat([up(y), s1], 1))
        return self.head(y)


# ---------------------------------------------------------------- data

def load(data):
    labels = json.load(open(os.path.join(data, "labels.json")))
    out = []
    for e in labels:
        name = os.path.basename(e["file"])
        img = np.asarray(Image.open(os.path.join(data, e["file"])).convert("RGB"), dtype=np.uint8)
        m = np.asarray(Image.open(os.path.join(data, e["mask"])).convert("L"), dtype=np.uint8)
        out.append((name, torch.from_numpy(img.copy()).permute(2, 0, 1), torch.from_numpy((m >= 128).astype(np.uint8))[None]))
    return out


def studio_background(h, w):
    """A plain or graded backdrop with a floor, like a studio or a showroom wall."""
    c1 = torch.rand(3, 1, 1)
    if random.random() < 0.5:
        g = c1.mean() * torch.ones(3, 1, 1)
        c1 = g + (c1 - g) * 0.3  # mostly grey/white studios
    c2 = (c1 + (torch.rand(3, 1, 1) - 0.5) * 0.4).clamp(0, 1)
    horizon = random.uniform(0.4, 0.8)
    ys = torch.linspace(0, 1, h).view(1, h, 1)
    t = torch.sigmoid((ys - horizon) * random.uniform(5, 60))
    bg = c1 * (1 - t) + c2 * t
    bg = bg.expand(3, h, w) + torch.randn(3, h, w) * random.uniform(0, 0.03)
    return bg.clamp(0, 1)


MAX_ZOOM = 2.0  # largest zoom of augment(); >1 gives close-ups (--max-zoom)


PASTE, STUDIO = 0.3, 0.2  # shares of copy-paste and studio-backdrop samples


def augment(img, mask, oh, ow, others=()):
    """Random affine (scale, aspect, shift, small rotation, flip), colour and background changes.

    img is uint8 3xHxW, mask uint8 1xHxW; returns float image in 0..1 (3xohxow) and float mask.
    others: (img, mask) pairs of other training photos, for copy-paste.
    """
    x = img.float()[None] / 255
    m = mask.float()[None]
    r = random.random()
    if r < PASTE and others:
        # Copy-paste: the car (through its mask, optionally mirrored) onto another
        # training photo, whose own cars stay labelled where they still show.
        oimg, omask = random.choice(others)
        # Moved and rescaled, so it does not sit exactly on the other photo's car.
        z = random.uniform(0.7, 1.15)
        f = -1 if random.random() < 0.5 else 1
        th = torch.tensor([[f / z, 0, random.uniform(-0.5, 0.5)],
                           [0, 1 / z, random.uniform(-0.15, 0.1)]], dtype=torch.float32)[None]
        g = F.affine_grid(th, x.shape, align_corners=False)
        x = F.grid_sample(x, g, mode="bilinear", padding_mode="zeros", align_corners=False)
        m = F.grid_sample(m, g, mode="bilinear", padding_mode="zeros", align_corners=False)
        bg = oimg.float()[None] / 255
        if bg.shape[2:] != x.shape[2:]:
            bg = F.interpolate(bg, size=x.shape[2:], mode="bilinear", align_corners=False)
            omask = F.interpolate(omask.float()[None], size=x.shape[2:], mode="nearest")[0]
        soft = F.avg_pool2d(m, 3, 1, 1)
        x = x * soft + bg * (1 - soft)
        m = (m >= 0.5).float()
        m = torch.maximum(m, omask.float()[None] * (1 - m))
    elif r < PASTE + STUDIO:
        # Paste the car onto a synthetic backdrop (studio, showroom).
        bg = studio_background(x.shape[2], x.shape[3])[None]
        soft = F.avg_pool2d(m, 3, 1, 1)
        x = x * soft + bg * (1 - soft)
    # Output aspect ow/oh vs source aspect; sample a zoom and aspect stretch.
    zoom = math.exp(random.uniform(math.log(0.6), math.log(MAX_ZOOM)))  # >1: close-ups
    aspect = math.exp(random.uniform(-0.35, 0.35))
    sx = 1 / zoom * math.sqrt(aspect)
    sy = 1 / zoom / math.sqrt(aspect)
    rot = math.radians(random.uniform(-6, 6))
    tx = random.uniform(-0.35, 0.35)
    ty = random.uniform(-0.25, 0.25)
    flip = -1 if random.random() < 0.5 else 1
    theta = torch.tensor([[sx * math.cos(rot) * flip, -sy * math.sin(rot), tx],
                          [sx * math.sin(rot) * flip, sy * math.cos(rot), ty]], dtype=torch.float32)[None]
    grid = F.affine_grid(theta, (1, 3, oh, ow), align_corners=False)
    mode = "reflection" if random.random() < 0.5 else "border"
    x = F.grid_sample(x, grid, mode="bilinear", padding_mode=mode, align_corners=False)[0]
    m = F.grid_sample(m, grid, mode="bilinear", padding_mode=mode, align_corners=False)[0]
    # Colour: channel shuffle (car colours), brightness, contrast, saturation, gamma, noise.
    if random.random() < 0.5:
        x = x[torch.randperm(3)]
    g = x.mean(0, keepdim=True)
    if random.random() < 0.15:
        x = g.expand(3, -1, -1).clone()
    else:
        x = g + (x - g) * random.uniform(0.5, 1.5)
    x = (x - x.mean()) * random.uniform(0.7, 1.3) + x.mean() * random.uniform(0.7, 1.3)
    x = x + (torch.rand(3, 1, 1) - 0.5) * 0.1
    x = x.clamp(0, 1) ** math.exp(random.uniform(-0.3, 0.3))
    if random.random() < 0.2:
        x = F.avg_pool2d(x[None], 3, 1, 1, count_include_pad=False)[0]
    x = x + torch.randn_like(x) * random.uniform(0, 0.03)
    return x.clamp(0, 1), m


def normalise(x):
    return (x - MEAN) / STD


def train_mode(net, freeze_bn):
    """Put net in training mode; with freeze_bn its BatchNorm layers keep their statistics."""
    net.train()
    if freeze_bn:
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.eval()


def iou(logits, m):
    p = (logits > 0).float()
    inter = (p * m).sum((1, 2, 3))
    union = ((p + m) > 0).float().sum((1, 2, 3))
    return (inter / union.clamp(min=1)).tolist()


def boundary_weight(m, k=5, gain=2.0):
    """1 everywhere, 1 + gain within k//2 pixels of the target's outline."""
    hi = F.max_pool2d(m, k, 1, k // 2)
    lo = -F.max_pool2d(-m, k, 1, k // 2)
    return 1 + gain * (hi - lo).clamp(0, 1)


def evaluate(net, items, size=(256, 320)):
    """IoU at the input's own resolution with the working size the Go code uses for 4:3."""
    net.eval()
    out = []
    with torch.no_grad():
        for _, img, mask in items:
            x = F.interpolate(img.float()[None] / 255, size=size, mode="area")
            lo = net(normalise(x))
            up = F.interpolate(lo, size=img.shape[1:], mode="bilinear", align_corners=False)
            out += iou(up, mask.float()[None])
    net.train()
    return sum(out) / max(len(out), 1)


# ---------------------------------------------------------------- export

def fold(conv, bn):
    """Fold BatchNorm into the preceding conv: returns (weight, bias)."""
    w = conv.weight.detach()
    scale = bn.weight.detach() / torch.sqrt(bn.running_var + bn.eps)
    b = bn.bias.detach() - bn.running_mean * scale
    return w * scale.view(-1, 1, 1, 1), b


def tensors(net):
    """The network's tensors in the order the Go loader reads them."""
    out = []
    out += fold(net.stem.conv, net.stem.bn)
    blocks = [net.e1, *net.e2, *net.e3, *net.e4, *net.e5, net.d4, net.d3, net.d2, net.d1]
    for b in blocks:
        out += fold(b.dw, b.bn1)
        out += fold(b.pw, b.bn2)
    out += [net.head.weight.detach(), net.head.bias.detach()]
    return out


def export(net, path):
    ts = tensors(net)
    with open(path, "wb") as f:
        f.write(b"CUT1")
        f.write(struct.pack("<I", len(net.widths)))
        f.write(struct.pack("<%dI" % len(net.widths), *net.widths))
        f.write(struct.pack("<I", len(ts)))
        for t in ts:
            t = t.contiguous().float()
            f.write(struct.pack("<I", t.dim()))
            f.write(struct.pack("<%dI" % t.dim(), *t.shape))
            f.write(t.numpy().astype("<f4").tobytes())


def load_exported(net, path):
    """Load an exported (BatchNorm-folded) file into net, BatchNorm set to identity."""
    raw = open(path, "rb").read()
    assert raw[:4] == b"CUT1", "bad magic"
    off = 4
    (n,) = struct.unpack_from("<I", raw, off)
    off += 4 + 4 * n
    (count,) = struct.unpack_from("<I", raw, off)
    off += 4
    loaded = []
    for _ in range(count):
        (rank,) = struct.unpack_from("<I", raw, off)
        off += 4
        shape = struct.unpack_from("<%dI" % rank, raw, off)
        off += 4 * rank
        size = int(np.prod(shape))
        loaded.append(torch.from_numpy(np.frombuffer(raw, "<f4", size, off).copy()).view(*shape))
        off += 4 * size
    pairs = [(net.stem.conv, net.stem.bn)]
    for b in [net.e1, *net.e2, *net.e3, *net.e4, *net.e5, net.d4, net.d3, net.d2, net.d1]:
        pairs += [(b.dw, b.bn1), (b.pw, b.bn2)]
    with torch.no_grad():
        for k, (conv, bn) in enumerate(pairs):
            conv.weight.copy_(loaded[2 * k])
            bn.weight.fill_(1)
            bn.bias.copy_(loaded[2 * k + 1])
            bn.running_mean.zero_()
            bn.running_var.fill_(1 - bn.eps)
        net.head.weight.copy_(loaded[-2])
        net.head.bias.copy_(loaded[-1])


def synthetic_input(h, w):
    """A deterministic test pattern, computed the same way by the Go test (net_test.go)."""
    ys = torch.arange(h, dtype=torch.float64).view(h, 1)
    xs = torch.arange(w, dtype=torch.float64).view(1, w)
    chans = []
    for c in range(3):
        v = 0.5 + 0.4 * torch.sin(xs * (0.07 + 0.02 * c) + ys * 0.05 * (c + 1)) * torch.cos(ys * 0.03 - c)
        inside = ((xs - w * 0.5) ** 2 / (w * 0.3) ** 2 + (ys - h * 0.55) ** 2 / (h * 0.2) ** 2) < 1
        v = torch.where(inside, v * 0.3 + 0.1 * c, v)
        chans.append(v)
    return torch.stack(chans)[None].float()


def export_golden(net, path, h=64, w=96):
    """Logits of the exported network on synthetic_input, for the Go equivalence test."""
    net.eval()
    with torch.no_grad():
        y = net(normalise(synthetic_input(h, w)))[0, 0]
    with open(path, "wb") as f:
        f.write(struct.pack("<II", h, w))
        f.write(y.numpy().astype("<f4").tobytes())


# ---------------------------------------------------------------- main

def save(net, args):
    """Export the weights and the golden output that goes with them (and the checkpoint)."""
    export(net, args.out)
    os.makedirs(os.path.dirname(args.golden) or ".", exist_ok=True)
    export_golden(net, args.golden)
    net.train()
    if args.ckpt:
        torch.save(net.state_dict(), args.ckpt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="../shared/datasets/cars-seg")
    ap.add_argument("--out", default="imageops/cutout/weights.bin")
    ap.add_argument("--golden", default="imageops/cutout/testdata/golden.bin")
    ap.add_argument("--epochs", type=int, default=120)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--final", action="store_true", help="train on all non-held-out images")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sizes", choices=sorted(SIZES), default="small")
    ap.add_argument("--max-zoom", type=float, default=MAX_ZOOM)
    ap.add_argument("--widths", default=",".join(map(str, WIDTHS)),
                    help="channels of the five encoder levels, comma-separated")
    ap.add_argument("--stop-after", type=int, default=0,
                    help="stop after this many epochs of the --epochs schedule (0: all)")
    ap.add_argument("--paste", type=float, default=PASTE, help="share of copy-paste samples")
    ap.add_argument("--studio", type=float, default=STUDIO, help="share of studio-backdrop samples")
    ap.add_argument("--edge-weight", type=float, default=2.0,
                    help="extra BCE weight within 2 output pixels of the outline")
    ap.add_argument("--eval-every", type=int, default=10, help="evaluate and export every N epochs")
    ap.add_argument("--snap-dir", default="", help="also keep each export here as epochN.bin")
    ap.add_argument("--ckpt", default="", help="also save the PyTorch state here at each export")
    ap.add_argument("--init", default="", help="start from this PyTorch state (from --ckpt)")
    ap.add_argument("--init-exported", default="",
                    help="start from an exported weights file; BatchNorm stays frozen (identity)")
    ap.add_argument("--golden-only", action="store_true",
                    help="only write --golden for the exported --out (no training)")
    args = ap.parse_args()

    globals()["MAX_ZOOM"] = args.max_zoom
    globals()["PASTE"], globals()["STUDIO"] = args.paste, args.studio
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    random.seed(args.seed)

    widths = [int(w) for w in args.widths.split(",")]
    if args.golden_only or args.init_exported:
        # The widths of an exported file are in its header.
        raw = open(args.out if args.golden_only else args.init_exported, "rb").read(32)
        (n,) = struct.unpack_from("<I", raw, 4)
        widths = list(struct.unpack_from("<%dI" % n, raw, 8))
    if args.golden_only:
        net = Net(widths)
        load_exported(net, args.out)
        export_golden(net, args.golden)
        print(f"wrote {args.golden} for {args.out}")
        return

    items = load(args.data)
    held = [it for it in items if held_out(it[0])]
    rest = [it for it in items if not held_out(it[0])]
    val = [it for it in rest if fnv32a(it[0]) % 7 == 3]
    train = rest if args.final else [it for it in rest if fnv32a(it[0]) % 7 != 3]
    print(f"train {len(train)} val {len(val)} held-out {len(held)} (held-out not used)", flush=True)

    pool = [(img, m) for _, img, m in train]
    fit = train[:: max(1, len(train) // 20)]  # a fixed sample to watch training IoU
    net = Net(widths)
    if args.init:
        net.load_state_dict(torch.load(args.init))
    freeze_bn = bool(args.init_exported)
    if freeze_bn:
        load_exported(net, args.init_exported)
    train_mode(net, freeze_bn)
    print("parameters", sum(p.numel() for p in net.parameters()), flush=True)
    opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
    steps = args.epochs * math.ceil(len(train) / args.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps, pct_start=0.1)
    start = time.time()
    for epoch in range(args.epochs):
        random.shuffle(train)
        total = 0.0
        for i in range(0, len(train), args.batch):
            batch = train[i:i + args.batch]
            # One working size a batch: 4:3 mostly, sometimes other aspects.
            oh, ow = random.choice(SIZES[args.sizes])
            xs, ms = zip(*[augment(img, m, oh, ow, pool) for _, img, m in batch])
            x = normalise(torch.stack(xs))
            m = F.avg_pool2d(torch.stack(ms), 2)  # targets at the output's half resolution
            train_mode(net, freeze_bn)
            logits = net(x)
            # BCE weighted up near the outline (edges), plus soft Dice (overlap, IoU-like).
            bw = boundary_weight(m, gain=args.edge_weight)
            bce = (F.binary_cross_entropy_with_logits(logits, m, reduction="none") * bw).sum() / bw.sum()
            p = torch.sigmoid(logits)
            dice = 1 - (2 * (p * m).sum((1, 2, 3)) + 1) / ((p + m).sum((1, 2, 3)) + 1)
            loss = bce + dice.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(batch)
        msg = f"epoch {epoch + 1} loss {total / len(train):.4f} {time.time() - start:.0f}s"
        if (epoch + 1) % args.eval_every == 0 or epoch + 1 == args.epochs:
            msg += f" val IoU {evaluate(net, val):.4f} train IoU {evaluate(net, fit):.4f}"
            save(net, args)
            if args.snap_dir:
                # Numbered copies: any one can be shipped (--stop-after N recreates it).
                os.makedirs(args.snap_dir, exist_ok=True)
                export(net, os.path.join(args.snap_dir, f"epoch{epoch + 1}.bin"))
        print(msg, flush=True)
        if epoch + 1 == args.stop_after:
            break
    save(net, args)
    print(f"done in {time.time() - start:.0f}s; wrote {args.out} and {args.golden}", flush=True)


if __name__ == "__main__":
    main()
