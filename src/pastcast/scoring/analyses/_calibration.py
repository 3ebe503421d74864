"""Calibration of two-outcome forecasts per group: ECE, the Murphy decomposition, the anatomy of
alpha against the market, and reliability-diagram bins with event-bootstrap bands (Foresight
Arena sections 3.3-3.5).

A two-outcome forecast is read as its probability of the first offered label ("Yes" of a binary
market), so forecasts of different events are calibrated on the same side. Unusable forecasts
count by the chosen convention, like every other score (uniform: 1/2; worst: all mass on the
wrong label; exclude: left out). Multi-option forecasts are left out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pastcast.scoring._aggregate import group_rows
from pastcast.scoring._binary import AlphaAnatomy, Murphy, alpha_anatomy, bin_index, ece, murphy
from pastcast.scoring._bootstrap import cluster_bootstrap
from pastcast.scoring._table import Convention, ScoreTable

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]


@dataclass(frozen=True)
class BinaryForecasts:
    """The two-outcome rows of a score table, on their first label."""

    rows: Ints
    p: Floats
    """The forecast's probability of the first label (after the convention)."""
    q: Floats
    """The market's probability of the first label (NaN where unavailable)."""
    x: Floats
    """1 when the first label is the truth."""


def binary_forecasts(table: ScoreTable, fallback: Convention = "uniform") -> BinaryForecasts:
    """Two-outcome forecasts (scored under ``fallback``) as P(first label), market and outcome."""
    p_truth = table.truth_prob(fallback)
    rows = np.flatnonzero((table.n_labels == 2) & np.isfinite(p_truth)).astype(np.int64)
    first = table.truth_first[rows]
    p, q = (
        np.clip(np.where(first, v, 1.0 - v), 0.0, 1.0)
        for v in (p_truth[rows], table.market_truth[rows])
    )
    return BinaryForecasts(rows, p, q, first.astype(np.float64))


@dataclass(frozen=True)
class ReliabilityBin:
    """One equal-width bin of a reliability diagram (closed on the left; 1 in the last bin)."""

    lo: float
    hi: float
    n: int
    forecast: float
    """Mean forecast in the bin (NaN when empty)."""
    observed: float
    """Observed frequency of the first label in the bin (NaN when empty)."""
    low: float
    high: float
    """95% percentile band of the observed frequency over events resampled with replacement."""


@dataclass(frozen=True)
class Calibration:
    group: tuple[str, ...]
    n: int
    """Two-outcome forecasts scored."""
    ece: float
    murphy: Murphy | None
    n_market: int
    """Forecasts with a market price, over which ``anatomy`` is taken."""
    anatomy: AlphaAnatomy | None
    bins: tuple[ReliabilityBin, ...]


def _reliability(
    p: Floats, x: Floats, event: Ints, bins: int, draws: int, rng: np.random.Generator
) -> tuple[ReliabilityBin, ...]:
    k = bin_index(p, bins)
    n = np.bincount(k, minlength=bins)
    sum_p = np.bincount(k, p, bins)
    sum_x = np.bincount(k, x, bins)
    # one column per bin holding the outcomes of its forecasts: all bins share the resampled
    # events, so the bands are those of one bootstrap of the whole diagram
    cols = np.full((p.size, bins), np.nan)
    cols[np.arange(p.size), k] = x
    low, high = cluster_bootstrap(event, cols, draws, rng)
    edges = np.linspace(0.0, 1.0, bins + 1)
    out = []
    for j in range(bins):
        empty = n[j] == 0
        out.append(
            ReliabilityBin(
                lo=float(edges[j]),
                hi=float(edges[j + 1]),
                n=int(n[j]),
                forecast=math.nan if empty else float(sum_p[j] / n[j]),
                observed=math.nan if empty else float(sum_x[j] / n[j]),
                low=float(low[j]),
                high=float(high[j]),
            )
        )
    return tuple(out)


def calibration(
    table: ScoreTable,
    by: Sequence[str] = ("agent", "setting"),
    fallback: Convention = "uniform",
    bins: int = 10,
    bootstrap: int = 1000,
    seed: int = 0,
) -> tuple[Calibration, ...]:
    """Per group of ``by``: ECE and Murphy decomposition of its two-outcome forecasts, the
    anatomy of alpha over those with a market price, and reliability bins with bands.

    Every group of the table is listed (sorted by names); one without two-outcome forecasts has
    ``n == 0``, NaN ECE and no decomposition.
    """
    bf = binary_forecasts(table, fallback)
    pos = np.full(len(table), -1, dtype=np.int64)
    pos[bf.rows] = np.arange(bf.rows.size)
    event = table.codes("event")
    rng = np.random.default_rng(seed)
    out = []
    for names, rows in group_rows(table, by):
        sel = pos[rows]
        sel = sel[sel >= 0]
        if sel.size == 0:
            out.append(Calibration(names, 0, math.nan, None, 0, None, ()))
            continue
        p, q, x = bf.p[sel], bf.q[sel], bf.x[sel]
        has_q = np.isfinite(q)
        anatomy = alpha_anatomy(p[has_q], q[has_q], x[has_q], bins) if has_q.any() else None
        out.append(
            Calibration(
                group=names,
                n=int(sel.size),
                ece=ece(p, x, bins),
                murphy=murphy(p, x, bins),
                n_market=int(has_q.sum()),
                anatomy=anatomy,
                bins=_reliability(p, x, event[bf.rows[sel]], bins, bootstrap, rng),
            )
        )
    return tuple(out)
