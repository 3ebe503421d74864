"""The one tokenizer used for indexing and for queries.

Rules: Unicode NFKC normalisation, case folding, tokens are runs of Unicode word characters
(``\\w``, so letters, digits and underscore in any script), a small English stopword list is
dropped, and no stemming is applied (results stay explainable: a hit contains the query word).
Indexing and querying share this function, so a query term matches exactly the indexed term.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from pastcast.records import Document

__all__ = ["SNIPPET_CHARS", "STOPWORDS", "TOKENIZER", "snippet", "tokenize"]

SNIPPET_CHARS = 200
TOKENIZER = "nfkc-casefold-words-stopwords"
"""The tokenizer's name in a corpus identity (change it whenever ``tokenize`` changes)."""

_WORD = re.compile(r"\w+", re.UNICODE)

_STOPWORD_TEXT = """
    a an and are as at be been but by for from had has have he her his i if in into is it its
    of on or our she so than that the their them then there these they this those to was we
    were what when which who will with would you your not no
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())


def tokenize(text: str) -> list[str]:
    """Split ``text`` into index terms (see the module docstring for the rules)."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return [t for t in _WORD.findall(folded) if t not in STOPWORDS]


@functools.lru_cache(maxsize=256)
def _whole_words(terms: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, terms)) + r")(?!\w)")


def _first_match(text: str, terms: list[str]) -> int | None:
    """Where the first word of ``text`` that tokenizes to a query term starts."""
    if not terms:
        return None
    if text.isascii():  # NFKC is the identity and casefold is lower(): one regex scan in C
        m = _whole_words(tuple(terms)).search(text.lower())
        return m.start() if m else None
    wanted = set(terms)
    for m in _WORD.finditer(text):
        if unicodedata.normalize("NFKC", m.group()).casefold() in wanted:
            return m.start()
    return None


def snippet(doc: Document, terms: list[str]) -> str:
    """About ``SNIPPET_CHARS`` characters around the first query term in the text, or its start."""
    text = doc.text
    found = _first_match(text, terms)
    start = 0 if found is None else max(0, found - SNIPPET_CHARS // 4)
    piece = text[start : start + SNIPPET_CHARS].strip()
    prefix = "…" if start > 0 else ""
    suffix = "…" if start + SNIPPET_CHARS < len(text) else ""
    return f"{prefix}{piece}{suffix}"
