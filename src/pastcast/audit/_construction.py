"""Leakage through construction, measured: can what an agent sees of how the benchmark was built
(cutoff, step index, spacing of steps, open and close times) predict the outcome?

Per schedule, an out-of-fold logistic regression's ROC AUC for "resolved Yes" against a
permutation null; plus the dataset's late closes, its steps without a text snapshot before their
cutoff and the price move on the day after each cutoff. docs/audits.md, "Leakage through
construction", states the method and why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any, Literal

import numpy as np

from pastcast.audit._classify import auc, auc_interval, out_of_fold_scores, permutation_null
from pastcast.audit._features import FEATURES, step_features
from pastcast.cutoff import last_complete_day
from pastcast.dataset import Dataset
from pastcast.markets import Schedule, late_closes, movement, schedules
from pastcast.records import BINARY_LABELS, Record, StepSpec

AS_BUILT = "dataset"
"""The name under which the dataset's own steps are reported."""

TOO_FEW_WIDTH = 0.15
"""The null's upper quantile (at ``1 - alpha``) this far or more above its median: too few
events to tell a real AUC of 0.65 from chance, so no interval is reported."""

Verdict = Literal["leaks", "ok", "too few events to tell", "one outcome only"]


class ScheduleAudit(Record):
    """How well a classifier on agent-visible metadata predicts the outcome under one schedule."""

    schedule: str
    events: int
    """Binary events with at least one step."""
    yes_events: int
    steps: int
    auc: float | None
    """Out-of-fold ROC AUC (None without both outcomes)."""
    ci_low: float | None
    """Bootstrap interval of the AUC over whole events; None with too few events to tell."""
    ci_high: float | None
    move_ratio: float | None = None
    """Mean absolute price move on the day starting at a cutoff over the mean on every priced
    day of the same events: above 1, the schedule steps just before moves."""
    p_value: float | None = None
    """Share of the permutation null at or above the AUC, ``(1 + k) / (1 + permutations)``."""
    null_median: float | None = None
    """The null's median AUC: below 0.5 where small-sample cross-validation anti-learns."""
    null_high: float | None = None
    """The null's ``1 - alpha`` quantile: an AUC above it is a leak at level ``alpha``."""
    verdict: Verdict = "one outcome only"

    @property
    def leaks(self) -> bool:
        """The AUC is above its permutation null at the audit's level: the metadata tells the
        outcome."""
        return self.verdict == "leaks"


class ConstructionAudit(Record):
    """The construction audit of one or more datasets (pooled: an event of each stays apart)."""

    datasets: tuple[str, ...]
    features: tuple[str, ...] = FEATURES
    folds: int
    draws: int
    level: float
    seed: int
    permutations: int = 0
    alpha: float = 0.05
    """Level of the permutation test: a schedule leaks when its p-value is below it."""
    skipped: dict[str, int]
    """Events left out of the classifier, by reason."""
    results: tuple[ScheduleAudit, ...]
    late_closes: tuple[str, ...] = ()
    """Events closing after their dataset's data was collected (``_late``)."""
    unversioned_steps: tuple[str, ...] = ()
    """Steps (``event#index``) whose question text has no snapshot published before the cutoff."""

    def findings(self) -> list[str]:
        """One line per problem of the datasets as built (other schedules are for comparison)."""
        out = [
            f"steps as built: metadata predicts the outcome, AUC {r.auc:.3f} against "
            f"a permutation null of median {r.null_median:.3f}, p = {r.p_value:.4f}"
            for r in self.results
            if r.schedule == AS_BUILT and r.leaks
        ]
        out += [f"event {e}: closes after the data was collected" for e in self.late_closes]
        out += [
            f"step {s}: no snapshot of the question text published before its cutoff"
            for s in self.unversioned_steps
        ]
        return out


def _late(dataset: Dataset) -> tuple[str, ...]:
    """The events of ``dataset`` that close after its data was collected: when it records no
    collection, at its last resolution (the earliest the data can have been collected)."""
    collected = dataset.collected_at
    if collected is None and dataset.resolutions:
        collected = max(r.resolved_at for r in dataset.resolutions.values())
    return () if collected is None else late_closes(dataset.events, collected)


def _schedule(name: str, options: Mapping[str, Any]) -> Schedule:
    accepted = schedules.get(name).parameters()
    return schedules.build(name, **{k: v for k, v in options.items() if k in accepted})


def _steps_by_event(ds: Dataset, schedule: Schedule | None) -> dict[str, tuple[StepSpec, ...]]:
    if schedule is None:
        out: dict[str, list[StepSpec]] = {}
        for s in ds.steps:
            out.setdefault(s.event_id, []).append(s)
        return {k: tuple(v) for k, v in out.items()}
    return {
        e.id: schedule(e, ds.beliefs.get(e.id, ()), ds.resolutions[e.id])
        for e in ds.events
        if e.id in ds.resolutions
    }


