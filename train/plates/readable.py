"""Draws a contact sheet of held-out plates the detector leaves readable:
crops of the photo with what is hidden (red, shaded), the plate's labelled
box (blue) and its characters (green, imageops/plates/testdata/heldout-chars.json).

    carphoto-lab bench plates -n 0 ../shared/datasets/plates-web-cc0 ../shared/datasets/plates-dashcam-ro \\
        ~/carphoto-data/plates-openimages ~/carphoto-data/plates-openlpr > /tmp/bench.txt
    /usr/bin/python3 train/plates/readable.py --bench /tmp/bench.txt --carphoto /tmp/carphoto \\
        --data ../shared/datasets --extra ~/carphoto-data --out docs/plates-readable-sheet.jpg

The plates are taken from the benchmark's "left readable" lists, spread
evenly over each set's list, six a set; the hidden regions are those
`carphoto plates --json` gives for the photo. Only the web (CC0) and
dash-cam (MIT, its notice in NOTICE) sets by default: the Open Images
photos ask for each photographer's attribution.
"""

import argparse
import json
import os
import re
import subprocess
import sys

import cv2
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train import EXTRA_SETS  # noqa: E402

CELL = (360, 200)  # w, h of a crop on the sheet


def readable_lists(bench):
    """{set: [(file name, x, y, w, h, % hidden)]} from the benchmark's output."""
    out, current = {}, None
    for line in open(bench):
        m = re.match(r"(\S+), split heldout: ", line)
        if m:
            current = m.group(1)
        if line.startswith("left readable") and current:
            out[current] = [(f, float(x), float(y), float(w), float(h), int(p))
                            for f, w, h, x, y, p in re.findall(r"(\S+) \((\d+)x(\d+) at (\d+),(\d+): (\d+)%\)", line)]
    return out


def cell(img, hides, plate, chars, caption):
    x, y, w, h = plate
    m = max(w * 0.6, h * 2.5)
    x0, y0 = int(max(0, x - m)), int(max(0, y - m * CELL[1] / CELL[0]))
    x1, y1 = int(min(img.shape[1], x + w + m)), int(min(img.shape[0], y + h + m * CELL[1] / CELL[0]))
    s = min(CELL[0] / (x1 - x0), (CELL[1] - 18) / (y1 - y0))
    crop = cv2.resize(img[y0:y1, x0:x1], None, fx=s, fy=s, interpolation=cv2.INTER_CUBIC)

    def pts(poly):
        return np.round((np.array(poly, np.float64) - [x0, y0]) * s).astype(np.int32)

    shade = crop.copy()
    for q in hides:
        cv2.fillPoly(shade, [pts(q)], (0, 0, 255))
    crop = cv2.addWeighted(crop, 0.65, shade, 0.35, 0)
    for q in hides:
        cv2.polylines(crop, [pts(q)], True, (0, 0, 255), 1, cv2.LINE_AA)
    cv2.rectangle(crop, tuple(pts([[x, y]])[0]), tuple(pts([[x + w, y + h]])[0]), (255, 0, 0), 1)
    for c in chars:
        cv2.polylines(crop, [pts(c)], True, (0, 200, 0), 1, cv2.LINE_AA)
    out = np.full((CELL[1], CELL[0], 3), 255, np.uint8)
    out[:crop.shape[0], :crop.shape[1]] = crop
    cv2.putText(out, caption, (3, CELL[1] - 5), cv2.FONT_HERSHEY_SIMPLEX, 0.4, (0, 0, 0), 1, cv2.LINE_AA)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--carphoto", default="carphoto")
    ap.add_argument("--chars", default="imageops/plates/testdata/heldout-chars.json")
    ap.add_argument("--data", default="../shared/datasets")
    ap.add_argument("--extra", default=os.path.expanduser("~/carphoto-data"))
    ap.add_argument("--sets", default="plates-web-cc0,plates-dashcam-ro")
    ap.add_argument("--per-set", type=int, default=6)
    ap.add_argument("--out", default="docs/plates-readable-sheet.jpg")
    args = ap.parse_args()
    chars = {(e["set"], os.path.basename(e["file"])): e for e in json.load(open(args.chars))}
    cells = []
    lists = readable_lists(args.bench)
    for s in args.sets.split(","):
        plates = lists[s]
        pick = [plates[i * len(plates) // args.per_set] for i in range(min(args.per_set, len(plates)))]
        for f, x, y, w, h, pc in pick:
            path = os.path.join(args.extra if s in EXTRA_SETS else args.data, s, "images", f)
            found = json.loads(subprocess.run([args.carphoto, "plates", "--json", path], check=True,
                                              capture_output=True, text=True).stdout)
            entry = chars[(s, f)]
            pl = next(p for p in entry["plates"] if [round(v) for v in p["box"]] == [x, y, w, h])
            img = cv2.imread(path, cv2.IMREAD_COLOR)
            cells.append(cell(img, [p["hide"] for p in found["plates"]], pl["box"], pl["chars"],
                              "%s  %d%% hidden%s" % (f[:-4], pc, ", stand-in" if pl["stand_in"] else "")))
    while len(cells) % 3:
        cells.append(np.full_like(cells[0], 255))
    rows = [np.hstack([np.pad(c, ((2, 2), (2, 2), (0, 0)), constant_values=128) for c in cells[i:i + 3]])
            for i in range(0, len(cells), 3)]
    cv2.imwrite(args.out, np.vstack(rows), [cv2.IMWRITE_JPEG_QUALITY, 85])


if __name__ == "__main__":
    main()
