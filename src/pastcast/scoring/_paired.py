"""Paired comparisons of two agents, settings or runs on the forecasts both made (Forecast-Dojo
Table 4; docs/scoring.md, "Paired comparisons"). The intervals resample whole events: a step's
rollouts and an event's dates are correlated.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pastcast.runlog import StepRecord
from pastcast.scoring._aggregate import _select, as_table
from pastcast.scoring._bootstrap import cluster_bootstrap
from pastcast.scoring._metrics import metric, metric_list
from pastcast.scoring._table import Convention, ScoreTable


@dataclass(frozen=True)
class PairedDifference:
    """Mean of (a - b) over the matched pairs where both scores exist, with its 95%
    event-resampled interval, and each side's mean on those same pairs."""

    metric: str
    n_matched: int
    mean: float
    ci_low: float
    ci_high: float
    mean_a: float = math.nan
    mean_b: float = math.nan


@dataclass(frozen=True)
class PairedComparison:
    """Selection ``a`` against selection ``b`` on the steps both recorded."""

    a: Mapping[str, str]
    b: Mapping[str, str]
    fallback: Convention
    bootstrap: int
    seed: int
    n_a: int
    """Records of ``a``."""
    n_b: int
    n_matched: int
    """Steps (event, step, rollout) both recorded."""
    only_a: int
    """Records of ``a`` whose step ``b`` did not record (left out, counted here)."""
    only_b: int
    n_events: int
    """Events of the matched steps: the clusters the intervals resample."""
    unusable_a: int
    """Matched steps where ``a``'s forecast was unusable (scored by ``fallback``)."""
    unusable_b: int
    differences: Mapping[str, PairedDifference]
    rows_a: NDArray[np.int64]
    """Table rows of ``a`` of the matched steps, aligned with ``rows_b``."""
    rows_b: NDArray[np.int64]

    def __getitem__(self, metric: str) -> PairedDifference:
        return self.differences[metric]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (NaN stays NaN; ``clean_json`` turns it into null)."""
        return {
            "a": dict(self.a),
            "b": dict(self.b),
            "difference": "a - b",
            **{f.name: getattr(self, f.name) for f in fields(self)[2:-3]},  # fallback..unusable_b
            "metrics": {k: vars(v) for k, v in self.differences.items()},
        }


def _keys(table: ScoreTable, rows: NDArray[np.int64], where: Mapping[str, str]) -> Any:
    key = np.stack([table.codes("event")[rows], table.step[rows], table.rollout[rows]], axis=1)
    if np.unique(key, axis=0).shape[0] != rows.size:
        raise ValueError(
            f"paired comparison: selection {dict(where)} has several records for one "
            "(event, step, rollout); narrow it (e.g. add agent, setting and run_id)"
        )
    return key


def paired_comparison(
    data: ScoreTable | Iterable[StepRecord],
    a: Mapping[str, str],
    b: Mapping[str, str],
    metrics: Sequence[str] | None = None,
    fallback: Convention = "uniform",
    bootstrap: int = 4000,
    seed: int = 0,
    extra: Mapping[str, NDArray[np.float64]] | None = None,
) -> PairedComparison:
    """Compare selection ``a`` with selection ``b`` (a - b) on the steps both recorded, over
    ``metrics`` (default: every registered metric with ``paired`` set); ``extra``: other per-row
    values differenced on the same pairs. ``ValueError`` for a selection with several records of
    one (event, step, rollout) and for an unknown metric."""
    table = as_table(data)
    if metrics is None:
        metrics = tuple(m.name for m in metric_list() if m.paired)
    for name in metrics:
        metric(name)  # a ValueError naming the known ones
    ra = np.flatnonzero(_select(table, a))
    rb = np.flatnonzero(_select(table, b))
    ka, kb = _keys(table, ra, a), _keys(table, rb, b)
    _, inv = np.unique(np.concatenate([ka, kb]), axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    _, pos_a, pos_b = np.intersect1d(
        inv[: ra.size], inv[ra.size :], assume_unique=True, return_indices=True
    )
    # matched pairs in table order of a, so the result never depends on how keys sort
    order = np.argsort(ra[pos_a], kind="stable")
    rows_a, rows_b = ra[pos_a][order], rb[pos_b][order]
    scores = table.metrics(fallback)
    for name, values in (extra or {}).items():
        if name in scores or len(values) != len(table):
            raise ValueError(f"extra column {name!r}: a new name with one value per table row")
        scores[name] = np.asarray(values, dtype=np.float64)
    metrics = (*metrics, *(extra or {}))
    diff = np.stack([scores[m][rows_a] - scores[m][rows_b] for m in metrics], axis=1)
    diff = diff.reshape(rows_a.size, len(metrics))
    event = table.codes("event")[rows_a]
    rng = np.random.default_rng(seed)
    low, high = cluster_bootstrap(event, diff, bootstrap, rng)
    differences = {}
    for j, m in enumerate(metrics):
        ok = np.isfinite(diff[:, j])
        n = int(ok.sum())
        differences[m] = PairedDifference(
            metric=m,
            n_matched=n,
            mean=float(diff[ok, j].mean()) if n else math.nan,
            ci_low=float(low[j]),
            ci_high=float(high[j]),
            mean_a=float(scores[m][rows_a][ok].mean()) if n else math.nan,
            mean_b=float(scores[m][rows_b][ok].mean()) if n else math.nan,
        )
    return PairedComparison(
        a=dict(a),
        b=dict(b),
        fallback=fallback,
        bootstrap=bootstrap,
        seed=seed,
        n_a=int(ra.size),
        n_b=int(rb.size),
        n_matched=int(rows_a.size),
        only_a=int(ra.size - rows_a.size),
        only_b=int(rb.size - rows_b.size),
        n_events=int(np.unique(event).size),
        unusable_a=int((~table.usable[rows_a]).sum()),
        unusable_b=int((~table.usable[rows_b]).sum()),
        differences=differences,
        rows_a=rows_a,
        rows_b=rows_b,
    )
