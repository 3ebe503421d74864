"""The world's built-in forecast schedule: a few evenly spaced midnights per event.

Non-anticipating: the grid is laid over the *scheduled* window (opening to close, both part of
the question), and a grid point at or after the resolution is dropped. An earlier version
spaced the grid up to the resolution instead, so that where an event resolved early (which, in
the world, only a Yes event does) the spacing of its steps gave the outcome away; ``pastcast
audit construction`` measured it (docs/audits.md).
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from pastcast.cutoff import step_precedes_resolution
from pastcast.records import Event, Resolution, StepSpec

_DAY = timedelta(days=1)


def _ceil_midnight(t: datetime) -> datetime:
    floor = datetime.combine(t.date(), time(0), tzinfo=UTC)
    return floor if floor == t else floor + _DAY


def default_steps(
    event: Event, resolution: Resolution, n_steps: int | None = None
) -> tuple[StepSpec, ...]:
    """Cutoffs at 00:00 UTC, evenly spaced from one day after the opening to the last midnight
    strictly before the scheduled close, keeping those strictly before the resolution.

    ``n_steps`` defaults to 3, 4 or 5 by the length of the scheduled window (under 30 days,
    under 75 days, longer). Fewer steps are returned when the window has fewer midnights, or
    when the event resolved before the later ones.
    """
    first = _ceil_midnight(event.open_time + _DAY)
    last = _ceil_midnight(event.close_time) - _DAY
    if last < first:
        return ()
    span = (last - first).days
    if n_steps is None:
        n_steps = 3 if span < 30 else 4 if span < 75 else 5
    n = max(1, min(n_steps, span + 1))
    offsets = sorted({round(i * span / (n - 1)) for i in range(n)} if n > 1 else {span})
    cutoffs = [first + timedelta(days=d) for d in offsets]
    kept = [c for c in cutoffs if step_precedes_resolution(c, resolution.resolved_at)]
    return tuple(StepSpec(event_id=event.id, step_index=i, cutoff=c) for i, c in enumerate(kept))
