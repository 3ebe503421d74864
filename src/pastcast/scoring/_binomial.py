"""Intervals for a proportion, and a measured rate corrected for an imperfect classifier.

A rate measured by a judge (a model deciding whether a document leaks) is the *apparent* rate:
the judge misses some positives and flags some negatives. With its sensitivity ``Se`` and
specificity ``Sp`` measured on items of known status, the Rogan-Gladen estimator undoes that:
``p = (apparent + Sp - 1) / (Se + Sp - 1)``, clipped to [0, 1]. It is defined only when the
judge is better than chance (``Se + Sp > 1``); otherwise the judge's verdicts carry no
information about the true rate and no number is given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


def _z(level: float) -> float:
    from scipy.special import ndtri  # scipy is imported when first used: seconds at start-up

    return float(ndtri(0.5 + level / 2.0))


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for ``k`` successes out of ``n`` (``(0, 1)`` when ``n`` is 0)."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    z = _z(level)
    p = k / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) interval for ``k`` successes out of ``n``."""
    if n <= 0:
        return 0.0, 1.0
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    from scipy.special import betaincinv  # the beta quantile, imported when first used

    tail = (1.0 - level) / 2.0
    low = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, tail))
    high = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1.0 - tail))
    return low, high


def rogan_gladen(apparent: float, sensitivity: float, specificity: float) -> float | None:
    """The true rate behind ``apparent`` for a judge of the given sensitivity and specificity,
    clipped to [0, 1]; None when ``Se + Sp <= 1`` (a judge no better than chance)."""
    informative = sensitivity + specificity - 1.0
    if informative <= 1e-12:
        return None
    return min(1.0, max(0.0, (apparent + specificity - 1.0) / informative))


@dataclass(frozen=True)
class CorrectedRate:
    """The Rogan-Gladen estimate (None: the judge is no better than chance) with its interval
    and the share of bootstrap draws in which the judge was no better than chance."""

    estimate: float | None
    low: float
    high: float
    uninformative_draws: float
    apparent: float | None = None
    """The weighted apparent rate, before the correction ..."""
    apparent_low: float = 0.0
    """... and its interval (the same Beta draws of the strata's rates)."""
    apparent_high: float = 1.0


def corrected_rate(
    strata: Sequence[tuple[float, int, int]],
    true_positives: int,
    positives: int,
    true_negatives: int,
    negatives: int,
    *,
    draws: int = 4000,
    seed: int = 0,
    level: float = 0.95,
) -> CorrectedRate:
    """The corrected rate of a stratified sample and its ``level`` interval.

    ``strata``: (weight, flagged, judged) per stratum, weights summing to 1 (a stratum's share
    of the population); the apparent rate is the weighted mean of the strata's rates. The
    judge's sensitivity is ``true_positives / positives`` and its specificity
    ``true_negatives / negatives``.

    The interval propagates the uncertainty of all of them: each draw takes every stratum's
    rate and Se and Sp from the Jeffreys Beta(k + 1/2, n - k + 1/2) distribution of theirs,
    and applies Rogan-Gladen. Resampling counts at their observed rates instead would leave no
    doubt where none is warranted: a stratum with 0 of 12 flagged would always draw 0 (an
    interval of [0, 0] from a few documents), and a judge right on all of 20 known documents
    would always be perfect. A draw in which the
    judge is no better than chance (Se + Sp <= 1) says nothing about the rate: it counts as 0
    for the lower bound and as 1 for the upper bound, so an unreliable judge widens the
    interval towards [0, 1] instead of being dropped. The upper bound is never below that of
    ``apparent / Se``, which holds whatever the specificity (the apparent rate is at least
    Se x the true rate): where fewer documents are flagged than the judge's measured false
    positives predict, Rogan-Gladen clips nearly every draw to 0, and a specificity measured on
    other documents would otherwise make [0, 0] of a handful of unflagged ones."""
    judged = [(w, k, n) for w, k, n in strata if n > 0]
    total = sum(w for w, _, _ in judged)
    apparent = sum(w * k / n for w, k, n in judged) / total if judged and total > 0 else None
    if apparent is None or positives <= 0 or negatives <= 0:
        return CorrectedRate(None, 0.0, 1.0, 1.0, apparent)
    se, sp = true_positives / positives, true_negatives / negatives
    estimate = rogan_gladen(apparent, se, sp)
    rng = np.random.default_rng(seed)
    se_d = rng.beta(true_positives + 0.5, positives - true_positives + 0.5, draws)
    sp_d = rng.beta(true_negatives + 0.5, negatives - true_negatives + 0.5, draws)
    app_d = np.zeros(draws)
    for w, k, n in judged:
        app_d += (w / total) * rng.beta(k + 0.5, n - k + 0.5, draws)
    informative = se_d + sp_d - 1.0
    ok = informative > 1e-12
    with np.errstate(divide="ignore", invalid="ignore"):
        corrected = np.clip((app_d + sp_d - 1.0) / informative, 0.0, 1.0)
    tail = (1.0 - level) / 2.0 * 100.0
    low = float(np.percentile(np.where(ok, corrected, 0.0), tail))
    high = float(np.percentile(np.where(ok, corrected, 1.0), 100.0 - tail))
    without_sp = np.clip(app_d / np.maximum(se_d, 1e-12), 0.0, 1.0)
    high = max(high, float(np.percentile(without_sp, 100.0 - tail)))
    a_low, a_high = np.percentile(app_d, [tail, 100.0 - tail])
    return CorrectedRate(
        estimate, low, high, float(1.0 - ok.mean()), apparent, float(a_low), float(a_high)
    )