def _move_ratio(ds: Dataset, steps: Mapping[str, Sequence[StepSpec]]) -> tuple[float, int, float]:
    """(sum of moves on the days starting at cutoffs, their count, mean move over all days)."""
    at_steps, n_steps = 0.0, 0
    all_moves: list[float] = []
    for e in ds.events:
        by_day = {b.day: b for b in ds.beliefs.get(e.id, ())}
        days = sorted(by_day)
        moves = {
            d: movement(by_day[d - timedelta(days=1)], by_day[d], e.kind)
            for d in days
            if d - timedelta(days=1) in by_day
        }
        all_moves += moves.values()
        for s in steps.get(e.id, ()):
            day: date = last_complete_day(s.cutoff) + timedelta(days=1)
            if day in moves:
                at_steps += moves[day]
                n_steps += 1
    return at_steps, n_steps, float(np.mean(all_moves)) if all_moves else float("nan")


def _one(
    name: str,
    datasets: Sequence[Dataset],
    schedule: Schedule | None,
    folds: int,
    draws: int,
    seed: int,
    level: float,
    permutations: int,
    alpha: float,
) -> ScheduleAudit:
    rows, ys, groups = [], [], []
    events = yes = 0
    move_sum, move_n, base = 0.0, 0, []
    for d, ds in enumerate(datasets):
        steps = _steps_by_event(ds, schedule)
        s, n, mean_all = _move_ratio(ds, steps)
        move_sum, move_n = move_sum + s, move_n + n
        base.append(mean_all)
        for i, e in enumerate(ds.events):
            res = ds.resolutions.get(e.id)
            mine = steps.get(e.id, ())
            if e.labels != BINARY_LABELS or res is None or not mine:
                continue
            x = step_features(e, mine)
            outcome = float(res.label == BINARY_LABELS[0])
            rows.append(x)
            ys += [outcome] * len(x)
            groups += [d * 1_000_000 + i] * len(x)
            events += 1
            yes += int(outcome)
    y = np.array(ys, dtype=np.float64)
    mean_base = float(np.nanmean(base)) if base and not np.all(np.isnan(base)) else float("nan")
    ratio = (move_sum / move_n) / mean_base if move_n and mean_base > 0 else None
    if not rows or np.unique(y).size < 2:
        return ScheduleAudit(  # verdict: one outcome only
            schedule=name, events=events, yes_events=yes, steps=len(ys), auc=None, ci_low=None,
            ci_high=None, move_ratio=ratio,
        )  # fmt: skip
    x = np.vstack(rows)
    g = np.array(groups, dtype=np.int64)
    scores = out_of_fold_scores(x, y, g, folds=folds, seed=seed)
    found = auc(scores, y)
    null = permutation_null(x, y, g, folds=folds, seed=seed, permutations=permutations)
    p = float((1 + np.count_nonzero(null >= found)) / (1 + null.size))
    median, high_q = (float(v) for v in np.quantile(null, [0.5, 1.0 - alpha]))
    verdict: Verdict
    if p < alpha:
        verdict = "leaks"
    elif high_q - median >= TOO_FEW_WIDTH:
        verdict = "too few events to tell"
    else:
        verdict = "ok"
    low: float | None
    high: float | None
    low, high = auc_interval(scores, y, g, draws=draws, seed=seed, level=level)
    if verdict == "too few events to tell":
        low = high = None  # an interval here would read like a finding
    return ScheduleAudit(
        schedule=name, events=events, yes_events=yes, steps=len(ys), auc=found, ci_low=low,
        ci_high=high, move_ratio=ratio, p_value=p, null_median=median, null_high=high_q,
        verdict=verdict,
    )  # fmt: skip


def audit_construction(
    datasets: Sequence[Dataset],
    schedule_names: Sequence[str] | None = None,
    *,
    schedule_options: Mapping[str, Any] | None = None,
    folds: int = 5,
    draws: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    permutations: int = 500,
    alpha: float = 0.05,
) -> ConstructionAudit:
    """Audit the datasets' own steps and those of each named schedule (default: every
    registered one), rebuilt on the same events with ``schedule_options`` (only the options a
    schedule takes are passed to it). Each is judged against ``permutations`` draws of its
    permutation null at level ``alpha``."""
    if permutations < 1:
        raise ValueError(f"permutations: {permutations}; at least 1")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha: {alpha}; between 0 and 1")
    names = schedules.names() if schedule_names is None else tuple(schedule_names)
    built = {n: _schedule(n, schedule_options or {}) for n in names}  # unknown names fail first
    skipped: Counter[str] = Counter()
    for ds in datasets:
        for e in ds.events:
            if e.labels != BINARY_LABELS:
                skipped["not binary"] += 1
            elif e.id not in ds.resolutions:
                skipped["unresolved"] += 1
    test = (folds, draws, seed, level, permutations, alpha)
    results = [_one(AS_BUILT, datasets, None, *test)]
    results += [_one(n, datasets, s, *test) for n, s in built.items()]
    prefix = len(datasets) > 1
    return ConstructionAudit(
        datasets=tuple(ds.id for ds in datasets),
        folds=folds,
        draws=draws,
        level=level,
        seed=seed,
        permutations=permutations,
        alpha=alpha,
        skipped=dict(skipped),
        results=tuple(results),
        late_closes=tuple(f"{ds.id}/{e}" if prefix else e for ds in datasets for e in _late(ds)),
        unversioned_steps=tuple(
            f"{ds.id}/{s.event_id}#{s.step_index}" if prefix else f"{s.event_id}#{s.step_index}"
            for ds in datasets
            for s in ds.unversioned_steps()
        ),
    )
