"""The grounded retrieval judge: the model extracts, the code decides.

A free "does this reveal the future?" verdict from a small model follows the prompt's wording,
not the document (a 1.5B judge answered true to nearly everything under one wording and false
under another). Here the model only copies facts out of the document, each with its exact words,
and the code flags the document when a quote really in it reports an outcome or a date at or
after the cutoff (docs/audits.md, step 3 of "pastcast audit retrievals").

The model is shown the question (as the step showed it) and the document only: neither the
cutoff, which the decision applies, nor the outcome, which nothing here reads.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

NOT_STATED = "not stated"
MIN_QUOTE_WORDS = 3
"""Shorter quotes ("YES", "it won") are found in too many documents to ground anything."""
_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")


def extraction_schema(labels: Sequence[str]) -> dict[str, Any]:
    """The reply: what the document reports, each with the document's own words."""
    return {
        "type": "object",
        "properties": {
            "reported_outcome": {"enum": [*labels, NOT_STATED]},
            "outcome_quote": {"type": ["string", "null"]},
            "latest_date": {
                "anyOf": [
                    {"type": "string", "pattern": r"^[0-9]{4}(-[0-9]{2}(-[0-9]{2})?)?$"},
                    {"type": "null"},
                ]
            },
            "date_quote": {"type": ["string", "null"]},
        },
        "required": ["reported_outcome", "outcome_quote", "latest_date", "date_quote"],
        "additionalProperties": False,
    }


def _normal(text: str) -> str:
    """Case, punctuation, quote marks, dashes, HTML entities and spacing folded: "It's official
    - resolved YES" and "it&#39;s official – resolved 'yes'" are the same words."""
    plain = unicodedata.normalize("NFKC", html.unescape(text)).casefold()
    folded = re.sub(r"['’‘`]", "", plain)
    return " ".join(re.sub(r"\W+", " ", folded).split())


def in_document(quote: str, document: str, min_words: int = MIN_QUOTE_WORDS) -> bool:
    """Whether ``quote`` is in ``document`` word for word (after ``_normal``), and at least
    ``min_words`` long."""
    q = _normal(quote)
    return len(q.split()) >= max(1, min_words) and f" {q} " in f" {_normal(document)} "


def _first_instant(value: str) -> datetime | None:
    """The first instant of ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``; None when it is none."""
    m = _DATE.match(value.strip())
    if m is None:
        return None
    year, month, day = int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1)
    try:
        return datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    return " ".join(value.split()) if isinstance(value, str) else ""


def grounded_decision(
    data: dict[str, Any], document: str, cutoff: datetime, labels: Sequence[str]
) -> tuple[bool, str]:
    """Whether the extraction ``data`` shows that ``document`` (the text the judge was shown)
    reveals what was not known at ``cutoff``, and why."""
    outcome = data.get("reported_outcome")
    if outcome != NOT_STATED and outcome not in labels:
        raise ValueError(f"reported_outcome: expected one of {[*labels, NOT_STATED]}")
    notes: list[str] = []
    quote = _text(data, "outcome_quote")
    if outcome in labels:
        if in_document(quote, document):
            return True, f"states the outcome ({outcome}): {quote!r}"
        notes.append(f"an outcome ({outcome}) with a quote not in the document: {quote!r}")
    latest, date_quote = _text(data, "latest_date"), _text(data, "date_quote")
    start = _first_instant(latest) if latest else None
    if start is not None:
        # the year written in the quote: "2024–2025" is enough, "late on Friday" is not
        grounded = in_document(date_quote, document, 1) and str(start.year) in date_quote
        if grounded and start >= cutoff:
            return True, f"mentions {latest} ({date_quote!r}), not before the cutoff"
        if not grounded:
            notes.append(f"a date ({latest}) not written in the document: {date_quote!r}")
    return False, "; ".join(notes) or "no outcome stated, no later date"
