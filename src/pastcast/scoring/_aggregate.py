"""Grouped summaries of a score table: means with event-clustered CIs, failures, alpha tests.

Means are over recorded forecasts; missing records (scheduled but never written) are only
counted, never scored. Unusable forecasts are scored by the chosen convention and always
counted as failures.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import NDArray

from pastcast.runlog import StepRecord
from pastcast.scoring._bootstrap import grouped_cluster_bootstrap
from pastcast.scoring._metrics import metric_list
from pastcast.scoring._table import Convention, ScoreTable, table_from_records

KAPPA = 140.0
"""Leaderboard shrinkage constant: Foresight Arena asks for 140+ resolved predictions."""


@dataclass(frozen=True)
class MetricSummary:
    n: int
    mean: float
    ci_low: float
    ci_high: float
    rollout_std: float
    """Sample standard deviation (ddof 1) of per-rollout means; NaN with one rollout."""


@dataclass(frozen=True)
class AlphaTest:
    """One-sample t-test of a per-forecast alpha against 0, and its shrunken leaderboard value."""

    n: int
    mean: float
    t: float
    shrunk: float
    provisional: bool
    se: float = math.nan
    """Standard error of the mean, sd (ddof 1) / sqrt(n); NaN with fewer than two values."""

    @property
    def p_value(self) -> float:
        """Two-sided, from Student's t with n - 1 degrees of freedom (NaN without a t). Made
        when asked for: its library loads in about the time scoring a large log takes."""
        if math.isnan(self.t):
            return math.nan
        from scipy.special import stdtr  # lighter to import than scipy.stats

        return float(2.0 * stdtr(self.n - 1, -abs(self.t)))

    def as_dict(self) -> dict[str, object]:
        return {"n": self.n, "mean": self.mean, "t": self.t, "p_value": self.p_value,
                "shrunk": self.shrunk, "provisional": self.provisional, "se": self.se}  # fmt: skip


@dataclass(frozen=True)
class GroupSummary:
    by: tuple[str, ...]
    group: tuple[str, ...]
    role: str
    n_recorded: int
    n_failures: int
    failure_rate: float
    n_scheduled: int | None
    n_missing: int | None
    scheduled_failure_rate: float | None
    """(failures + missing) / scheduled, when a schedule size is given."""
    metrics: Mapping[str, MetricSummary]
    alpha_tests: Mapping[str, AlphaTest]

    def as_dict(self) -> dict[str, object]:
        return {
            **dict(zip(self.by, self.group, strict=True)),
            **{f.name: getattr(self, f.name) for f in fields(self)[2:-2]},  # role..scheduled
            "metrics": {k: vars(v) for k, v in self.metrics.items()},
            "alpha_tests": {k: v.as_dict() for k, v in self.alpha_tests.items()},
        }


def shrink(mean: float, n: int, kappa: float = KAPPA) -> tuple[float, bool]:
    """Shrink a mean towards 0 by n / (n + kappa); provisional while n < kappa."""
    return mean * n / (n + kappa), n < kappa


def alpha_test(values: NDArray[np.float64], kappa: float = KAPPA) -> AlphaTest:
    v = values[np.isfinite(values)]
    n = int(v.size)
    if n == 0:
        return AlphaTest(0, math.nan, math.nan, math.nan, True)
    mean = float(v.mean())
    sd = float(v.std(ddof=1)) if n >= 2 else 0.0
    t = mean / (sd / math.sqrt(n)) if sd > 0 else math.nan
    s, prov = shrink(mean, n, kappa)
    se = sd / math.sqrt(n) if n >= 2 else math.nan
    return AlphaTest(n, mean, t, s, prov, se)


def as_table(data: ScoreTable | Iterable[StepRecord]) -> ScoreTable:
    return data if isinstance(data, ScoreTable) else table_from_records(data)


def distinct_rows(
    columns: Sequence[NDArray[np.int64]],
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The distinct rows of integer ``columns`` (sorted), and each row's index among them."""
    n = columns[0].size if columns else 0
    if not columns or n == 0:
        return np.zeros(n, dtype=np.int64), np.zeros((min(n, 1), len(columns)), dtype=np.int64)
    low = [int(c.min()) for c in columns]
    cols = [c - lo for c, lo in zip(columns, low, strict=True)]
    dims = tuple(int(c.max()) + 1 for c in cols)
    if math.prod(dims) >= 2**62:  # too many combinations for one integer key
        uniq, inv = np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)
    else:  # one integer per row sorts like the row and is much faster to unique
        keys, inv = np.unique(np.ravel_multi_index(cols, dims), return_inverse=True)
        uniq = np.stack(np.unravel_index(keys, dims), axis=1)
    return inv.reshape(-1).astype(np.int64), uniq.astype(np.int64) + np.array(low, np.int64)


