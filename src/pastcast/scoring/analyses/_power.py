"""Sampling behaviour of alpha (Foresight Arena Proposition 2) and sample size (Proposition 3)."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike


def alpha_variance(b: float, p: float, q: float) -> float:
    """Var((b - X)^2 - (p - X)^2) for X ~ Bernoulli(q): 4 q (1 - q) (b - p)^2."""
    return 4.0 * q * (1.0 - q) * (b - p) ** 2


def alpha_standard_error(b: ArrayLike, p: ArrayLike, q: ArrayLike) -> float:
    """SE of mean alpha over independent markets: sqrt(sum 4 q_i (1 - q_i)(b_i - p_i)^2) / n."""
    ba, pa, qa = (np.asarray(v, dtype=np.float64) for v in (b, p, q))
    n = ba.size
    if n == 0 or pa.size != n or qa.size != n:
        raise ValueError("alpha_standard_error: b, p and q must be non-empty and of equal length")
    return float(math.sqrt(np.sum(4.0 * qa * (1.0 - qa) * (ba - pa) ** 2)) / n)


def power_n(
    alpha: float,
    q: float = 0.5,
    boldness: float = 0.15,
    significance: float = 0.05,
    power: float = 0.8,
    *,
    z_alpha: float | None = None,
    z_power: float | None = None,
) -> int:
    """Predictions needed to detect a true edge ``alpha`` with a one-sided z-test.

    n = ceil((z_{1-significance} + z_power)^2 * 4 q (1 - q) boldness^2 / alpha^2). Quantiles are
    exact (scipy) unless given; the paper's rounded 1.645 and 0.842 reproduce its Table 1.
    """
    given = {"alpha": alpha, "q": q, "boldness": boldness, "z_alpha": z_alpha, "z_power": z_power}
    for name, value in given.items():
        if value is not None and not math.isfinite(value):
            raise ValueError(f"power_n: {name} must be a finite number, got {value}")
    if not alpha > 0:
        raise ValueError("power_n: alpha must be positive")
    if alpha > 1 or boldness > 1:  # a Brier edge and a mean |b - p| are at most 1
        raise ValueError(f"power_n: alpha and boldness are at most 1, got {alpha}, {boldness}")
    if not 0 < q < 1:
        raise ValueError("power_n: q must be in (0, 1)")
    if not boldness > 0:
        raise ValueError("power_n: boldness must be positive")
    if z_alpha is None or z_power is None:
        if not (0 < significance < 1 and 0 < power < 1):
            raise ValueError("power_n: significance and power must be in (0, 1)")
        from scipy.stats import norm

        z_alpha = float(norm.ppf(1.0 - significance)) if z_alpha is None else z_alpha
        z_power = float(norm.ppf(power)) if z_power is None else z_power
    try:
        n = (z_alpha + z_power) ** 2 * 4.0 * q * (1.0 - q) * boldness**2 / alpha**2
    except (OverflowError, ZeroDivisionError):  # alpha**2 beyond a float, or below one
        n = math.inf
    if not math.isfinite(n):  # an edge too small (or a boldness too large) for any sample
        raise ValueError(f"power_n: no finite number of predictions detects alpha {alpha}")
    return max(1, math.ceil(n - 1e-9))  # guard against rounding just above an integer


def power_rounds(n: int, per_round: int = 7) -> int:
    """Rounds of ``per_round`` markets needed for ``n`` predictions: ceil(n / per_round)."""
    if per_round < 1:
        raise ValueError("power_rounds: per_round must be at least 1")
    return -(-n // per_round)
