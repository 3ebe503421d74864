"""Query decomposition (Forecast-Dojo, Figure 7): the judge writes 4-7 predictive-evidence and
4-7 background queries per event, forbidden from asking for the outcome.

The prompt forbids it; a screen also drops any query that asks for the result itself (who won,
how it resolved, the final outcome), so such a query is never searched. Dropped queries are kept
in the plan for audit.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pastcast.curate._judge import Judge, question_text, reply_schema
from pastcast.curate._records import QueryPlan
from pastcast.records import Event

MIN_QUERIES = 4
MAX_QUERIES = 7
PROMPT = "curate_queries"

_OUTCOME = re.compile(
    r"\b(resolv\w*|outcome|final result|results? of the|who won|did \w+ win|has \w+ won|"
    r"winner (of|was|is)|was (it )?(approved|passed|elected|confirmed)|ended up)\b",
    re.IGNORECASE,
)


def targets_outcome(query: str) -> bool:
    """Whether ``query`` asks for the result of the question rather than evidence about it."""
    return _OUTCOME.search(query) is not None


def _group() -> dict[str, Any]:
    # No minItems/maxItems nor maxLength: llama.cpp expands bounded repetition into nested
    # optional rules, which slows constrained sampling to a crawl. The counts are checked when
    # the reply is read, and a reply is bounded by the judge's max_tokens.
    return {"type": "array", "items": {"type": "string", "minLength": 1}}


def queries_schema() -> dict[str, Any]:
    return reply_schema(PROMPT, {"predictive": _group(), "background": _group()})


def _strings(data: dict[str, Any], key: str) -> list[str]:
    raw = data.get(key)
    if not isinstance(raw, list) or not all(isinstance(q, str) for q in raw):
        raise ValueError(f"{key}: expected a list of strings")
    seen: dict[str, None] = {}
    for q in raw:
        text = " ".join(q.split())
        if text and text.lower() not in {s.lower() for s in seen}:
            seen[text] = None
    if not MIN_QUERIES <= len(seen) <= MAX_QUERIES:
        raise ValueError(
            f"{key}: expected {MIN_QUERIES}-{MAX_QUERIES} distinct queries, got {len(seen)}"
        )
    return list(seen)


def parse_plan(data: dict[str, Any]) -> QueryPlan:
    groups = {key: _strings(data, key) for key in ("predictive", "background")}
    dropped = tuple(q for qs in groups.values() for q in qs if targets_outcome(q))
    plan = QueryPlan(
        predictive=tuple(q for q in groups["predictive"] if not targets_outcome(q)),
        background=tuple(q for q in groups["background"] if not targets_outcome(q)),
        dropped=dropped,
    )
    if not plan.queries:
        raise ValueError("every query asked for the outcome")
    return plan


def decompose(judge: Judge, event: Event, judged_at: datetime) -> tuple[QueryPlan | None, str]:
    """The event's query plan (None when the judge's reply is unusable) and, then, why."""
    fields = {
        "question": question_text(event, judged_at),
        "min_queries": str(MIN_QUERIES),
        "max_queries": str(MAX_QUERIES),
    }
    plan, judgement = judge.ask("queries", event.id, PROMPT, fields, queries_schema(), parse_plan)
    return plan, judgement.error or ""
