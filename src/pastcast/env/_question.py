"""What an agent is told about an event: built from ``Event`` alone, never from a resolution."""

from __future__ import annotations

from datetime import datetime

from pastcast.records import Event, EventKind, Record, UtcDatetime


class QuestionView(Record):
    """The agent-visible question at a forecast step."""

    event_id: str
    title: str
    description: str
    resolution_criteria: str
    kind: EventKind
    labels: tuple[str, ...]
    category: str
    open_time: UtcDatetime
    close_time: UtcDatetime
    cutoff: UtcDatetime
    step_index: int

    def render(self) -> str:
        """Plain-text rendering used in prompts."""
        options = "\n".join(f"- {label}" for label in self.labels)
        return (
            f"Question: {self.title}\n"
            f"Description: {self.description}\n"
            f"Resolution criteria: {self.resolution_criteria}\n"
            f"Outcomes (mutually exclusive):\n{options}\n"
            f"Market opened: {self.open_time:%Y-%m-%d}; "
            f"scheduled close: {self.close_time:%Y-%m-%d}\n"
            f"Today is {self.cutoff:%Y-%m-%d %H:%M} UTC. You only know what was public before "
            "this instant."
        )


_FROM_EVENT = set(QuestionView.model_fields) - {"event_id", "cutoff", "step_index"}


def question_view(event: Event, cutoff: datetime, step_index: int) -> QuestionView:
    """The view of ``event`` at ``cutoff``: ``event`` is the question as a step at ``cutoff``
    is shown it (``Dataset.event_at`` or ``Dataset.screen_at``, the one rule for texts)."""
    shown = event.model_dump(include=_FROM_EVENT)
    return QuestionView(event_id=event.id, cutoff=cutoff, step_index=step_index, **shown)
