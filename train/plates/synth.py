"""Plate swap: a labelled plate repainted as a plate of another country.

The two plate sets hold mostly US, Brazilian, Indian and Romanian/EU plates.
To teach both networks plates of other formats (one or two rows, white,
yellow, black, coloured; with or without a band and a border; other
alphabets' widths of characters) without fitting those sets' looks, a
training sample now and then has a labelled plate painted over with a
rendered one of random design, lit like the plate it replaces: same mean
and spread of brightness, the photo's blur and noise come on top from the
usual augmentation. Sometimes the new plate is taller than the old one (a
two-row plate where a one-row one was), and its box becomes the label.

Fonts: Debian's fonts-dejavu-core (DejaVu Sans, Sans Mono, Serif; bold and
condensed cuts). Nothing is downloaded.
"""

import math
import os
import random

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

FONT_DIR = "/usr/share/fonts/truetype/dejavu"
FONT_FILES = ["DejaVuSansCondensed-Bold.ttf", "DejaVuSans-Bold.ttf", "DejaVuSansMono-Bold.ttf",
              "DejaVuSansMono.ttf", "DejaVuSerifCondensed-Bold.ttf", "DejaVuSansCondensed.ttf"]
_fonts = {}

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
DIGITS = "0123456789"
# Plate grounds and their inks (RGB): white, yellow, black, and coloured
# plates of several countries (diplomatic, taxi, temporary, old formats).
GROUNDS = [((238, 238, 232), (20, 20, 24), 6), ((245, 205, 30), (15, 15, 15), 3),
           ((22, 22, 24), (235, 235, 235), 1.5), ((30, 60, 150), (240, 240, 240), 1),
           ((200, 30, 30), (245, 245, 245), 0.6), ((30, 120, 60), (245, 245, 245), 0.6),
           ((235, 235, 235), (180, 20, 20), 0.8), ((235, 235, 235), (20, 50, 140), 0.8),
           ((250, 140, 30), (10, 10, 10), 0.4)]


def font(name, size):
    key = (name, size)
    if key not in _fonts:
        _fonts[key] = ImageFont.truetype(os.path.join(FONT_DIR, name), size)
    return _fonts[key]


def text(rng, n):
    """A plate number of n characters in one of several patterns."""
    r = rng.random()
    if r < 0.3:
        s = "".join(rng.choice(LETTERS + DIGITS) for _ in range(n))
    elif r < 0.6:
        k = rng.randint(1, max(1, n - 2))
        s = "".join(rng.choice(LETTERS) for _ in range(k)) + "".join(rng.choice(DIGITS) for _ in range(n - k))
    elif r < 0.8:
        s = "".join(rng.choice(DIGITS) for _ in range(n))
    else:
        k = rng.randint(1, 3)
        s = "".join(rng.choice(DIGITS) for _ in range(k)) + "".join(rng.choice(LETTERS) for _ in range(n - k))
    if n >= 5 and rng.random() < 0.4:
        i = rng.randint(2, n - 2)
        s = s[:i] + rng.choice([" ", "-", " ", "·"]) + s[i:]
    return s


