"""Dates, title and body text of an HTML news page, with the standard library's parser; which
tags and JSON-LD fields are read, first found wins, is listed in docs/corpus.md ("CC-News style
crawls")."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

from pastcast import safejson

_SKIP = frozenset({"script", "style", "noscript", "nav", "header", "footer", "aside", "form"})
_META_PUBLISHED = ("article:published_time", "datepublished")
_META_MODIFIED = ("article:modified_time", "datemodified")


@dataclass(frozen=True)
class PageMeta:
    title: str
    text: str
    published: str | None
    modified: str | None


def _ld_dates(data: Any, out: dict[str, str]) -> None:
    """The first ``datePublished``/``dateModified`` strings in a JSON-LD tree."""
    if isinstance(data, list):
        for item in data:
            _ld_dates(item, out)
    elif isinstance(data, dict):
        for key in ("datePublished", "dateModified"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                out.setdefault(key, value.strip())
        for value in data.values():
            if isinstance(value, dict | list):
                _ld_dates(value, out)


class _Parser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.meta: dict[str, str] = {}
        self.ld: dict[str, str] = {}
        self.title: list[str] = []
        self.paragraphs: list[str] = []
        self.loose: list[str] = []
        self._stack: list[str] = []
        self._para: list[str] | None = None
        self._ld_text: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): (v or "") for k, v in attrs}
        if tag in ("meta", "time"):
            name = (a.get("property") or a.get("itemprop") or a.get("name") or "").lower()
            value = a.get("content") or a.get("datetime") or ""
            if name and value.strip():
                self.meta.setdefault(name, value.strip())
            return
        if tag == "script" and a.get("type", "").lower() == "application/ld+json":
            self._ld_text = []
        if tag == "p":
            self._para = []
        if tag not in ("br", "img", "link", "input", "hr"):
            self._stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script" and self._ld_text is not None:
            with contextlib.suppress(ValueError):  # a broken JSON-LD block is just ignored
                _ld_dates(safejson.loads("".join(self._ld_text)), self.ld)
            self._ld_text = None
        if tag == "p" and self._para is not None:
            text = " ".join("".join(self._para).split())
            if text:
                self.paragraphs.append(text)
            self._para = None
        if tag in self._stack:
            while self._stack and self._stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if self._ld_text is not None:
            self._ld_text.append(data)
            return
        if any(t in _SKIP for t in self._stack):
            return
        if self._stack and self._stack[-1] == "title":
            self.title.append(data)
        elif self._para is not None:
            self._para.append(data)
        elif data.strip():
            self.loose.append(" ".join(data.split()))


def parse_html(html: str) -> PageMeta:
    p = _Parser()
    p.feed(html)
    p.close()
    published = p.ld.get("datePublished") or next(
        (p.meta[k] for k in _META_PUBLISHED if k in p.meta), None
    )
    modified = p.ld.get("dateModified") or next(
        (p.meta[k] for k in _META_MODIFIED if k in p.meta), None
    )
    title = p.meta.get("og:title") or " ".join("".join(p.title).split())
    text = "\n".join(p.paragraphs) if p.paragraphs else "\n".join(p.loose)
    return PageMeta(title=title, text=text, published=published, modified=modified)
