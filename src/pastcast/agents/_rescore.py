"""Re-reading logged forecasts under the other label matching (Forecast-Dojo appendix B.7's
sensitivity check), from the raw text run logs keep: nothing is re-run."""

from __future__ import annotations

from collections.abc import Iterable

from pastcast.agents._answer import reparse_forecast
from pastcast.runlog import StepRecord

__all__ = ["normalize_step_labels"]


def normalize_step_labels(steps: Iterable[StepRecord]) -> tuple[StepRecord, ...]:
    """The steps with each forecast read again with typographic label normalization (case,
    curly quotes, whitespace); scores are recomputed from forecasts and gradings as always."""
    out = []
    for step in steps:
        forecast = reparse_forecast(step.forecast, step.grading.labels, normalize_typography=True)
        out.append(
            step if forecast is step.forecast else step.model_copy(update={"forecast": forecast})
        )
    return tuple(out)
