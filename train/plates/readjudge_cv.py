#!/usr/bin/python3
"""Cross-validates the read judge's choices on TestFitReadJudge's dump.

The judge (imageops/plates/read.go, readJudge) is a logistic regression over
the features the finder computes for each line it reads. Which examples it
learns from (validation lines only, or the training split's too) and which
threshold it uses are chosen here, scored on validation photos the fold did
not fit: 5 folds by photo, the training split's lines always in the fit
when asked for.

    PLATES_FIT_SETS=... PLATES_FIT_TRAIN_SETS=... PLATES_FIT_DUMP=/tmp/fit.jsonl \\
        go test -tags measure ./imageops/plates -run FitReadJudge -v -timeout 2h
    /usr/bin/python3 train/plates/readjudge_cv.py /tmp/fit.jsonl [MORE.jsonl ...]

MORE dumps (another set's TestFitReadJudge run) add a choice: the training
lines with theirs too (their validation lines are not scored).

Prints, for each choice and threshold, the plates and non-plates accepted on
each set's validation lines. Needs numpy.
"""
import json
import math
import random
import sys

import numpy as np


def fit(xs, ys, lam=1.0, iters=30):
    """Logistic regression by Newton's method, an L2 penalty lam on all
    weights but the first (the same as readjudge_test.go's fitLogistic)."""
    xs, ys = np.array(xs), np.array(ys)
    n = xs.shape[1]
    w = np.zeros(n)
    reg = np.eye(n) * lam
    reg[0, 0] = 1e-6
    for _ in range(iters):
        p = 1 / (1 + np.exp(-xs @ w))
        g = xs.T @ (p - ys) + reg @ w
        h = (xs * (p * (1 - p))[:, None]).T @ xs + reg
        w -= np.linalg.solve(h, g)
    return w


def main():
    rows = [json.loads(line) for line in open(sys.argv[1])]
    val = [r for r in rows if r.get("split", "validation") == "validation"]
    train = [r for r in rows if r.get("split") == "training"]
    # The judge before the reading's shape features had the first 16.
    choices = [
        ("validation, 16 features", 16, []),
        ("validation, all features", None, []),
        ("+ training non-plates", None, [r for r in train if r["y"] == 0]),
        ("+ training lines", None, train),
    ]
    more = [json.loads(line) for name in sys.argv[2:] for line in open(name)]
    if more:
        more = [r for r in more if r.get("split") == "training"]
        choices.append(("+ training lines, more", None, train + more))
    files = sorted({r["file"] for r in val})
    random.Random(1).shuffle(files)
    fold = {f: i % 5 for i, f in enumerate(files)}
    ths = (0.3, 0.4, 0.5, 0.6)
    for name, nf, extra in choices:
        cut = lambda r: r["f"][:nf] if nf else r["f"]
        res = {th: {} for th in ths}
        for k in range(5):
            fitted = [r for r in val if fold[r["file"]] != k] + extra
            w = fit([cut(r) for r in fitted], [r["y"] for r in fitted])
            for r in val:
                if fold[r["file"]] != k:
                    continue
                p = 1 / (1 + math.exp(-float(np.dot(w, cut(r)))))
                for th in ths:
                    s = res[th].setdefault(r["set"], [0, 0, 0])
                    s[2] += r["y"] == 1
                    if p >= th:
                        s[0 if r["y"] == 1 else 1] += 1
        for th, by in res.items():
            tp = sum(v[0] for v in by.values())
            fp = sum(v[1] for v in by.values())
            sets = "  ".join("%s %d of %d, %d false" % (s, *v[:1], v[2], v[1]) for s, v in by.items())
            print("%-26s at %.1f: %d plates, %d false | %s" % (name, th, tp, fp, sets))


if __name__ == "__main__":
    main()