def _group_ids(table: ScoreTable, by: Sequence[str]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Dense group id per row, and the (n_groups x len(by)) codes of each group."""
    if not by:
        return np.zeros(len(table), dtype=np.int64), np.zeros((1, 0), dtype=np.int64)
    return distinct_rows([table.codes(c) for c in by])


def group_rows(
    table: ScoreTable, by: Sequence[str]
) -> list[tuple[tuple[str, ...], NDArray[np.int64]]]:
    """The rows of each group of ``by`` (groups sorted by their names, as ``summarize``)."""
    gid, codes = _group_ids(table, by)  # stable: each group's rows in table order
    order = np.argsort(gid, kind="stable")
    bounds = np.searchsorted(gid[order], np.arange(codes.shape[0] + 1))
    return [
        (
            tuple(table.name(c, int(v)) for c, v in zip(by, codes[g], strict=True)),
            order[bounds[g] : bounds[g + 1]],
        )
        for g in range(codes.shape[0])
    ]


def _rollout_std(values: NDArray[np.float64], rollout: NDArray[np.int64]) -> float:
    ok = np.isfinite(values)
    r = rollout[ok]
    if r.size == 0:
        return math.nan
    ids, inv = np.unique(r, return_inverse=True)
    if ids.size < 2:
        return math.nan
    means = np.bincount(inv, values[ok]) / np.bincount(inv)
    return float(np.std(means, ddof=1))


def summarize(
    data: ScoreTable | Iterable[StepRecord],
    by: Sequence[str] = ("agent", "setting"),
    fallback: Convention = "uniform",
    bootstrap: int = 4000,
    seed: int = 0,
    scheduled: int | Mapping[tuple[str, ...], int] | None = None,
    kappa: float = KAPPA,
) -> tuple[GroupSummary, ...]:
    """Summarise scores per group (sorted by group names).

    ``scheduled`` is the number of forecasts the schedule expected per group (one number for
    all groups, or per group tuple); with it, missing records are counted and a failure rate
    over the schedule is reported. Intervals come from ``grouped_cluster_bootstrap``: groups
    holding at least half of the events share resampled events.
    """
    table = as_table(data)
    by = tuple(by)
    rng = np.random.default_rng(seed)
    listed = metric_list()
    metrics = table.metrics(fallback)
    matrix = np.stack([metrics[m.name] for m in listed], axis=1)
    event = table.codes("event")
    gid, _ = _group_ids(table, by)
    role_codes, role_names = table.keys.get("role", (None, ()))
    lows, highs = grouped_cluster_bootstrap(event, gid, matrix, bootstrap, rng)
    groups = []
    for g, (names, rows) in enumerate(group_rows(table, by)):
        if rows.size == 0:
            continue
        v = matrix[rows]
        low, high = lows[g], highs[g]
        summaries = {}
        for j, name in enumerate(m.name for m in listed):
            col = v[:, j]
            ok = np.isfinite(col)
            n = int(ok.sum())
            summaries[name] = MetricSummary(
                n=n,
                mean=float(col[ok].mean()) if n else math.nan,
                ci_low=float(low[j]),
                ci_high=float(high[j]),
                rollout_std=_rollout_std(col, table.rollout[rows]),
            )
        n_rec = int(rows.size)
        n_fail = int((~table.usable[rows]).sum())
        sched = scheduled.get(names) if isinstance(scheduled, Mapping) else scheduled
        missing = None if sched is None else max(0, sched - n_rec)
        role = "agent"
        if role_codes is not None and np.all(
            np.asarray(role_names, dtype=object)[role_codes[rows]] == "reference"
        ):
            role = "reference"
        groups.append(
            GroupSummary(
                by=by,
                group=names,
                role=role,
                n_recorded=n_rec,
                n_failures=n_fail,
                failure_rate=n_fail / n_rec,
                n_scheduled=sched,
                n_missing=missing,
                scheduled_failure_rate=(
                    None if sched is None or sched == 0 else (n_fail + (missing or 0)) / sched
                ),
                metrics=summaries,
                alpha_tests={
                    m.name: alpha_test(metrics[m.name][rows], kappa)
                    for m in listed
                    if m.aggregate == "tested"
                },
            )
        )
    return tuple(sorted(groups, key=lambda s: s.group))


def _select(table: ScoreTable, where: Mapping[str, str]) -> NDArray[np.bool_]:
    mask = np.ones(len(table), dtype=bool)
    for col, value in where.items():
        if col not in table.keys:
            raise KeyError(f"unknown column {col!r}")
        names = table.keys[col][1]
        if value not in names:
            return np.zeros(len(table), dtype=bool)
        mask &= table.keys[col][0] == names.index(value)
    return mask
