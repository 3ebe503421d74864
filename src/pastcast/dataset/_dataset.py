"""The in-memory benchmark dataset every source is converted into and the runner loads."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime

from pastcast.cutoff import as_utc, is_visible, last_complete_day
from pastcast.dataset._edits import TextScreen, event_as_of
from pastcast.records import DailyBelief, Event, Resolution, StepSpec, TextVersion


@dataclass(frozen=True)
class Dataset:
    """Events with their resolutions, daily market beliefs and scheduled forecast steps.

    ``id`` is a versioned identifier (e.g. ``world-v2:seed=0``) recorded in every run log.
    Resolutions are held here for grading only; ``pastcast.env`` never hands them to an agent.
    ``texts``: published snapshots of a question's text, for sources that republish their
    questions; an event without any is always shown as it is.
    """

    id: str
    events: tuple[Event, ...]
    resolutions: Mapping[str, Resolution]
    beliefs: Mapping[str, tuple[DailyBelief, ...]]
    steps: tuple[StepSpec, ...]
    splits: Mapping[str, str] = field(default_factory=dict)
    texts: Mapping[str, tuple[TextVersion, ...]] = field(default_factory=dict)
    pending: bool = False
    """Live questions, forecast before anything resolved: steps are graded as pending (an empty
    truth) and graded again once the outcome is known."""
    collected_at: datetime | None = None
    """When the data was collected, where the importer knows (``markets.late_closes``)."""
    _by_id: dict[str, Event] = field(init=False, repr=False, compare=False)
    _belief_days: dict[str, list[date]] = field(init=False, repr=False, compare=False)
    _by_time: tuple[tuple[datetime, ...], tuple[Resolution, ...]] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        by_id = {e.id: e for e in self.events}
        if len(by_id) != len(self.events):
            raise ValueError(f"dataset {self.id}: duplicate event ids")
        for step in self.steps:
            if step.event_id not in by_id:
                raise ValueError(f"dataset {self.id}: step for unknown event {step.event_id!r}")
        for eid in self.texts:
            if eid not in by_id:
                raise ValueError(f"dataset {self.id}: text version of unknown event {eid!r}")
        texts = {
            k: tuple(sorted(v, key=lambda t: t.published_at)) for k, v in self.texts.items() if v
        }
        object.__setattr__(self, "texts", texts)
        sorted_beliefs = {k: tuple(sorted(v, key=lambda b: b.day)) for k, v in self.beliefs.items()}
        object.__setattr__(self, "beliefs", sorted_beliefs)
        object.__setattr__(self, "_by_id", by_id)
        object.__setattr__(
            self, "_belief_days", {k: [b.day for b in v] for k, v in sorted_beliefs.items()}
        )
        # Every step asks what resolved before its cutoff: a bisect, not a scan of them all.
        by_time = sorted(self.resolutions.values(), key=lambda r: as_utc(r.resolved_at))
        times = tuple(as_utc(r.resolved_at) for r in by_time)
        object.__setattr__(self, "_by_time", (times, tuple(by_time)))

    def event(self, event_id: str) -> Event:
        try:
            return self._by_id[event_id]
        except KeyError:
            raise KeyError(f"dataset {self.id}: no event {event_id!r}") from None

    def text_at(self, event_id: str, cutoff: datetime) -> TextVersion | None:
        """The latest snapshot of the question's text published before ``cutoff``, if any."""
        visible = [t for t in self.texts.get(event_id, ()) if is_visible(t.published_at, cutoff)]
        return visible[-1] if visible else None

    def _text_at(self, event_id: str, cutoff: datetime) -> Event:
        event = self.event(event_id)
        versions = self.texts.get(event_id)
        if not versions:
            return event
        text = self.text_at(event_id, cutoff) or versions[0]
        shown = text.model_dump(include={"title", "description", "resolution_criteria"})
        return event.model_copy(update=shown)

    def screen_at(self, event_id: str, cutoff: datetime) -> tuple[Event, TextScreen]:
        """The event as its question read at ``cutoff``, and what was done to its texts: the
        latest snapshot published before the cutoff; failing that (no snapshot yet, or none at
        all: the event's own text, given by the source after the resolution) the text taken
        later, shown only up to its first note not dated before the cutoff (``_edits``). A live
        dataset's texts are read at the step."""
        later = not self.pending and self.text_at(event_id, cutoff) is None
        return event_as_of(self._text_at(event_id, cutoff), cutoff, later=later)

    def event_at(self, event_id: str, cutoff: datetime) -> Event:
        """The event as its question read at ``cutoff`` (``screen_at``); a step whose question
        cannot be shown as of its cutoff (its title carries a note) is refused."""
        event, screen = self.screen_at(event_id, cutoff)
        if screen.dropped:
            raise ValueError(
                f"dataset {self.id}: event {event_id!r} at {cutoff:%Y-%m-%d %H:%M}: its question "
                f"cannot be shown as of the cutoff ({screen.dropped}); build the dataset again "
                "to drop such steps"
            )
        return event

    def unversioned_steps(self) -> tuple[StepSpec, ...]:
        """In a dataset with text snapshots, the steps with none published before their cutoff
        (an event without any snapshot: every step): they can only be shown a later text."""
        if not self.texts:
            return ()
        return tuple(s for s in self.steps if self.text_at(s.event_id, s.cutoff) is None)

    def steps_of(self, event_id: str) -> tuple[StepSpec, ...]:
        return tuple(
            sorted((s for s in self.steps if s.event_id == event_id), key=lambda s: s.step_index)
        )

    def event_ids_with_steps(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.event_id for s in self.steps))

    def beliefs_before(self, event_id: str, cutoff: datetime) -> tuple[DailyBelief, ...]:
        """Daily beliefs whose whole day ended by ``cutoff`` and before the resolution."""
        days = self._belief_days.get(event_id)
        if not days:
            return ()
        last = last_complete_day(cutoff)
        res = self.resolutions.get(event_id)
        if res is not None:
            last = min(last, last_complete_day(res.resolved_at))
        end = bisect.bisect_right(days, last)
        return self.beliefs[event_id][:end]

    def market_at(self, event_id: str, cutoff: datetime) -> DailyBelief | None:
        """The latest market belief visible at ``cutoff`` (None when there is none)."""
        visible = self.beliefs_before(event_id, cutoff)
        return visible[-1] if visible else None

    def resolved_before(self, cutoff: datetime) -> tuple[Resolution, ...]:
        """Resolutions already public at ``cutoff`` (``is_visible``: strictly before it), in
        the order they resolved."""
        times, resolutions = self._by_time
        return resolutions[: bisect.bisect_left(times, as_utc(cutoff))]

    def with_steps(self, steps: Iterable[StepSpec]) -> Dataset:
        return replace(self, steps=tuple(steps))
