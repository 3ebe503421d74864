"""Builders for run-log records used by the scoring tests (imported as a plain module)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from pastcast.records import EpisodeRecord, Forecast
from pastcast.runlog import Grading, Scores, StepRecord

MakeStep = Callable[..., StepRecord]


def make_step(
    probs: dict[str, float],
    truth: str = "Yes",
    labels: tuple[str, ...] = ("Yes", "No"),
    market: dict[str, float] | None = None,
    usable: bool = True,
    episode: EpisodeRecord | None = None,
    **fields: Any,
) -> StepRecord:
    base: dict[str, Any] = {
        "run_id": "run",
        "agent": "m",
        "event_id": "e1",
        "step_index": 0,
        "cutoff": datetime(2025, 1, 1, tzinfo=UTC),
    }
    base.update(fields)
    return StepRecord(
        forecast=Forecast(probs=probs, usable=usable),
        episode=episode if episode is not None else EpisodeRecord(),
        grading=Grading(truth=truth, labels=labels, market_probs=market),
        # deliberately wrong: scoring must never trust stored scores
        scores=Scores(brier=9.0, accuracy=9.0, log_loss=9.0),
        **base,
    )
