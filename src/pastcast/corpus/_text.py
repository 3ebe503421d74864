"""The one tokenizer used for indexing and for queries (rules in docs/corpus.md, "Tokenizer":
NFKC, case folding, runs of ``\\w``, a short stopword list, no stemming). Indexing and querying
share this function, so a query term matches exactly the indexed term."""

from __future__ import annotations

import re
import unicodedata

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


# ASCII bytes: word characters to themselves in lower case, everything else to a space
_ASCII_FOLD = bytes(
    c + 32 if 65 <= c <= 90 else c if (c >= 97 and c <= 122) or 48 <= c <= 57 or c == 95 else 32
    for c in range(256)
)
STOPWORDS_UTF8 = frozenset(w.encode() for w in STOPWORDS)


def folded_words(text: str) -> bytes:
    """The words of ``text`` as ``tokenize`` finds them, UTF-8, between ASCII whitespace, with
    the stopwords perhaps still among them (``tokenize_utf8`` drops them; a build drops them by
    term id, a month at a time).

    ASCII text (NFKC is the identity, case folding is lower-casing and ``\\w`` is
    ``[A-Za-z0-9_]``) takes one byte translation in C, ~6x faster than the regular expression
    on the news archive; other text goes through ``tokenize``.
    """
    if text.isascii():
        return text.encode().translate(_ASCII_FOLD)
    return " ".join(tokenize(text)).encode()


def tokenize_utf8(text: str) -> list[bytes]:
    """``tokenize(text)``, each term UTF-8 encoded."""
    return [w for w in folded_words(text).split() if w not in STOPWORDS_UTF8]


def _is_word(char: str) -> bool:
    """``\\w`` for one character, as ``re`` defines it for ``str`` patterns."""
    return char.isalnum() or char == "_"


def _first_match(text: str, terms: list[str]) -> int | None:
    """Where the first word of ``text`` that tokenizes to a query term starts. Where lower-casing
    is the whole normalisation, each term is found with ``str.find`` at its first whole-word
    occurrence: no regular expression per query (that was ~30% of building a search's hits)."""
    if not terms:
        return None
    low = text.lower()
    if not text.isascii() and (
        len(low) != len(text)
        or text.casefold() != low
        or not unicodedata.is_normalized("NFKC", text)
    ):
        return _first_match_by_word(text, terms)
    best: int | None = None
    for term in terms:
        at = low.find(term)
        while at != -1 and (best is None or at < best):
            end = at + len(term)
            if (at == 0 or not _is_word(low[at - 1])) and (
                end == len(low) or not _is_word(low[end])
            ):
                best = at
                break
            at = low.find(term, at + 1)
    return best


def _first_match_by_word(text: str, terms: list[str]) -> int | None:
    """``_first_match`` for any text: each word normalised as the tokenizer does."""
    wanted = set(terms)
    for m in _WORD.finditer(text):
        if unicodedata.normalize("NFKC", m.group()).casefold() in wanted:
            return m.start()
    return None


def text_snippet(text: str, terms: list[str]) -> str:
    """About ``SNIPPET_CHARS`` characters around the first query term in the text, or its start."""
    found = _first_match(text, terms)
    start = 0 if found is None else max(0, found - SNIPPET_CHARS // 4)
    piece = text[start : start + SNIPPET_CHARS].strip()
    prefix = "…" if start > 0 else ""
    suffix = "…" if start + SNIPPET_CHARS < len(text) else ""
    return f"{prefix}{piece}{suffix}"
