#!/usr/bin/env python3
"""Writes a reproducible mixed tree for the zip benchmark.

About half the bytes are text (prose made from a word list, Markdown, CSV and HTML: deflates
3-4x, as real documents do), half are already compressed (random bytes named .jpg, .png, .gz,
.mp4: no archiver can shrink them). Sizes vary from 1 KiB to 8 MiB over nested folders, plus a few
empty folders. The same seed gives the same tree.

usage: make_tree.py <folder> [--mib 1024] [--seed 1]
"""
import argparse
import os
import random

WORDS = (
    "the of and to in is that for it as was with be by on not he this are or his from at which "
    "but have an they you were her she there been one all we their has would when if so no what "
    "job queue archive folder owner lease replica status download progress retention service "
    "kubernetes postgres worker claim sweep cleanup artifact payload result error timeout retry "
    "report page title description heading link image search index query ranking snippet"
).split()


def text_pool(rng, size):
    out, length = [], 0
    while length < size:
        line = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 16)))
        line = line.capitalize() + rng.choice([".", ".", ".", "?", "!", ","]) + "\n"
        out.append(line)
        length += len(line)
    return "".join(out).encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    total = args.mib * 1024 * 1024
    pool = text_pool(rng, 8 * 1024 * 1024)
    text_ext = [".txt", ".md", ".csv", ".html", ".log"]
    bin_ext = [".jpg", ".png", ".gz", ".mp4"]
    written = {"text": 0, "compressed": 0}
    n = 0
    while written["text"] + written["compressed"] < total:
        kind = "text" if written["text"] <= written["compressed"] else "compressed"
        folder = os.path.join(args.folder, "d%02d" % rng.randint(0, 15), "s%02d" % rng.randint(0, 7))
        os.makedirs(folder, exist_ok=True)
        if kind == "text":
            size = min(int(rng.lognormvariate(11, 1.6)), 8 << 20)  # median ~60 KiB
            size = max(size, 1024)
            start = rng.randint(0, len(pool) - 1)
            body = (pool[start:] + pool)[:size]
            name = "f%05d%s" % (n, rng.choice(text_ext))
        else:
            size = max(min(int(rng.lognormvariate(13, 1.0)), 8 << 20), 100 << 10)  # median ~440 KiB
            body = rng.randbytes(size)
            name = "f%05d%s" % (n, rng.choice(bin_ext))
        with open(os.path.join(folder, name), "wb") as f:
            f.write(body)
        written[kind] += len(body)
        n += 1
    for i in range(5):
        os.makedirs(os.path.join(args.folder, "empty%d" % i, "inner"), exist_ok=True)
    print("%d files, %d text bytes, %d compressed bytes" % (n, written["text"], written["compressed"]))


if __name__ == "__main__":
    main()
