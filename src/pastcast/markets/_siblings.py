"""Sibling answers: a step whose question names the resolved answer of another event still open
at the step's cutoff (a market created after a sibling resolved names the winner in its title).
The matching rules are in docs/audits.md, "Sibling answers". An audit of the dataset computed
with the resolutions: nothing here is ever shown to an agent. Imports can drop the steps it
finds (``drop_sibling_answers``).
"""

from __future__ import annotations

import re
import unicodedata

from pastcast.cutoff import is_visible
from pastcast.dataset import Dataset
from pastcast.records import Event, Record, UtcDatetime

MIN_ANSWER_CHARS = 4
_GENERIC = frozenset(
    {"yes", "no", "other", "others", "none", "neither", "tie", "draw", "unknown", "another"}
    | {"nobody", "any other", "no one", "someone else", "none of the above", "not listed", "n a"}
)


class SiblingAnswer(Record):
    """One step naming another event's answer before that event resolved."""

    event_id: str
    step_index: int
    cutoff: UtcDatetime
    sibling_id: str
    answer: str
    sibling_resolved_at: UtcDatetime
    field: str
    """Where it is named: ``title``, ``description``, ``resolution_criteria`` or ``labels``."""


def normalise(text: str) -> str:
    """Text as it is matched: NFKC, case folded, accents dropped, punctuation as spaces,
    whitespace collapsed, padded with one space at each end (so a phrase matches whole words
    only)."""
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
    folded = "".join(ch for ch in folded if not unicodedata.combining(ch))
    return " " + " ".join(re.sub(r"[\W_]+", " ", folded).split()) + " "


def _distinctive(label: str) -> bool:
    norm = normalise(label).strip()
    return (
        len(norm) >= MIN_ANSWER_CHARS and any(ch.isalpha() for ch in norm) and norm not in _GENERIC
    )


def _fields(event: Event) -> dict[str, str]:
    return {
        "title": normalise(event.title),
        "description": normalise(event.description),
        "resolution_criteria": normalise(event.resolution_criteria),
        "labels": normalise(" | ".join(event.labels)),
    }


def sibling_answers(dataset: Dataset) -> tuple[SiblingAnswer, ...]:
    """Every (step, sibling) where the text shown at the step (``Dataset.event_at``) names the
    answer of another event of ``dataset`` that resolved at or after the step's cutoff."""
    answers: list[tuple[str, str, str, tuple[str, ...], UtcDatetime]] = []
    for ev in dataset.events:
        res = dataset.resolutions.get(ev.id)
        if ev.kind != "multi" or res is None or not _distinctive(res.label):
            continue
        others = tuple(normalise(x) for x in ev.labels if x != res.label and _distinctive(x))
        answers.append((ev.id, res.label, normalise(res.label), others, res.resolved_at))
    if not answers:
        return ()
    found: list[SiblingAnswer] = []
    seen: dict[tuple[str, str, str, str], list[tuple[str, str, str, UtcDatetime]]] = {}
    for step in dataset.steps:
        shown = dataset.event_at(step.event_id, step.cutoff)
        key = (shown.id, shown.title, shown.description, shown.resolution_criteria)
        if key not in seen:  # each distinct text is matched once
            fields = _fields(shown)
            whole = " ".join(fields.values())
            hits = []
            for sid, label, phrase, others, resolved_at in answers:
                if sid == shown.id or any(o in whole for o in others):
                    continue
                where = next((name for name, text in fields.items() if phrase in text), None)
                if where is not None:
                    hits.append((sid, label, where, resolved_at))
            seen[key] = hits
        for sid, label, where, resolved_at in seen[key]:
            if not is_visible(resolved_at, step.cutoff):  # the sibling was still open
                found.append(
                    SiblingAnswer(
                        event_id=step.event_id,
                        step_index=step.step_index,
                        cutoff=step.cutoff,
                        sibling_id=sid,
                        answer=label,
                        sibling_resolved_at=resolved_at,
                        field=where,
                    )
                )
    return tuple(found)
