"""Event-clustered percentile bootstrap of means, vectorised over draws, metrics and groups.

Forecasts of one event (its steps, rollouts) are correlated, so whole events are resampled
with replacement and the ratio of resampled sums to resampled counts is the bootstrap mean;
with every event drawn once it equals the plain mean over recorded forecasts.

Each draw is a vector of how often every event was picked; a block of draws times the
per-event sums (one matrix product) gives all bootstrap totals at once. Counts are made in
small blocks so the index and count arrays stay in cache, then multiplied in larger blocks so
the product runs at full speed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]

_COUNT_CELLS = 250_000  # draws x events counted at once (fits in cache)
_PRODUCT_CELLS = 10_000_000  # draws x events multiplied at once (bounds memory to ~80 MB)


def _event_counts(rng: np.random.Generator, e: int, draws: int) -> Iterator[Floats]:
    """Blocks (rows x e) of resampling counts: each row picks e events with replacement.

    The random stream is the same as one ``rng.integers(0, e, size=(draws, e))`` call, so the
    block sizes never change the result.
    """
    sub = max(1, _COUNT_CELLS // e)
    big = max(sub, (_PRODUCT_CELLS // e) // sub * sub)
    buf = np.empty((min(big, draws), e))
    offsets = np.arange(sub, dtype=np.int64)[:, None] * e
    for start in range(0, draws, big):
        rows = min(draws, start + big) - start
        for s in range(0, rows, sub):
            r = min(rows, s + sub) - s
            idx = rng.integers(0, e, size=(r, e))
            idx += offsets[:r]
            buf[s : s + r] = np.bincount(idx.ravel(), minlength=r * e).reshape(r, e)
        yield buf[:rows]


def _percentiles(boot: Floats, ok: NDArray[np.bool_], level: float) -> tuple[Floats, Floats]:
    """Row-wise percentile interval of bootstrap means (NaN draws dropped; NaN where not ok)."""
    tail = (1.0 - level) / 2.0 * 100.0
    low = np.full(boot.shape[0], np.nan)
    high = np.full(boot.shape[0], np.nan)
    for j in np.flatnonzero(ok):
        b = boot[j][np.isfinite(boot[j])]
        if b.size:
            low[j], high[j] = np.percentile(b, [tail, 100.0 - tail])
    return low, high


def _columns(v: Floats) -> Floats:
    return np.atleast_2d(v.T).T if v.ndim == 1 else v


def _ratio_draws(rng: np.random.Generator, stacked: NDArray[Any], m: int, draws: int) -> Floats:
    """Draws (M x draws) of the ratios of the sums of ``stacked``'s first M columns (E x 2M, a
    row per cluster) to those of its last M, over the clusters resampled."""
    boot = np.empty((m, draws))
    start = 0
    for w in _event_counts(rng, stacked.shape[0], draws):
        tot = w @ stacked
        with np.errstate(invalid="ignore", divide="ignore"):
            boot[:, start : start + w.shape[0]] = (tot[:, :m] / tot[:, m:]).T
        start += w.shape[0]
    return boot


def cluster_bootstrap_means(
    cluster: Ints,
    values: Floats,
    draws: int = 4000,
    rng: np.random.Generator | None = None,
) -> Floats:
    """The bootstrap means (M x draws) of the columns of ``values`` (N x M, NaN = missing),
    whole clusters resampled, every column on the same draws: for statistics of several
    columns at once (a difference of two groups' means: a column each, NaN outside it)."""
    rng = rng if rng is not None else np.random.default_rng(0)
    v = _columns(values)
    m = v.shape[1]
    ids, inv = np.unique(cluster, return_inverse=True)
    inv = inv.reshape(-1)
    e = ids.size
    present = np.isfinite(v)
    sums = np.stack([np.bincount(inv, np.where(present[:, j], v[:, j], 0.0), e) for j in range(m)])
    counts = np.stack([np.bincount(inv, present[:, j].astype(np.float64), e) for j in range(m)])
    return _ratio_draws(rng, np.concatenate([sums, counts]).T, m, draws)  # E x 2M


def cluster_bootstrap(
    cluster: Ints,
    values: Floats,
    draws: int = 4000,
    rng: np.random.Generator | None = None,
    level: float = 0.95,
) -> tuple[Floats, Floats]:
    """Percentile CIs of column means of ``values`` (N x M, NaN = missing), clustered by id.

    Returns (low, high), each of length M; NaN for a column with fewer than two clusters or no
    values. All columns share the same resampled clusters.
    """
    v = _columns(values)
    m = v.shape[1]
    if draws <= 0 or v.shape[0] == 0:
        return np.full(m, np.nan), np.full(m, np.nan)
    boot = cluster_bootstrap_means(cluster, v, draws, rng)
    _, inv = np.unique(cluster, return_inverse=True)
    inv = inv.reshape(-1)
    present = np.isfinite(v)
    counts = np.stack([np.bincount(inv, present[:, j].astype(np.float64)) for j in range(m)])
    return _percentiles(boot, (counts > 0).sum(axis=1) >= 2, level)


def grouped_cluster_bootstrap(
    cluster: Ints,
    group: Ints,
    values: Floats,
    draws: int = 4000,
    rng: np.random.Generator | None = None,
    level: float = 0.95,
) -> tuple[Floats, Floats]:
    """``cluster_bootstrap`` for many groups at once; returns (low, high), each G x M.

    Groups (dense ids 0..G-1) that hold at least half of all events share their draws: each
    draw picks as many events as there are, with replacement, from all events, and every such
    group averages the forecasts of the drawn events it has. A group with every event thus gets
    exactly the single-group bootstrap, and groups compared on the same events see the same
    resampled events. Smaller groups (e.g. one split or category) are resampled on their own.
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    v = _columns(values)
    n_groups = int(group.max()) + 1 if group.size else 0
    m = v.shape[1]
    low = np.full((n_groups, m), np.nan)
    high = np.full((n_groups, m), np.nan)
    if draws <= 0 or v.shape[0] == 0:
        return low, high
    ids, ev = np.unique(cluster, return_inverse=True)
    ev = ev.reshape(-1)
    e = ids.size
    pairs, pair_of = np.unique(group * e + ev, return_inverse=True)
    pair_of = pair_of.reshape(-1)
    pair_group, pair_event = pairs // e, pairs % e
    n_events = np.bincount(pair_group, minlength=n_groups)
    dense = np.flatnonzero((2 * n_events >= e) & (n_events >= 2))
    if dense.size:
        present = np.isfinite(v)
        # distinct presence patterns, so metrics missing on the same rows share a count column
        patterns: list[NDArray[np.bool_]] = []
        pattern_of = np.empty(m, dtype=np.int64)
        for j in range(m):
            same = [k for k, p in enumerate(patterns) if np.array_equal(p, present[:, j])]
            if not same:
                patterns.append(present[:, j])
            pattern_of[j] = same[0] if same else len(patterns) - 1
        per_pair = [np.bincount(pair_of, np.where(present[:, j], v[:, j], 0.0)) for j in range(m)]
        per_pair += [np.bincount(pair_of, p.astype(np.float64)) for p in patterns]
        width = len(per_pair)
        slot = np.full(n_groups, -1)
        slot[dense] = np.arange(dense.size)
        keep = slot[pair_group] >= 0
        stacked = np.zeros((e, dense.size * width))
        for c, col in enumerate(per_pair):
            stacked[pair_event[keep], slot[pair_group[keep]] * width + c] = col[keep]
        boot = np.empty((dense.size, m, draws))
        start = 0
        for w in _event_counts(rng, e, draws):
            tot = (w @ stacked).reshape(w.shape[0], dense.size, width)
            with np.errstate(invalid="ignore", divide="ignore"):
                ratio = tot[:, :, :m] / tot[:, :, m + pattern_of]
            boot[:, :, start : start + w.shape[0]] = ratio.transpose(1, 2, 0)
            start += w.shape[0]
        counts = np.stack([per_pair[m + k] for k in pattern_of])  # M x pairs
        covered = np.stack(
            [np.bincount(pair_group, counts[j] > 0, n_groups) for j in range(m)], axis=1
        )
        ok = covered[dense] >= 2
        lo, hi = _percentiles(boot.reshape(-1, draws), ok.reshape(-1), level)
        low[dense], high[dense] = lo.reshape(-1, m), hi.reshape(-1, m)
    alone = np.flatnonzero((2 * n_events < e) & (n_events >= 2))
    if alone.size:
        order = np.argsort(group, kind="stable")
        bounds = np.searchsorted(group[order], np.arange(n_groups + 1))
        for g in alone:
            rows = order[bounds[g] : bounds[g + 1]]
            low[g], high[g] = cluster_bootstrap(cluster[rows], v[rows], draws, rng, level)
    return low, high


def ratio_bootstrap(
    cluster: Ints,
    numerator: Floats,
    denominator: Floats,
    draws: int = 4000,
    rng: np.random.Generator | None = None,
    level: float = 0.95,
) -> tuple[Floats, Floats]:
    """Percentile CIs of column ratios sum(numerator) / sum(denominator) (N x M each),
    resampling clusters; NaN for a column with fewer than two clusters."""
    rng = rng if rng is not None else np.random.default_rng(0)
    num, den = _columns(numerator), _columns(denominator)
    m = num.shape[1]
    if draws <= 0 or num.shape[0] == 0:
        return np.full(m, np.nan), np.full(m, np.nan)
    ids, inv = np.unique(cluster, return_inverse=True)
    inv = inv.reshape(-1)
    e = ids.size
    stacked = np.stack([np.bincount(inv, c, e) for c in (*num.T, *den.T)], axis=1)  # E x 2M
    return _percentiles(_ratio_draws(rng, stacked, m, draws), np.full(m, e >= 2), level)
