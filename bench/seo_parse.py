#!/usr/bin/env python3
"""The everyday tool beside the seo kind: one html.parser pass over every page of a folder.

For each .html or .htm file under the folder it reads the page and collects what an audit starts
from (the title, the meta description, the h1 count, images without alt, link targets, element
ids), and prints the number of pages read. No checks, scores or reports: the bare parsing that
any audit script does first, so the service's time can be set against it.

usage: seo_parse.py <folder>
"""
import os
import sys
from html.parser import HTMLParser


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.title, self.description, self.h1, self.images_without_alt = "", None, 0, 0
        self.links, self.ids, self._in_title = [], set(), False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "title":
            self._in_title = True
        elif tag == "meta" and (a.get("name") or "").lower() == "description":
            self.description = a.get("content")
        elif tag == "h1":
            self.h1 += 1
        elif tag == "img" and "alt" not in a:
            self.images_without_alt += 1
        elif tag in ("a", "area") and "href" in a:
            self.links.append(a["href"])

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def main():
    pages = 0
    for folder, _, files in os.walk(sys.argv[1]):
        for name in files:
            if name.lower().endswith((".html", ".htm")):
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                    page = Page()
                    page.feed(f.read())
                    page.close()
                pages += 1
    print(pages)


if __name__ == "__main__":
    main()
