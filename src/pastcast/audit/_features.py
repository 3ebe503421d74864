"""What an agent sees of how a benchmark was built, as numbers: one row per forecast step.

An episode shows the question (open and scheduled close times), the cutoff and the step index
(``pastcast.env.QuestionView``); a memory-on agent also knows its previous step's date from the
notebook it wrote then. The number of steps of an event is never shown. Every feature below is a
function of those alone, so a classifier fitted on them learns only what the construction lets
an agent infer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta

import numpy as np
from numpy.typing import NDArray

from pastcast.records import Event, StepSpec

FEATURES: tuple[str, ...] = (
    "step_index",
    "elapsed_fraction",
    "elapsed_per_step",
    "log_days_since_open",
    "log_days_to_close",
    "log_lifetime_days",
    "log_days_since_previous_step",
)
"""Columns of ``step_features``: the step index; the fraction of the open-to-close span elapsed
at the cutoff, and that fraction per step so far (the implied spacing); log(1 + days) since the
opening, to the scheduled close, of the whole span, and since the previous step (or the
opening, at the first step)."""

_DAY = timedelta(days=1)


def _days(delta: timedelta) -> float:
    return max(0.0, delta / _DAY)


def step_features(event: Event, steps: Sequence[StepSpec]) -> NDArray[np.float64]:
    """One row of ``FEATURES`` per step of ``event`` (in step order)."""
    ordered = sorted(steps, key=lambda s: s.cutoff)
    lifetime = max(_days(event.close_time - event.open_time), 1.0)
    rows = []
    previous: datetime = event.open_time
    for i, step in enumerate(ordered):
        since_open = _days(step.cutoff - event.open_time)
        elapsed = since_open / lifetime
        rows.append(
            [
                float(i),
                elapsed,
                elapsed / (i + 1),
                math.log1p(since_open),
                math.log1p(_days(event.close_time - step.cutoff)),
                math.log1p(lifetime),
                math.log1p(_days(step.cutoff - previous)),
            ]
        )
        previous = step.cutoff
    return np.array(rows, dtype=np.float64).reshape(-1, len(FEATURES))
