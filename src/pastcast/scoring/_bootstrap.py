"""Event-clustered percentile bootstrap of means, vectorised over draws and metrics.

Forecasts of one event (its steps, rollouts) are correlated, so whole events are resampled
with replacement and the ratio of resampled sums to resampled counts is the bootstrap mean;
with every event drawn once it equals the plain mean over recorded forecasts.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

__all__ = ["cluster_bootstrap"]

_CHUNK_CELLS = 4_000_000  # draws x events gathered at once (bounds memory to ~100 MB)


def cluster_bootstrap(
    cluster: NDArray[np.int64],
    values: NDArray[np.float64],
    draws: int = 4000,
    rng: np.random.Generator | None = None,
    level: float = 0.95,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Percentile CIs of column means of ``values`` (N x M, NaN = missing), clustered by id.

    Returns (low, high), each of length M; NaN for a column with fewer than two clusters or no
    values. All columns share the same resampled clusters.
    """
    rng = rng if rng is not None else np.random.default_rng(0)
    v = np.atleast_2d(values.T).T if values.ndim == 1 else values
    m = v.shape[1]
    low = np.full(m, np.nan)
    high = np.full(m, np.nan)
    if draws <= 0 or v.shape[0] == 0:
        return low, high
    ids, inv = np.unique(cluster, return_inverse=True)
    e = ids.size
    present = np.isfinite(v)
    sums = np.stack([np.bincount(inv, np.where(present[:, j], v[:, j], 0.0), e) for j in range(m)])
    counts = np.stack([np.bincount(inv, present[:, j].astype(np.float64), e) for j in range(m)])
    stacked = np.concatenate([sums, counts]).T  # E x 2M
    boot = np.empty((m, draws))
    chunk = max(1, _CHUNK_CELLS // max(e, 1))
    for start in range(0, draws, chunk):
        rows = min(draws, start + chunk) - start
        # how often each event is drawn in each resample, then one matrix product for all
        idx = rng.integers(0, e, size=(rows, e)) + (np.arange(rows) * e)[:, None]
        weights = np.bincount(idx.ravel(), minlength=rows * e).reshape(rows, e)
        tot = weights.astype(np.float64) @ stacked
        with np.errstate(invalid="ignore", divide="ignore"):
            boot[:, start : start + rows] = (tot[:, :m] / tot[:, m:]).T
    tail = (1.0 - level) / 2.0 * 100.0
    for j in range(m):
        ok = (counts[j] > 0).sum() >= 2
        if ok:
            b = boot[j][np.isfinite(boot[j])]
            low[j], high[j] = np.percentile(b, [tail, 100.0 - tail])
    return low, high