def render(rng, w, h):
    """A plate of random design drawn at h = 120 px with the box's aspect
    (w/h), as an RGB uint8 array."""
    aspect = max(0.8, min(7.0, w / max(h, 1e-3)))
    H = 120
    W = int(round(H * aspect))
    ground, ink, _ = rng.choices(GROUNDS, weights=[g[2] for g in GROUNDS])[0]
    jit = lambda c: tuple(int(min(255, max(0, v + rng.uniform(-18, 18)))) for v in c)  # noqa: E731
    ground, ink = jit(ground), jit(ink)
    im = Image.new("RGB", (W, H), ground)
    d = ImageDraw.Draw(im)
    left = 0
    if aspect > 3 and rng.random() < 0.35:  # a band at the left (EU-like)
        band = int(W * rng.uniform(0.07, 0.11))
        d.rectangle([0, 0, band, H], fill=jit((25, 60, 160)) if rng.random() < 0.8 else ink)
        f = font(rng.choice(FONT_FILES), max(8, H // 4))
        d.text((band / 2, H * 0.72), rng.choice(LETTERS) * rng.randint(1, 2), font=f, fill=(240, 240, 240),
               anchor="mm")
        left = band
    if rng.random() < 0.6:  # border
        t = max(2, int(H * rng.uniform(0.02, 0.06)))
        d.rectangle([t // 2, t // 2, W - 1 - t // 2, H - 1 - t // 2], outline=ink, width=t)
    rows = 2 if aspect < 2.4 and rng.random() < (0.9 if aspect < 1.6 else 0.5) else 1
    name = rng.choice(FONT_FILES)
    inner_w = (W - left) * rng.uniform(0.78, 0.92)
    cx = left + (W - left) / 2
    if rows == 1:
        s = text(rng, rng.randint(4, 8))
        size = int(H * rng.uniform(0.55, 0.75))
        f = font(name, size)
        tw = d.textlength(s, font=f)
        if tw > inner_w:  # narrower characters rather than smaller ones, up to a point
            size = max(10, int(size * max(0.6, inner_w / tw)))
            f = font(name, size)
        glyphs = Image.new("L", (int(d.textlength(s, font=f)) + 4, H), 0)
        ImageDraw.Draw(glyphs).text((2, H * rng.uniform(0.48, 0.56)), s, font=f, fill=255, anchor="lm")
        gw = min(inner_w, glyphs.width)
        glyphs = glyphs.resize((max(1, int(gw)), H))
        im.paste(ink, (int(cx - glyphs.width / 2), 0), glyphs)
        if rng.random() < 0.3:  # a small line of text under or over the number
            f2 = font(rng.choice(FONT_FILES), max(8, H // 8))
            y = H * (0.9 if rng.random() < 0.5 else 0.1)
            d.text((cx, y), "".join(rng.choice(LETTERS) for _ in range(rng.randint(4, 10))), font=f2,
                   fill=ink, anchor="mm")
    else:
        for y, n in [(0.3, rng.randint(2, 4)), (0.72, rng.randint(3, 6))]:
            s = text(rng, n)
            size = int(H * rng.uniform(0.3, 0.4))
            f = font(name, size)
            tw = d.textlength(s, font=f)
            if tw > inner_w:
                f = font(name, max(8, int(size * inner_w / tw)))
            d.text((cx, H * y), s, font=f, fill=ink, anchor="mm")
    return np.asarray(im)


def luma(a):
    return a[..., 0] * 0.299 + a[..., 1] * 0.587 + a[..., 2] * 0.114


def swap(arr, box, rng, taller=0.15):
    """Paints a rendered plate over box (x0, y0, x1, y1) of arr (H x W x 3
    uint8, changed in place) and returns the new plate's box. Boxes too
    small to draw, or cut by the image's edge, are left alone."""
    h0, w0 = arr.shape[:2]
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    if bw < 6 or bh < 3:
        return box
    if bw / bh > 3 and rng.random() < taller:  # a two-row plate in place of a one-row one
        cy = (y0 + y1) / 2
        nh = bw / rng.uniform(1.2, 2.2)
        y0, y1 = cy - nh / 2, cy + nh / 2
    ix0, iy0, ix1, iy1 = int(round(x0)), int(round(y0)), int(round(x1)), int(round(y1))
    if ix0 < 0 or iy0 < 0 or ix1 > w0 or iy1 > h0 or ix1 - ix0 < 4 or iy1 - iy0 < 3:
        return box
    old = arr[iy0:iy1, ix0:ix1].astype(np.float32)
    plate = render(rng, ix1 - ix0, iy1 - iy0)
    small = Image.fromarray(plate).resize((ix1 - ix0, iy1 - iy0), Image.BOX if plate.shape[0] > iy1 - iy0 else Image.BILINEAR)
    if rng.random() < 0.4:
        small = small.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 0.9)))
    new = np.asarray(small).astype(np.float32)
    # Lit like the plate it replaces: the same mean and spread of brightness.
    lo, ln = luma(old), luma(new)
    gain = (lo.std() + 1) / (ln.std() + 1) * rng.uniform(0.8, 1.25)
    new = (new - ln.mean()) * gain + lo.mean() * rng.uniform(0.9, 1.1)
    # Soft edges: the outer pixel ring half old, half new.
    alpha = np.ones(new.shape[:2], np.float32)
    if new.shape[0] > 4 and new.shape[1] > 4:
        alpha[0, :] = alpha[-1, :] = alpha[:, 0] = alpha[:, -1] = 0.5
    arr[iy0:iy1, ix0:ix1] = np.clip(old * (1 - alpha[..., None]) + new * alpha[..., None], 0, 255).astype(np.uint8)
    return (float(ix0), float(iy0), float(ix1), float(iy1))


SYLLABLES = ["car", "auto", "mo", "tor", "drive", "sale", "best", "deal", "er", "an", "ko", "ri", "ta", "ne",
             "sport", "line", "city", "max", "pro", "lux", "gr", "ou", "p", "in", "ex", "to", "wer", "ka", "li"]


def caption(rng):
    """A line of text that is not a plate number: a watermark, a caption, a
    site's address, a dealer's name or telephone number, car lettering."""
    word = lambda: "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(1, 3)))  # noqa: E731
    r = rng.random()
    if r < 0.3:
        return rng.choice(["www.", "", "\u00a9 ", "\u00a9 www."]) + word() + rng.choice([".com", ".in", ".ro", ".net", ".co.uk", ""])
    if r < 0.5:
        return " ".join(word().capitalize() for _ in range(rng.randint(2, 4)))
    if r < 0.6:  # a telephone number, never bare digits (a plate can be just that)
        return rng.choice(["+40 ", "(0", "+1 ", "Tel. ", "Call "]) + " ".join(
            "".join(rng.choice(DIGITS) for _ in range(rng.randint(3, 4))) for _ in range(rng.randint(2, 3)))
    if r < 0.85:
        return " ".join(word().upper() for _ in range(rng.randint(2, 3)))
    return " ".join(word() for _ in range(rng.randint(2, 5)))


def scribble(arr, avoid, rng, lo=6, hi=None):
    """Writes a caption (caption()) on arr (H x W x 3 uint8, changed in
    place), lo to hi pixels high, where it touches none of the boxes in
    avoid: a negative that looks like text but not like a plate. Returns its
    box, or None when no place was found."""
    h, w = arr.shape[:2]
    hi = hi or max(lo + 1, h / 5)
    for _ in range(5):
        size = int(math.exp(rng.uniform(math.log(lo), math.log(hi))) * 1.3)
        f = font(rng.choice(FONT_FILES + ["DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSans-ExtraLight.ttf"]), max(6, size))
        s = caption(rng)
        left, top, right, bottom = f.getbbox(s)
        tw, th = right - left + 4, bottom - top + 4
        if tw >= w or th >= h:
            continue
        x0, y0 = rng.randint(0, w - tw), rng.randint(0, h - th)
        box = (x0, y0, x0 + tw, y0 + th)
        if any(min(box[2], b[2]) > max(box[0], b[0]) - 4 and min(box[3], b[3]) > max(box[1], b[1]) - 4 for b in avoid):
            continue
        mask = Image.new("L", (tw, th), 0)
        ImageDraw.Draw(mask).text((2 - left, 2 - top), s, font=f, fill=255)
        if rng.random() < 0.3:
            mask = mask.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 0.8)))
        a = np.asarray(mask).astype(np.float32)[..., None] / 255 * rng.uniform(0.35, 1.0)
        region = arr[y0:y0 + th, x0:x0 + tw].astype(np.float32)
        bright = luma(region).mean() < 128
        ink = np.array(rng.choice([(250, 250, 250), (245, 245, 245)] if bright else [(10, 10, 10), (30, 30, 30)])
                       if rng.random() < 0.8 else [rng.randint(0, 255) for _ in range(3)], np.float32)
        arr[y0:y0 + th, x0:x0 + tw] = np.clip(region * (1 - a) + ink * a, 0, 255).astype(np.uint8)
        return box
    return None


if __name__ == "__main__":
    # A sheet of examples: python3 train/plates/synth.py /tmp/synth.png
    import sys
    rng = random.Random(1)
    sheet = Image.new("RGB", (1000, 700), (90, 90, 90))
    x = y = 10
    for i in range(40):
        h = rng.choice([30, 40, 60])
        w = int(h * rng.choice([1.3, 2, 2.5, 4, 4.7]))
        p = Image.fromarray(render(rng, w, h)).resize((w, h), Image.BOX)
        if x + w > 990:
            x, y = 10, y + 70
        sheet.paste(p, (x, y))
        x += w + 10
    arr = np.array(sheet)
    for _ in range(12):
        scribble(arr, [(0, 0, 1000, 480)], rng, 8, 30)
    Image.fromarray(arr).save(sys.argv[1] if len(sys.argv) > 1 else "/tmp/synth.png")
