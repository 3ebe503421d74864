"""Scores and statistics from the papers, recomputable from run logs."""

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

__all__ = [
    "LOG_FLOOR",
    "Fallback",
    "accuracy",
    "brier",
    "info_alpha",
    "log_loss",
    "market_truth_prob",
    "normalize",
    "score_forecast",
    "score_step",
    "uniform",
]
