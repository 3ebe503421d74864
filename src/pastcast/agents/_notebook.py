"""The belief notebook carried between forecast dates (memory-on mode, after Forecast-Dojo).

A notebook has an assessment (a probability per label, a short summary, open questions) and an
evidence ledger of dated claims, each saying which labels it supports and which it rules out,
and whether it is still active or superseded by newer evidence. The model writes it as JSON
(inside its final answer object under ``"notebook"``, or in ``<notebook>`` tags); a notebook
that does not parse or validate is not used: the previous one is carried forward unchanged and
the step is counted as a notebook failure (``carry_forward``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from pydantic import ValidationError

from pastcast.agents._jsonish import find_blocks, load_object, strip_thinking, tagged
from pastcast.agents._prompts import answer_template
from pastcast.cutoff import cutoff_for_day, is_visible, parse_cutoff
from pastcast.records import Assessment, LedgerEntry, Notebook, NotebookCheck, Record

__all__ = [
    "carry_forward",
    "check_notebook",
    "future_entries",
    "ledger_dates_ok",
    "memory_answer_template",
    "notebook_field",
    "parse_notebook",
    "render_notebook",
]


def _known(obj: dict[str, Any], model: type[Record]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k in model.model_fields}


def _as_notebook(obj: dict[str, Any]) -> Notebook | None:
    if isinstance(obj.get("notebook"), dict):
        obj = obj["notebook"]
    if not isinstance(obj.get("assessment"), dict):
        return None
    # Extra keys a model adds (a confidence, notes) are dropped rather than failing the notebook.
    ledger = obj.get("evidence_ledger") or []
    clean = {
        "assessment": _known(obj["assessment"], Assessment),
        "evidence_ledger": [
            _known(e, LedgerEntry) if isinstance(e, dict) else e
            for e in (ledger if isinstance(ledger, list) else [ledger])
        ],
    }
    try:
        return Notebook.model_validate(clean)
    except ValidationError:
        return None


def parse_notebook(text: str) -> Notebook | None:
    """The notebook in ``text`` (last ``<notebook>`` block, else last object holding one)."""
    if not text:
        return None
    text = strip_thinking(text)
    spans = tagged(text, "notebook")
    if spans:
        start, stop = spans[-1]
        inner = text[start:stop]
        candidates = [block.text for block in find_blocks(inner)] or [inner]
    else:
        candidates = [b.text for b in find_blocks(text)]
    for candidate in reversed(candidates):
        obj, _ = load_object(candidate)
        if obj is not None and (nb := _as_notebook(obj)) is not None:
            return nb
    return None


def render_notebook(nb: Notebook) -> str:
    """Canonical JSON text of a notebook (what the next step is shown)."""
    return json.dumps(nb.model_dump(mode="json"), indent=2, ensure_ascii=False)


def _cutoff(cutoff: datetime | date | str) -> datetime:
    return parse_cutoff(cutoff)


def future_entries(nb: Notebook, cutoff: datetime | date | str) -> tuple[LedgerEntry, ...]:
    """Ledger entries dated on a day that had not begun before ``cutoff`` (impossible evidence).

    A day ``d`` is possible iff its first instant is visible at the cutoff, so at a midnight
    cutoff the latest possible date is the day before, and at a mid-day cutoff it is that day.
    """
    c = _cutoff(cutoff)
    return tuple(
        e for e in nb.evidence_ledger if not is_visible(cutoff_for_day(e.date_observed), c)
    )


def ledger_dates_ok(nb: Notebook, cutoff: datetime | date | str) -> bool:
    """True when no ledger entry is dated after what the step's cutoff allows."""
    return not future_entries(nb, cutoff)


def check_notebook(
    text: str, labels: Sequence[str], cutoff: datetime | date | str
) -> NotebookCheck:
    """Parse and validate a notebook written at a step: labels, probabilities, dates, ids."""
    nb = parse_notebook(text)
    if nb is None:
        return NotebookCheck(notebook=None, problems=("unparseable",))
    problems: list[str] = []
    known = set(labels)
    probs = nb.assessment.probabilities
    if set(probs) - known:
        problems.append(f"unknown labels in assessment: {sorted(set(probs) - known)}")
    if any(not math.isfinite(p) or p < 0 or p > 1 for p in probs.values()):
        problems.append("assessment probability outside [0, 1]")
    elif not sum(probs.values()) > 0:
        problems.append("assessment has no positive probability")
    for entry in nb.evidence_ledger:
        unknown = set(entry.supports) | set(entry.rules_out)
        unknown -= known
        if unknown:
            problems.append(f"ledger entry {entry.id}: unknown labels {sorted(unknown)}")
    ids = [e.id for e in nb.evidence_ledger]
    if len(set(ids)) != len(ids):
        problems.append("duplicate ledger entry ids")
    late = future_entries(nb, cutoff)
    if late:
        problems.append(f"ledger entries dated after the cutoff: {[e.id for e in late]}")
    return NotebookCheck(notebook=nb, problems=tuple(problems))


def carry_forward(
    previous: str | None, text: str, labels: Sequence[str], cutoff: datetime | date | str
) -> tuple[str | None, NotebookCheck]:
    """The notebook to hand to the next step: the new one if valid, else ``previous`` unchanged.

    The returned check says whether this step's notebook was malformed (``not check.ok``), so
    callers count failures without re-validating.
    """
    check = check_notebook(text, labels, cutoff)
    if check.ok and check.notebook is not None:
        return render_notebook(check.notebook), check
    return previous, check


def notebook_field(previous: str | None) -> str:
    """The ``{notebook}`` prompt field: the previous notebook or a first-step note."""
    return previous if previous else "(none: this is the first forecast date for this question)"


def memory_answer_template(labels: Sequence[str]) -> str:
    """The memory-on final answer format: forecast plus updated notebook, placeholders only."""
    probs = ", ".join(f"{json.dumps(lb, ensure_ascii=False)}: <probability>" for lb in labels)
    first = json.dumps(labels[0], ensure_ascii=False) if labels else '"<outcome>"'
    return (
        answer_template(labels)[:-1] + ',\n "notebook": {\n'
        f'  "assessment": {{"probabilities": {{{probs}}},\n'
        '                 "summary": "<current view in a few sentences>",\n'
        '                 "open_questions": ["<what would change the forecast>"]},\n'
        '  "evidence_ledger": [\n'
        '    {"id": "E1", "claim": "<one specific claim>", "date_observed": "<YYYY-MM-DD>",\n'
        f'     "source": "<document id or title>", "supports": [{first}], "rules_out": [],\n'
        '     "status": "active"}\n'
        "  ]\n }\n}"
    )
