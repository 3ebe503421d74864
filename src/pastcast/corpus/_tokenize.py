"""The one tokenizer used for indexing and for queries.

Rules: Unicode NFKC normalisation, case folding, tokens are runs of Unicode word characters
(``\\w``, so letters, digits and underscore in any script), a small English stopword list is
dropped, and no stemming is applied (results stay explainable: a hit contains the query word).
Indexing and querying share this function, so a query term matches exactly the indexed term.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["STOPWORDS", "tokenize"]

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
