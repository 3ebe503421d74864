"""Per-forecast multiclass scores (Forecast-Dojo, Appendix B.3-B.4).

A report is cleaned the same way for every score: non-finite and negative entries become 0 and
the remaining positive mass is renormalised. Labels are matched exactly. Scores are taken over
the union of the reported labels and the truth label, so an unreported truth gets probability 0
and an unsupported reported label keeps its mass (and its penalty).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Literal

from pastcast.probabilities import scaled
from pastcast.runlog import Grading

Fallback = Literal["uniform", "worst"]

LOG_FLOOR = 1e-3
"""Probability floor for log loss and information-alpha (epsilon = 10^-3 in the paper)."""

TIE_TOLERANCE = 1e-12
"""Probabilities within this of the maximum count as tied (guards against rounding noise)."""

_WRONG = "\x00wrong"  # a label that can never be the truth, for the worst-case fallback


def normalize(probs: Mapping[str, float]) -> dict[str, float] | None:
    """Clip negative and non-finite entries to 0 and renormalise (``scaled``: finite values of
    any size, without overflow); None if no positive mass."""
    return scaled({k: (v if math.isfinite(v) and v > 0 else 0.0) for k, v in probs.items()})


def uniform(labels: Iterable[str]) -> dict[str, float]:
    """The uniform distribution over ``labels`` (duplicates counted once)."""
    unique = list(dict.fromkeys(labels))
    if not unique:
        raise ValueError("uniform: no labels")
    return {k: 1.0 / len(unique) for k in unique}


def _usable(probs: Mapping[str, float], where: str) -> dict[str, float]:
    p = normalize(probs)
    if p is None:
        raise ValueError(f"{where}: forecast has no positive finite probability mass")
    return p


def brier(probs: Mapping[str, float], truth: str) -> float:
    """Multiclass Brier score on the [0, 2] scale: sum over labels of (p_c - 1{c = truth})^2."""
    p = _usable(probs, "brier")
    sq = [(v - 1.0) ** 2 if k == truth else v * v for k, v in p.items()]
    if truth not in p:
        sq.append(1.0)
    return math.fsum(sq)


def accuracy(probs: Mapping[str, float], truth: str) -> float:
    """Fractional-tie accuracy: 1{truth in argmax set} / |argmax set|."""
    p = _usable(probs, "accuracy")
    top = max(p.values())
    tied = [k for k, v in p.items() if v >= top - TIE_TOLERANCE]
    return (1.0 / len(tied)) if truth in tied else 0.0


def log_loss(probs: Mapping[str, float], truth: str, floor: float = LOG_FLOOR) -> float:
    """Natural-log loss of the truth label, with the probability floored at ``floor``."""
    p = _usable(probs, "log_loss")
    return -math.log(max(p.get(truth, 0.0), floor))


def info_alpha(p_truth: float, market_truth: float, eps: float = LOG_FLOOR) -> float:
    """Information-alpha: log max(p, eps) - log max(q, eps); positive favours the forecaster."""
    return math.log(max(p_truth, eps)) - math.log(max(market_truth, eps))


def fallback_probs(grading: Grading, fallback: Fallback) -> dict[str, float]:
    """What an unusable forecast is scored as: uniform over the grading's labels and the truth,
    or all mass on a wrong label (``worst``)."""
    if fallback == "uniform":
        labels = (
            grading.labels if grading.truth in grading.labels else (*grading.labels, grading.truth)
        )
        return uniform(labels)
    if fallback == "worst":
        wrong = next((lab for lab in grading.labels if lab != grading.truth), _WRONG)
        return {wrong: 1.0}
    raise ValueError(f"unknown fallback {fallback!r} (expected 'uniform' or 'worst')")
