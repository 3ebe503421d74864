"""How scores move across an episode's forecast dates (Forecast-Dojo 5.3, B.6-B.7).

Every analysis averages within an event first and then weights events equally; intervals are
percentile intervals from event-clustered bootstrap draws.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pastcast.scoring._aggregate import _group_ids, group_rows
from pastcast.scoring._bootstrap import cluster_bootstrap
from pastcast.scoring._metrics import metric as registered_metric
from pastcast.scoring._table import Convention, ScoreTable

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]


@dataclass(frozen=True)
class Estimate:
    """A mean with its percentile bootstrap interval."""

    mean: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class Thirds:
    group: tuple[str, ...]
    n_events: int
    early: Estimate
    middle: Estimate
    late: Estimate
    late_minus_early: Estimate


def _estimates(
    cluster: Ints, values: Floats, draws: int, rng: np.random.Generator
) -> list[Estimate]:
    low, high = cluster_bootstrap(cluster, values, draws, rng)
    means = np.nanmean(values, axis=0) if values.size else np.full(values.shape[1], np.nan)
    return [
        Estimate(float(m), float(lo), float(hi)) for m, lo, hi in zip(means, low, high, strict=True)
    ]


def _event_mean(
    delta: Floats, event: Ints, draws: int, rng: np.random.Generator
) -> tuple[Estimate, int]:
    """The mean of ``delta`` within events first, then over events weighted equally, with its
    event-bootstrap interval, and the number of events (NaN and 0 without values)."""
    if delta.size == 0:
        return Estimate(math.nan, math.nan, math.nan), 0
    ids, inv = np.unique(event, return_inverse=True)
    (est,) = _estimates(ids, (np.bincount(inv, delta) / np.bincount(inv))[:, None], draws, rng)
    return est, int(ids.size)


def _metric(table: ScoreTable, metric: str, fallback: Convention) -> Floats:
    registered_metric(metric)  # a ValueError naming the known ones
    return table.metrics(fallback)[metric]


def thirds(
    table: ScoreTable,
    by: Sequence[str] = ("agent", "setting"),
    metric: str = "brier",
    fallback: Convention = "uniform",
    bootstrap: int = 4000,
    seed: int = 0,
    market_only: bool = False,
) -> tuple[Thirds, ...]:
    """Mean score in the early, middle and late thirds of each event's retained dates.

    Relative position is (t - 1) / (T_e - 1) over the event's distinct recorded steps within
    the group; only events present in all three thirds are kept. With ``market_only`` the
    retained dates are those with a market probability (Forecast-Dojo B.6, Figure 2a).
    """
    values = _metric(table, metric, fallback)
    if market_only:  # a date without a market probability is not retained
        values = np.where(np.isfinite(table.market_brier), values, np.nan)
    event = table.codes("event")
    rng = np.random.default_rng(seed)
    out = []
    for names, rows in group_rows(table, by):
        rows = rows[np.isfinite(values[rows])]
        ev, st, v = event[rows], table.step[rows], values[rows]
        per_event: list[list[float]] = []
        ids: list[int] = []
        for e in np.unique(ev):
            m = ev == e
            steps = np.unique(st[m])
            if steps.size < 3:
                continue
            rank = np.searchsorted(steps, st[m])
            third = np.minimum((3 * rank) // (steps.size - 1), 2)  # floor(3 * position)
            sums = np.bincount(third, v[m], 3)
            counts = np.bincount(third, minlength=3)
            if np.all(counts > 0):
                means = sums / counts
                per_event.append([*means, means[2] - means[0]])
                ids.append(int(e))
        vals = np.array(per_event, dtype=np.float64).reshape(-1, 4)
        est = _estimates(np.array(ids, dtype=np.int64), vals, bootstrap, rng)
        out.append(Thirds(names, len(ids), *est))
    return tuple(out)


@dataclass(frozen=True)
class StepChange:
    group: tuple[str, ...]
    n_transitions: int
    n_events: int
    change: Estimate
    """Mean of B(t) - B(t - 1) (negative is improvement), event means weighted equally."""


def _chains(table: ScoreTable) -> Ints:
    return _group_ids(table, [c for c in ("agent", "setting", "run_id") if c in table.keys])[0]


def transitions(table: ScoreTable, rows: Ints, values: Floats) -> tuple[Floats, Ints]:
    """Changes v(t) - v(t - 1) between adjacent recorded steps of one event and rollout among
    ``rows`` (NaN scores skipped), and the row of each later step."""
    rows = rows[np.isfinite(values[rows])]
    event = table.codes("event")
    chain = _chains(table)  # one forecaster's sequence: never pair two agents or runs
    order = np.lexsort((table.step[rows], table.rollout[rows], event[rows], chain[rows]))
    r = rows[order]
    ch, ev, ro, st, v = chain[r], event[r], table.rollout[r], table.step[r], values[r]
    adj = (ch[1:] == ch[:-1]) & (ev[1:] == ev[:-1]) & (ro[1:] == ro[:-1]) & (st[1:] == st[:-1] + 1)
    return (v[1:] - v[:-1])[adj], r[1:][adj]


def step_changes(
    table: ScoreTable,
    by: Sequence[str] = ("agent", "setting"),
    metric: str = "brier",
    fallback: Convention = "uniform",
    bootstrap: int = 4000,
    seed: int = 0,
) -> tuple[StepChange, ...]:
    """Score change between adjacent recorded steps (t - 1, t) of the same event and rollout."""
    values = _metric(table, metric, fallback)
    event = table.codes("event")
    rng = np.random.default_rng(seed)
    out = []
    for names, rows in group_rows(table, by):
        delta, end = transitions(table, rows, values)
        est, n_events = _event_mean(delta, event[end], bootstrap, rng)
        out.append(StepChange(names, int(delta.size), n_events, est))
    return tuple(out)


@dataclass(frozen=True)
class EpisodeGain:
    group: tuple[str, ...]
    n_events: int
    gain: Estimate
    """Mean of B(first) - B(last) (positive is improvement), rollouts averaged within events."""


def episode_gain(
    table: ScoreTable,
    by: Sequence[str] = ("agent", "setting"),
    metric: str = "brier",
    fallback: Convention = "uniform",
    bootstrap: int = 4000,
    seed: int = 0,
) -> tuple[EpisodeGain, ...]:
    """G: first minus last scheduled step, paired within rollouts (Forecast-Dojo B.7).

    The schedule's first and last steps of an event are the smallest and largest step index
    recorded for it anywhere in the table; a rollout counts only when it has both.
    """
    values = _metric(table, metric, fallback)
    event = table.codes("event")
    n_ev = int(event.max()) + 1 if event.size else 0
    first = np.full(n_ev, np.iinfo(np.int64).max)
    last = np.full(n_ev, -1)
    np.minimum.at(first, event, table.step)
    np.maximum.at(last, event, table.step)
    rng = np.random.default_rng(seed)
    out = []
    for names, rows in group_rows(table, by):
        rows = rows[np.isfinite(values[rows])]
        ev, st = event[rows], table.step[rows]
        is_first, is_last = st == first[ev], (st == last[ev]) & (last[ev] > first[ev])
        key_f = {
            (int(e), int(r)): float(x)
            for e, r, x in zip(
                ev[is_first], table.rollout[rows][is_first], values[rows][is_first], strict=True
            )
        }
        gains: dict[int, list[float]] = {}
        for e, r, x in zip(
            ev[is_last], table.rollout[rows][is_last], values[rows][is_last], strict=True
        ):
            f = key_f.get((int(e), int(r)))
            if f is not None:
                gains.setdefault(int(e), []).append(f - float(x))
        ids = np.array(sorted(gains), dtype=np.int64)
        vals = np.array([np.mean(gains[i]) for i in ids], dtype=np.float64).reshape(-1, 1)
        (est,) = _estimates(ids, vals, bootstrap, rng)
        out.append(EpisodeGain(names, int(ids.size), est))
    return tuple(out)


def evidence_capture(own: ArrayLike, available: ArrayLike) -> float:
    """No-intercept slope kappa = sum(own * A) / sum(A^2) of own new evidence on availability."""
    o, a = np.asarray(own, dtype=np.float64), np.asarray(available, dtype=np.float64)
    if o.shape != a.shape or o.ndim != 1:
        raise ValueError("evidence_capture: own and available must be 1-D and of equal length")
    denom = float(np.sum(a * a))
    if denom == 0:
        raise ValueError("evidence_capture: availability is zero everywhere")
    return float(np.sum(o * a) / denom)
