"""The world's built-in forecast schedule: a few evenly spaced midnights per event."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from pastcast.records import Event, Resolution, StepSpec

__all__ = ["default_steps"]

_DAY = timedelta(days=1)


def _ceil_midnight(t: datetime) -> datetime:
    floor = datetime.combine(t.date(), time(0), tzinfo=UTC)
    return floor if floor == t else floor + _DAY


def default_steps(
    event: Event, resolution: Resolution, n_steps: int | None = None
) -> tuple[StepSpec, ...]:
    """Cutoffs at 00:00 UTC, evenly spaced from one day after the opening to the last midnight
    strictly before the resolution.

    ``n_steps`` defaults to 3, 4 or 5 by the length of the forecastable window (under 30 days,
    under 75 days, longer). Fewer steps are returned when the window has fewer midnights.
    """
    first = _ceil_midnight(event.open_time + _DAY)
    last = _ceil_midnight(resolution.resolved_at) - _DAY
    if last < first:
        return ()
    span = (last - first).days
    if n_steps is None:
        n_steps = 3 if span < 30 else 4 if span < 75 else 5
    n = max(1, min(n_steps, span + 1))
    offsets = sorted({round(i * span / (n - 1)) for i in range(n)} if n > 1 else {span})
    return tuple(
        StepSpec(event_id=event.id, step_index=i, cutoff=first + timedelta(days=d))
        for i, d in enumerate(offsets)
    )
