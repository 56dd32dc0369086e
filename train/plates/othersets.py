"""Writes the validation photos of both plate sets with every labelled
plate repainted as a rendered plate of another design (synth.swap: other
grounds, inks, bands, one or two rows, text lengths), as two labelled sets
`carphoto-lab bench plates --split val` reads: a stress test of plate designs the
sets lack. Rendered plates are flat and fill the labelled box, so a plate
that was slanted becomes a level one of its box's size. Only validation
photos are read; nothing is written into the repository.

    /usr/bin/python3 train/plates/othersets.py --data ../shared/datasets --out /tmp/othersets
    carphoto-lab bench plates --split val -n 0 /tmp/othersets/plates-web-cc0
"""

import argparse
import json
import os
import random
import sys

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import synth  # noqa: E402
from train import SETS, split_of  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="../shared/datasets")
    ap.add_argument("--out", default="/tmp/othersets")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    for s in SETS:
        out = []
        os.makedirs(os.path.join(args.out, s, "images"), exist_ok=True)
        for e in json.load(open(os.path.join(args.data, s, "labels.json"))):
            if split_of(os.path.basename(e["file"])) != "val":
                continue
            arr = np.array(Image.open(os.path.join(args.data, s, e["file"])).convert("RGB"))
            plates = []
            for p in e["plates"]:
                b = synth.swap(arr, (p["x"], p["y"], p["x"] + p["w"], p["y"] + p["h"]), rng)
                plates.append({"x": b[0], "y": b[1], "w": b[2] - b[0], "h": b[3] - b[1]})
            Image.fromarray(arr).save(os.path.join(args.out, s, e["file"]), quality=92)
            out.append({"file": e["file"], "width": arr.shape[1], "height": arr.shape[0], "plates": plates})
        json.dump(out, open(os.path.join(args.out, s, "labels.json"), "w"))
        print("%s: %d photos" % (s, len(out)))


if __name__ == "__main__":
    main()
