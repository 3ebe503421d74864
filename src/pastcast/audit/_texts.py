"""The audit of what a dataset's question texts tell: edits made after a step's cutoff (left out
of what the step shows, or dropping it where they cannot be dated) and sibling answers (a step's
text naming the resolved answer of another event still open at its cutoff).

Computed with the resolutions, for the user: nothing here reaches an agent.
"""

from __future__ import annotations

from pastcast.dataset import Dataset, find_edits
from pastcast.markets import SiblingAnswer, sibling_answers
from pastcast.records import Record

__all__ = ["TextAudit", "audit_texts"]

SHOWN_PAIRS = 20
"""How many sibling pairs ``findings`` names (all are in the record)."""


class TextAudit(Record):
    """Question-text leakage channels of one dataset, step by step."""

    dataset_id: str
    steps: int
    events_with_dated_edits: int
    """Events whose text (any snapshot) carries at least one dated edit."""
    edited_steps: int
    """Steps shown their text without dated edits not yet public at the cutoff."""
    edits_left_out: int
    """Those edits, summed over the steps."""
    undatable_edit_steps: tuple[str, ...] = ()
    """Steps (``event#index``) shown a text taken after their cutoff with an undated edit."""
    sibling_steps: int = 0
    """Steps whose text names the answer of another event still open at their cutoff."""
    sibling_answers: tuple[SiblingAnswer, ...] = ()

    @property
    def sibling_rate(self) -> float | None:
        return self.sibling_steps / self.steps if self.steps else None

    def findings(self) -> list[str]:
        out = [
            f"step {s}: shown a text taken after its cutoff with an undated edit"
            for s in self.undatable_edit_steps
        ]
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
    edited = left_out = 0
    with_dated: set[str] = set()
    for step in dataset.steps:
        found = dataset.edits_at(step.event_id, step.cutoff)
        if found.removed:
            edited += 1
            left_out += len(found.removed)
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
        edited_steps=edited,
        edits_left_out=left_out,
        undatable_edit_steps=tuple(
            f"{s.event_id}#{s.step_index}" for s in dataset.undatable_edit_steps()
        ),
        sibling_steps=len({(p.event_id, p.step_index) for p in pairs}),
        sibling_answers=pairs,
    )
