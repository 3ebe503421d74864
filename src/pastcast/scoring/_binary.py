"""Binary-market metrics (Foresight Arena sections 3.3-3.5).

Binary Brier here is the [0, 1]-scale ``(p - x)^2`` used by Foresight Arena, i.e. half the
multiclass [0, 2]-scale score of ``brier`` for a two-outcome market.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

Floats = NDArray[np.float64]


def _prob_array(p: ArrayLike, name: str) -> Floats:
    a = np.asarray(p, dtype=np.float64)
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence of probabilities, got shape {a.shape}")
    if a.size and not (np.all(np.isfinite(a)) and a.min() >= 0.0 and a.max() <= 1.0):
        raise ValueError(f"{name}: probabilities must be finite and within [0, 1]")
    return a


def _outcomes(x: ArrayLike, n: int, name: str = "x") -> Floats:
    a = np.asarray(x)
    if a.shape != (n,):
        raise ValueError(f"{name}: expected {n} outcomes, got shape {a.shape}")
    if a.size and not np.all((a == 0) | (a == 1)):
        raise ValueError(f"{name}: outcomes must be 0 or 1")
    return a.astype(np.float64)


def binary_brier(p: Floats, x: Floats) -> Floats:
    """Elementwise binary Brier ``(p - x)^2`` on the [0, 1] scale: the one vectorised form,
    equal to half of ``brier({"Yes": p, "No": 1 - p}, truth)`` (tested)."""
    return np.square(p - x)


def alpha_score(
    p: Sequence[float] | ArrayLike, b: Sequence[float] | ArrayLike, x: Sequence[int] | ArrayLike
) -> float:
    """Mean over resolved binary markets of (b - x)^2 - (p - x)^2 (positive beats the market)."""
    pa, ba = _prob_array(p, "p"), _prob_array(b, "b")
    if pa.shape != ba.shape:
        raise ValueError(f"alpha_score: p has {pa.size} forecasts but b has {ba.size}")
    if pa.size == 0:
        raise ValueError("alpha_score: no markets")
    xa = _outcomes(x, pa.size)
    return float(np.mean(binary_brier(ba, xa) - binary_brier(pa, xa)))


def bin_index(p: Floats, bins: int) -> NDArray[np.intp]:
    """Equal-width bins on [0, 1], closed on the left; p = 1 falls in the last bin."""
    if bins < 1:
        raise ValueError("bins must be at least 1")
    edges = np.linspace(0.0, 1.0, bins + 1)
    return np.searchsorted(edges[1:-1], p, side="right")


def ece(p: ArrayLike, y: ArrayLike, bins: int = 10) -> float:
    """Expected calibration error: sum_k (n_k / N) |mean p_k - mean y_k| over non-empty bins.

    For a multiclass top-label ECE pass the top probability as ``p`` and 1{top label correct}
    as ``y``.
    """
    pa = _prob_array(p, "p")
    if pa.size == 0:
        raise ValueError("ece: no forecasts")
    ya = _outcomes(y, pa.size, "y")
    k = bin_index(pa, bins)
    n = np.bincount(k, minlength=bins).astype(np.float64)
    gap = np.abs(np.bincount(k, pa, bins) - np.bincount(k, ya, bins))  # n_k |p_k - o_k|
    return float(gap.sum() / n.sum())


@dataclass(frozen=True)
class Murphy:
    """Brier = uncertainty + reliability - resolution + residual (all on the [0, 1] scale)."""

    brier: float
    uncertainty: float
    reliability: float
    resolution: float
    residual: float
    """Binning residual: zero when every forecast equals its bin mean."""
    n: int
    bins: int


def murphy(p: ArrayLike, y: ArrayLike, bins: int = 10) -> Murphy:
    """Murphy decomposition of the binary Brier score with ``bins`` equal-width bins.

    Empty bins are skipped. The residual is reported exactly (Brier minus UNC + REL - RES);
    it equals mean((p - p_k)^2 - 2 (p - p_k)(y - o_k)) and vanishes for forecasts at bin means.
    """
    pa = _prob_array(p, "p")
    if pa.size == 0:
        raise ValueError("murphy: no forecasts")
    ya = _outcomes(y, pa.size, "y")
    k = bin_index(pa, bins)
    n_k = np.bincount(k, minlength=bins).astype(np.float64)
    nz = n_k > 0
    p_k = np.bincount(k, pa, bins)[nz] / n_k[nz]
    o_k = np.bincount(k, ya, bins)[nz] / n_k[nz]
    n = float(pa.size)
    o = float(ya.mean())
    score = float(np.mean(binary_brier(pa, ya)))
    unc = o * (1.0 - o)
    rel = float(np.sum(n_k[nz] * (p_k - o_k) ** 2) / n)
    res = float(np.sum(n_k[nz] * (o_k - o) ** 2) / n)
    return Murphy(score, unc, rel, res, score - (unc + rel - res), int(n), bins)


@dataclass(frozen=True)
class AlphaAnatomy:
    """Foresight Arena Corollary 1: alpha = resolution gain + reliability gap (+ residual)."""

    alpha: float
    resolution_gain: float
    """RES_agent - RES_market."""
    reliability_gap: float
    """REL_market - REL_agent."""
    residual: float
    """Residual_market - residual_agent (binning error); zero for forecasts at bin means."""
    agent: Murphy
    market: Murphy


def alpha_anatomy(p: ArrayLike, b: ArrayLike, x: ArrayLike, bins: int = 10) -> AlphaAnatomy:
    """Decompose the alpha of forecasts ``p`` over market prices ``b`` on outcomes ``x``."""
    ma, mb = murphy(p, x, bins), murphy(b, x, bins)
    return AlphaAnatomy(
        alpha=alpha_score(p, b, x),
        resolution_gain=ma.resolution - mb.resolution,
        reliability_gap=mb.reliability - ma.reliability,
        residual=mb.residual - ma.residual,
        agent=ma,
        market=mb,
    )
