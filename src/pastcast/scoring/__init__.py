"""Scores and statistics from the papers, recomputable from run logs."""

from pastcast.scoring._binary import (
    AlphaAnatomy,
    Murphy,
    alpha_anatomy,
    alpha_score,
    distance_to_market,
    ece,
    murphy,
)
from pastcast.scoring._multiclass import (
    LOG_FLOOR,
    Fallback,
    accuracy,
    brier,
    info_alpha,
    log_loss,
    market_truth_prob,
    normalize,
    score_forecast,
    score_step,
    uniform,
)
from pastcast.scoring._power import (
    alpha_standard_error,
    alpha_variance,
    power_n,
    power_rounds,
)

__all__ = [
    "LOG_FLOOR",
    "AlphaAnatomy",
    "Fallback",
    "Murphy",
    "accuracy",
    "alpha_anatomy",
    "alpha_score",
    "alpha_standard_error",
    "alpha_variance",
    "brier",
    "distance_to_market",
    "ece",
    "info_alpha",
    "log_loss",
    "market_truth_prob",
    "murphy",
    "normalize",
    "power_n",
    "power_rounds",
    "score_forecast",
    "score_step",
    "uniform",
]
