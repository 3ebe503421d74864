"""Memory-on mode: the belief notebook (``pastcast.records.Notebook``) in the prompt, and the
updated one read from the final reply; one that does not parse or validate is not used: the
previous one is carried forward, and the episode records that and why (docs/models.md, "Belief
notebook").
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from pydantic import ValidationError

from pastcast.agents._answer_reader import Answer, read_answer
from pastcast.agents._prompts import answer_template
from pastcast.cutoff import cutoff_for_day, is_visible, parse_cutoff
from pastcast.env import Episode
from pastcast.records import (
    Assessment,
    LedgerEntry,
    Notebook,
    NotebookCheck,
    NotebookProblem,
    Record,
)

NOTEBOOK_SCHEMA: dict[str, Any] = Notebook.answer_schema()
"""The notebook part of the final answer's JSON schema (JSON action mode)."""


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
    return _notebook_in(read_answer(text, section="notebook"))


def _notebook_in(reply: Answer) -> Notebook | None:
    return next((nb for obj in reply.objects() if (nb := _as_notebook(obj)) is not None), None)


def future_entries(nb: Notebook, cutoff: datetime | date | str) -> tuple[LedgerEntry, ...]:
    """Ledger entries dated on a day that had not begun before ``cutoff`` (impossible evidence).

    A day ``d`` is possible iff its first instant is visible at the cutoff, so at a midnight
    cutoff the latest possible date is the day before, and at a mid-day cutoff it is that day.
    """
    c = parse_cutoff(cutoff)
    return tuple(
        e for e in nb.evidence_ledger if not is_visible(cutoff_for_day(e.date_observed), c)
    )


def check_notebook(
    text: str, labels: Sequence[str], cutoff: datetime | date | str
) -> NotebookCheck:
    """Parse and validate a notebook written at a step: labels, probabilities, dates, ids."""
    reply = read_answer(text or "", section="notebook")
    nb = _notebook_in(reply)
    if nb is None:
        kind = "truncated" if reply.cut_short else "unparseable"
        return NotebookCheck(notebook=None, problems=(NotebookProblem(kind=kind),))
    problems: list[NotebookProblem] = []
    known = set(labels)
    probs = nb.assessment.probabilities
    if set(probs) - known:
        detail = f"unknown labels in assessment: {sorted(set(probs) - known)}"
        problems.append(NotebookProblem(kind="unknown_labels", detail=detail))
    if any(not math.isfinite(p) or p < 0 or p > 1 for p in probs.values()):
        detail = "assessment probability outside [0, 1]"
        problems.append(NotebookProblem(kind="bad_probabilities", detail=detail))
    elif not sum(probs.values()) > 0:
        detail = "assessment has no positive probability"
        problems.append(NotebookProblem(kind="bad_probabilities", detail=detail))
    for entry in nb.evidence_ledger:
        unknown = set(entry.supports) | set(entry.rules_out)
        unknown -= known
        if unknown:
            detail = f"ledger entry {entry.id}: unknown labels {sorted(unknown)}"
            problems.append(NotebookProblem(kind="unknown_labels", detail=detail))
    ids = [e.id for e in nb.evidence_ledger]
    if len(set(ids)) != len(ids):
        problems.append(NotebookProblem(kind="duplicate_ids", detail="duplicate ledger entry ids"))
    late = future_entries(nb, cutoff)
    if late:
        detail = f"ledger entries dated after the cutoff: {[e.id for e in late]}"
        problems.append(NotebookProblem(kind="future_dates", detail=detail))
    return NotebookCheck(notebook=nb, problems=tuple(problems))


def carry_forward(
    previous: Notebook | None, text: str, labels: Sequence[str], cutoff: datetime | date | str
) -> tuple[Notebook | None, NotebookCheck]:
    """The notebook to hand to the next step: the new one if valid, else ``previous`` unchanged.

    The returned check says whether this step's notebook was malformed (``not check.ok``), so
    callers count failures without re-validating.
    """
    check = check_notebook(text, labels, cutoff)
    if check.ok and check.notebook is not None:
        return check.notebook, check
    return previous, check


def store_notebook(episode: Episode, reply: str) -> None:
    """Set ``episode.notebook_out`` from the final reply, or carry ``notebook_in`` forward and
    record why (``notebook_carried``, ``notebook_problems``)."""
    q = episode.question
    notebook, check = carry_forward(episode.notebook_in, reply, q.labels, q.cutoff)
    episode.notebook_out = notebook
    episode.notebook_carried = not check.ok
    episode.notebook_problems = check.problems


def notebook_field(previous: Notebook | None) -> str:
    """The ``{notebook}`` prompt field: the previous notebook or a first-step note."""
    if previous is None:
        return "(none: this is the first forecast date for this question)"
    return previous.text()


def memory_fields(episode: Episode) -> dict[str, str]:
    """The ``{notebook}`` and ``{memory_answer_template}`` prompt fields."""
    return {
        "notebook": notebook_field(episode.notebook_in),
        "memory_answer_template": memory_answer_template(episode.question.labels),
    }


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
