"""The audit of what a dataset's question texts tell: notes made after a step's cutoff (left
out of a snapshot, a later text shortened before them, or the step dropped) and sibling answers
(a step's text naming the resolved answer of another event still open at its cutoff).

Computed with the resolutions, for the user: nothing here reaches an agent.
"""

from __future__ import annotations

from pastcast.dataset import Dataset, find_edits
from pastcast.markets import SiblingAnswer, sibling_answers
from pastcast.records import Record

SHOWN_PAIRS = 20
"""How many sibling pairs ``findings`` names (all are in the record)."""


class TextAudit(Record):
    """Question-text leakage channels of one dataset, step by step."""

    dataset_id: str
    steps: int
    events_with_dated_edits: int
    """Events whose text (any snapshot) carries at least one dated edit."""
    later_text_steps: int = 0
    """Steps shown a text taken after their cutoff (no snapshot published before it)."""
    shortened_steps: int = 0
    """Steps shown a text taken after their cutoff, shortened before its first note not dated
    before the cutoff."""
    dropped_steps: tuple[str, ...] = ()
    """Steps (``event#index: reason``) whose question cannot be shown as of their cutoff."""
    sibling_steps: int = 0
    """Steps whose text names the answer of another event still open at their cutoff."""
    sibling_answers: tuple[SiblingAnswer, ...] = ()

    @property
    def sibling_rate(self) -> float | None:
        return self.sibling_steps / self.steps if self.steps else None

    def findings(self) -> list[str]:
        out = [f"step {s}" for s in self.dropped_steps]
        out += [
            f"step {p.event_id}#{p.step_index} ({p.field}) names {p.answer!r}, the answer of "
            f"{p.sibling_id} (resolved {p.sibling_resolved_at:%Y-%m-%d}, after the cutoff "
            f"{p.cutoff:%Y-%m-%d})"
            for p in self.sibling_answers[:SHOWN_PAIRS]
        ]
        if len(self.sibling_answers) > SHOWN_PAIRS:
            out.append(f"... and {len(self.sibling_answers) - SHOWN_PAIRS} more sibling pairs")
        return out


def audit_texts(dataset: Dataset) -> TextAudit:
    """Edits and sibling answers of every step of ``dataset``."""
    later = shortened = 0
    dropped: list[str] = []
    for step in dataset.steps:
        screen = dataset.screen_at(step.event_id, step.cutoff)[1]
        later += screen.later
        shortened += screen.shortened and not screen.dropped
        if screen.dropped:
            dropped.append(f"{step.event_id}#{step.step_index}: {screen.dropped}")
    with_dated: set[str] = set()
    for ev in dataset.events:
        texts = [(ev.title, ev.description, ev.resolution_criteria)] + [
            (t.title, t.description, t.resolution_criteria) for t in dataset.texts.get(ev.id, ())
        ]
        if any(e.dated for fields in texts for text in fields for e in find_edits(text)):
            with_dated.add(ev.id)
    pairs = sibling_answers(dataset)
    return TextAudit(
        dataset_id=dataset.id,
        steps=len(dataset.steps),
        events_with_dated_edits=len(with_dated),
        later_text_steps=later,
        shortened_steps=shortened,
        dropped_steps=tuple(dropped),
        sibling_steps=len({(p.event_id, p.step_index) for p in pairs}),
        sibling_answers=pairs,
    )
