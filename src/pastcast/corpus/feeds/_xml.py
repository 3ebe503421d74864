"""RSS 2.0 and Atom documents parsed into ``RawItem``s with the standard library's expat. A feed
is untrusted input, so any document type declaration is refused (no entity expansion, no
external entities); anything else that is not well-formed XML is a ``FieldError`` in one line."""

from __future__ import annotations

import contextlib
import html
import re
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import NoReturn
from xml.parsers import expat

from pastcast.cutoff import as_utc, parse_publication_time
from pastcast.errors import FieldError

_ATOM = "http://www.w3.org/2005/Atom"
_CONTENT = "http://purl.org/rss/1.0/modules/content/"
_DC = "http://purl.org/dc/elements/1.1/"
_SEP = "|"
_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")


@dataclass
class _Node:
    tag: str
    attrs: dict[str, str]
    text: list[str] = field(default_factory=list)
    children: list[_Node] = field(default_factory=list)

    def find(self, *tags: str) -> _Node | None:
        return next((child for child in self.children if child.tag in tags), None)

    def all(self, tag: str) -> list[_Node]:
        return [c for c in self.children if c.tag == tag]

    def value(self, *tags: str) -> str | None:
        node = self.find(*tags)
        return None if node is None else "".join(node.text).strip()


@dataclass(frozen=True)
class RawItem:
    """One entry as the feed gives it: its key (guid, id or link), text and claimed times (the
    raw strings are parsed by ``parse_date``; an unreadable one counts as absent)."""

    key: str | None
    title: str
    text: str
    url: str | None
    published: datetime | None
    updated: datetime | None
    source: str | None = None


def _refuse(*_: object) -> NoReturn:
    raise FieldError("", "a document type declaration (DTD or entities) is not accepted")


def _tree(body: bytes) -> _Node:
    parser = expat.ParserCreate(namespace_separator=_SEP)
    # Refused before any entity is declared, so no expansion ever happens.
    parser.StartDoctypeDeclHandler = _refuse
    parser.EntityDeclHandler = _refuse
    parser.ExternalEntityRefHandler = _refuse
    root = _Node("", {})
    stack = [root]

    def start(tag: str, attrs: dict[str, str]) -> None:
        node = _Node(tag, attrs)
        stack[-1].children.append(node)
        stack.append(node)

    def end(_tag: str) -> None:
        stack.pop()

    def chars(data: str) -> None:
        stack[-1].text.append(data)

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        parser.Parse(body, True)
    except expat.ExpatError as exc:
        raise FieldError("", f"malformed XML ({exc})") from None
    if not root.children:
        raise FieldError("", "no XML element")
    return root.children[0]


def parse_date(text: str | None) -> datetime | None:
    """An RFC 822 (RSS) or ISO 8601 / RFC 3339 (Atom) time in UTC; None when absent or
    unreadable (an undated item is dated by when it was fetched)."""
    if not text or not text.strip():
        return None
    with contextlib.suppress(TypeError, ValueError, IndexError, OverflowError):
        return as_utc(parsedate_to_datetime(text.strip()))
    try:
        return parse_publication_time(text)
    except (ValueError, OverflowError):
        return None


def plain_text(markup: str) -> str:
    """Feed HTML as plain text: tags dropped, entities decoded, whitespace collapsed."""
    return _SPACE.sub(" ", html.unescape(_TAG.sub(" ", markup))).strip()


def _rss(channel: _Node) -> list[RawItem]:
    items = []
    for node in channel.all("item"):
        link = node.value("link") or None
        guid = node.value("guid") or None
        body = node.value(f"{_CONTENT}{_SEP}encoded") or node.value("description") or ""
        items.append(
            RawItem(
                key=guid or link,
                title=plain_text(node.value("title") or ""),
                text=plain_text(body),
                url=link,
                published=parse_date(node.value("pubDate") or node.value(f"{_DC}{_SEP}date")),
                updated=None,
            )
        )
    return items


def _atom(feed: _Node) -> list[RawItem]:
    items = []
    for node in feed.all(f"{_ATOM}{_SEP}entry"):
        link = None
        for candidate in node.all(f"{_ATOM}{_SEP}link"):
            if candidate.attrs.get("rel", "alternate") == "alternate":
                link = candidate.attrs.get("href") or None
                break
        body = node.value(f"{_ATOM}{_SEP}content") or node.value(f"{_ATOM}{_SEP}summary") or ""
        items.append(
            RawItem(
                key=node.value(f"{_ATOM}{_SEP}id") or link,
                title=plain_text(node.value(f"{_ATOM}{_SEP}title") or ""),
                text=plain_text(body),
                url=link,
                published=parse_date(node.value(f"{_ATOM}{_SEP}published")),
                updated=parse_date(node.value(f"{_ATOM}{_SEP}updated")),
            )
        )
    return items


def parse_feed(body: bytes) -> list[RawItem]:
    """The items of an RSS 2.0 (``<rss><channel><item>``) or Atom (``<feed><entry>``) body."""
    root = _tree(body)
    if root.tag == "rss":
        channel = root.find("channel")
        if channel is None:
            raise FieldError("", "an RSS document without a <channel>")
        return _rss(channel)
    if root.tag == f"{_ATOM}{_SEP}feed":
        return _atom(root)
    raise FieldError("", f"not an RSS 2.0 or Atom feed (root element {root.tag.split(_SEP)[-1]!r})")
