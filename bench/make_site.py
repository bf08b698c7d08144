#!/usr/bin/env python3
"""Writes a reproducible site of HTML pages for the seo benchmark.

Pages sit in nested sections (about 30 to a folder, each folder with an index.html) and carry
what an audit looks at: a title, a meta description, h1 headings, images, a canonical link,
links to other pages with and without anchors, and some prose. Most pages are clean; a few in
each hundred have a missing or duplicate title, a description that is too short, no h1 or two,
images without alt, a broken link or anchor, or a noindex, so every check has work to do. The
same seed gives the same site.

usage: make_site.py <folder> [--pages 2000] [--seed 1]
"""
import argparse
import os
import random

WORDS = (
    "the of and to in is that for it as was with be by on not this are or from at which "
    "garden kitchen river station market harbour meadow orchard bridge lantern library "
    "museum ticket journey season recipe review guide map weather festival gallery"
).split()


def sentence(rng, low=8, high=20):
    words = [rng.choice(WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + "."


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--pages", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(args.seed)

    # Page paths: section folders of about 30 pages, the first page of each being its index.html.
    paths = []
    for i in range(args.pages):
        section = "s%02d/t%02d" % (i // 300, (i // 30) % 10)
        paths.append(section + ("/index.html" if i % 30 == 0 else "/page-%04d.html" % i))
    ids = {p: ["part-%d" % k for k in range(3)] for p in paths}

    for i, path in enumerate(paths):
        flaw = rng.randrange(100)  # a few pages in a hundred have one problem each
        title = "" if flaw == 0 else ("Shared title" if flaw == 1 else "%s %d" % (sentence(rng, 3, 6)[:-1], i))
        description = "Too short." if flaw == 2 else sentence(rng, 10, 18)
        h1s = 0 if flaw == 3 else (2 if flaw == 4 else 1)
        head = ["<!DOCTYPE html>", "<html lang=\"en\">", "<head>", "<meta charset=\"utf-8\">"]
        if title:
            head.append("<title>%s</title>" % title)
        head.append("<meta name=\"description\" content=\"%s\">" % description)
        if flaw == 5:
            head.append("<meta name=\"robots\" content=\"noindex\">")
        if flaw != 6:
            head.append("<link rel=\"canonical\" href=\"/%s\">" % path)
        head.append("</head>")
        body = ["<body>", "<nav><a href=\"/%s\">Home</a></nav>" % paths[0]]
        for _ in range(h1s):
            body.append("<h1>%s</h1>" % (title or "Untitled"))
        for k in range(3):
            body.append("<h2 id=\"part-%d\">%s</h2>" % (k, sentence(rng, 2, 5)))
            body.append("<p>%s</p>" % " ".join(sentence(rng) for _ in range(rng.randint(4, 10))))
            alt = "" if flaw == 7 else " alt=\"%s\"" % sentence(rng, 2, 4)[:-1]
            body.append("<img src=\"/img/%d-%d.jpg\"%s>" % (i, k, alt))
        links = []
        for _ in range(rng.randint(3, 8)):
            target = rng.choice(paths)
            links.append("/" + target + ("#" + rng.choice(ids[target]) if rng.random() < 0.3 else ""))
        if flaw == 8:
            links.append("/missing/page-%d.html" % i)
        if flaw == 9:
            links.append("/%s#nowhere" % rng.choice(paths))
        links.append("https://example.org/elsewhere")
        body.append("<ul>%s</ul>" % "".join("<li><a href=\"%s\">%s</a></li>" % (h, sentence(rng, 2, 4)[:-1]) for h in links))
        body.append("</body>")
        file = os.path.join(args.folder, path)
        os.makedirs(os.path.dirname(file), exist_ok=True)
        with open(file, "w", encoding="utf-8") as f:
            f.write("\n".join(head + body + ["</html>", ""]))
    print("%d pages" % len(paths))


if __name__ == "__main__":
    main()
