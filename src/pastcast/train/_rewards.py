"""Outcome feedback of a forecast as rewards (higher is better): each score a step record keeps
(``pastcast.runlog.LOGGED_SCORES``) turned by its metric's direction, under its reward name; an
unusable forecast is scored by the fallback and also gets the format penalty."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pastcast.records import Forecast, Record
from pastcast.runlog import LOGGED_SCORES, Grading
from pastcast.scoring import Fallback, metric, score_forecast

RewardMetric = Literal["neg_brier", "log_score", "accuracy", "info_alpha"]


class StepRewards(Record):
    """The rewards of one forecast."""

    neg_brier: float
    log_score: float
    accuracy: float
    info_alpha: float | None
    """Information-alpha against the market's belief at the cutoff (None without one)."""
    format_penalty: float = Field(le=0.0)
    """Minus the penalty when the forecast was unusable, else 0."""
    fallback_used: bool

    def value(self, metric: RewardMetric) -> float | None:
        """The score ``metric`` (None for information-alpha without a market)."""
        value: float | None = getattr(self, metric)
        return value

    def reward(self, metric: RewardMetric) -> float | None:
        """The score ``metric`` plus the format penalty (None where the score is None)."""
        v = self.value(metric)
        return None if v is None else v + self.format_penalty


def step_rewards(
    forecast: Forecast,
    grading: Grading,
    *,
    fallback: Fallback = "uniform",
    format_penalty: float = 1.0,
) -> StepRewards:
    """The rewards of ``forecast`` against the step's grading."""
    if format_penalty < 0:
        raise ValueError(f"format_penalty must be at least 0, not {format_penalty}")
    s = score_forecast(forecast, grading, fallback)
    logged = {metric(name): getattr(s, name) for name in LOGGED_SCORES}
    return StepRewards.model_validate(
        {
            **{m.reward_name: None if v is None else m.as_reward(v) for m, v in logged.items()},
            "format_penalty": -format_penalty if s.fallback_used else 0.0,
            "fallback_used": s.fallback_used,
        }
    )
