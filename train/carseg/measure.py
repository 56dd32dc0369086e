"""Car+bus region IoU of the float interpreter against cars-seg's masks on
its 159 non-held-out photos (held out: fnv32a(base name) % 5 == 0, never
read here).

    /usr/bin/python3 train/carseg/measure.py --tflite ../shared/models/deeplabv3_mnv2_pascal_quant.tflite \
        [--side 513] [--data ../shared/datasets/cars-seg]

The photo is stretched to side² (bilinear), the class map (argmax of the
logits upsampled to side², aligned corners, as the graph does) is scaled to
the photo's size by nearest neighbour, and the region is bus (6) or car (7);
the mask is grey ≥ 128.
"""

import argparse
import json
import os

import cv2
import numpy as np
import torch

import interp

BUS, CAR = 6, 7


def fnv32a(s):
    h = 0x811C9DC5
    for b in s.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def classes(g, bgr, side):
    """The class map at side² of a BGR photo."""
    rgb = cv2.cvtColor(cv2.resize(bgr, (side, side), interpolation=cv2.INTER_LINEAR), cv2.COLOR_BGR2RGB)
    with torch.no_grad():
        _, up = g.logits(g.prepare(rgb))
    return up[0].argmax(0).numpy()


def iou(a, b):
    u = np.logical_or(a, b).sum()
    return 1.0 if u == 0 else np.logical_and(a, b).sum() / u


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tflite", required=True)
    ap.add_argument("--side", type=int, default=513)
    ap.add_argument("--data", default="../shared/datasets/cars-seg")
    ap.add_argument("--list", help="write name and IoU per photo here")
    args = ap.parse_args()
    torch.set_num_threads(1)
    g = interp.load(args.tflite)
    labels = json.load(open(os.path.join(args.data, "labels.json")))
    scores = []
    for e in labels:
        name = os.path.basename(e["file"])
        if fnv32a(name) % 5 == 0:
            continue
        bgr = cv2.imread(os.path.join(args.data, e["file"]))
        mask = cv2.imread(os.path.join(args.data, e["mask"]), cv2.IMREAD_GRAYSCALE) >= 128
        c = classes(g, bgr, args.side)
        c = cv2.resize(c.astype(np.uint8), (bgr.shape[1], bgr.shape[0]), interpolation=cv2.INTER_NEAREST)
        scores.append((name, iou((c == CAR) | (c == BUS), mask)))
    v = np.array([s for _, s in scores])
    print("side %d: %d photos, car+bus IoU mean %.4f median %.4f, min %.3f" %
          (args.side, len(v), v.mean(), np.median(v), v.min()))
    if args.list:
        with open(args.list, "w") as f:
            for n, s in scores:
                f.write("%s %.4f\n" % (n, s))


if __name__ == "__main__":
    main()
