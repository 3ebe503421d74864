"""Leakage through construction, measured on the embedded world and on real ForecastBench data:
the schedules fitted to the resolution leak the outcome, the non-anticipating ones do not."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import numpy as np
import pytest

from pastcast.audit import ConstructionAudit, audit_construction
from pastcast.audit._classify import auc, out_of_fold_scores, permutation_null
from pastcast.audit._construction import AS_BUILT, ScheduleAudit
from pastcast.dataset import Dataset
from pastcast.markets import build_dataset, make_schedule
from pastcast.markets.sources import collected_at, read_forecastbench
from pastcast.records import Event, Resolution, StepSpec
from pastcast.world import build_world

SEEDS = range(10)  # one world has 35 binary events: too few for a sharp interval; ten have 350


def _v1_steps(event: Event, resolution: Resolution) -> tuple[StepSpec, ...]:
    """The world's schedule before it was made non-anticipating: evenly spaced up to the last
    midnight before the *resolution*."""
    day = timedelta(days=1)

    def ceil(t: datetime) -> datetime:
        floor = datetime.combine(t.date(), time(0), tzinfo=UTC)
        return floor if floor == t else floor + day

    first, last = ceil(event.open_time + day), ceil(resolution.resolved_at) - day
    if last < first:
        return ()
    span = (last - first).days
    n = max(1, min(3 if span < 30 else 4 if span < 75 else 5, span + 1))
    offsets = sorted({round(i * span / (n - 1)) for i in range(n)} if n > 1 else {span})
    return tuple(
        StepSpec(event_id=event.id, step_index=i, cutoff=first + timedelta(days=d))
        for i, d in enumerate(offsets)
    )


@pytest.fixture(scope="module")
def worlds() -> list[Dataset]:
    return [build_world(s).dataset for s in SEEDS]


def _by_name(audit: ConstructionAudit) -> dict[str, ScheduleAudit]:
    return {r.schedule: r for r in audit.results}


def _includes_half(r: ScheduleAudit) -> bool:
    return r.ci_low is not None and r.ci_high is not None and r.ci_low <= 0.5 <= r.ci_high


def test_world_schedules(worlds: list[Dataset]) -> None:
    audit = audit_construction(worlds, draws=1000, permutations=200)
    found = _by_name(audit)
    assert found[AS_BUILT].events == 350 and audit.skipped == {"not binary": 150}
    # fitted to the resolution: the metadata gives the outcome away
    for name in ("dojo", "hindcast", "lookback"):
        assert found[name].leaks, found[name]
    # non-anticipating: nothing beyond "still open", within the interval
    for name in (AS_BUILT, "causal-dojo", "causal-lookback"):
        assert _includes_half(found[name]), found[name]
    lookback, causal = found["lookback"], found["causal-lookback"]
    assert causal.auc is not None and lookback.ci_low is not None
    assert causal.auc < lookback.ci_low
    # Dojo steps right before the largest move of each bin; its causal twin after moves
    assert found["dojo"].move_ratio is not None and found["dojo"].move_ratio > 1.8
    assert found["causal-dojo"].move_ratio is not None and found["causal-dojo"].move_ratio < 1.4
    assert audit.late_closes == () and audit.findings() == []


def test_the_worlds_earlier_schedule_leaks(worlds: list[Dataset]) -> None:
    before = [
        ds.with_steps(s for e in ds.events for s in _v1_steps(e, ds.resolutions[e.id]))
        for ds in worlds
    ]
    audit = audit_construction(before, [], draws=1000, permutations=200)
    (built,) = audit.results
    assert built.leaks, built
    assert audit.findings() and "metadata predicts the outcome" in audit.findings()[0]


def _outcome_steps(event: Event, resolution: Resolution) -> tuple[StepSpec, ...]:
    """A planted leak: Yes events are stepped early in their window, No events late."""
    span = max(1, (event.close_time - event.open_time).days)
    fraction = 0.2 if resolution.label == "Yes" else 0.7
    cutoff = datetime.combine(
        (event.open_time + timedelta(days=max(1, round(span * fraction)))).date(), time(0), UTC
    )
    if cutoff >= resolution.resolved_at:
        return ()
    return (StepSpec(event_id=event.id, step_index=0, cutoff=cutoff),)


def test_one_world_without_signal_reads_as_too_few_events_not_as_a_finding(
    worlds: list[Dataset],
) -> None:
    # 35 binary events: cross-validation anti-learns (out-of-fold AUC near 0.17 for the world's
    # schedule, a bootstrap interval far below 0.5); judged against its permutation null that is
    # no signal at all, and too few events for an interval.
    audit = audit_construction(worlds[:1], permutations=200)
    for r in audit.results:
        assert not r.leaks, r
        assert r.ci_low is None or r.ci_low <= 0.5 <= (r.ci_high or 0.0), r
        assert r.p_value is not None and r.p_value > 0.05, r
    built = _by_name(audit)[AS_BUILT]
    assert built.verdict == "too few events to tell" and built.ci_low is None
    assert audit.findings() == []


def test_a_planted_outcome_schedule_is_caught_on_one_world(worlds: list[Dataset]) -> None:
    ds = worlds[0]
    planted = ds.with_steps(
        s
        for e in ds.events
        if e.id in ds.resolutions
        for s in _outcome_steps(e, ds.resolutions[e.id])
    )
    (built,) = audit_construction([planted], [], permutations=200).results
    assert built.leaks and built.p_value is not None and built.p_value < 0.01, built


def test_the_permutation_null_is_seeded_and_calibrated() -> None:
    rng = np.random.default_rng(5)
    groups = np.repeat(np.arange(120), 3).astype(np.int64)
    y = np.repeat(rng.integers(0, 2, 120), 3).astype(np.float64)
    x = rng.normal(size=(groups.size, 4))
    first = permutation_null(x, y, groups, permutations=50, seed=3)
    assert np.array_equal(first, permutation_null(x, y, groups, permutations=50, seed=3))
    assert not np.array_equal(first, permutation_null(x, y, groups, permutations=50, seed=4))
    # features of pure noise: the null sits around 0.5 and the real AUC is one of its draws
    assert 0.4 < float(np.median(first)) < 0.6
    found = auc(out_of_fold_scores(x, y, groups, seed=3), y)
    assert float(np.min(first)) < found < float(np.max(first))


def test_bad_test_options_are_refused(worlds: list[Dataset]) -> None:
    with pytest.raises(ValueError, match="permutations"):
        audit_construction(worlds[:1], [], permutations=0)
    with pytest.raises(ValueError, match="alpha"):
        audit_construction(worlds[:1], [], alpha=1.5)


def test_unknown_schedule_is_refused_before_any_work(worlds: list[Dataset]) -> None:
    with pytest.raises(ValueError, match="unknown schedule 'weekly'"):
        audit_construction(worlds[:1], ["weekly"])


@pytest.mark.shared_data
def test_forecastbench_as_imported(shared_data_dir: Path) -> None:
    root = shared_data_dir / "forecastbench"
    histories = read_forecastbench(root).histories
    schedule = make_schedule("causal-dojo", start_at_first_belief=True)
    dataset, report = build_dataset(
        histories, name="forecastbench", schedule=schedule, collected_at=collected_at(root)
    )
    stages = {s.stage: s for s in report.funnel}
    assert stages["closes before collection"].removed > 20
    audit = audit_construction([dataset], schedule_options={"start_at_first_belief": True})
    found = _by_name(audit)
    assert found[AS_BUILT].events > 300
    assert audit.late_closes == ()
    for name in (AS_BUILT, "causal-dojo", "causal-lookback"):
        assert _includes_half(found[name]), found[name]
    assert audit.findings() == []


@pytest.mark.shared_data
def test_forecastbench_with_late_closes_leaks(shared_data_dir: Path) -> None:
    # Questions that close after the data ends are there only because they resolved early, and
    # mostly Yes: their close dates tell.
    histories = read_forecastbench(shared_data_dir / "forecastbench").histories
    schedule = make_schedule("dojo", start_at_first_belief=True)
    dataset, _ = build_dataset(histories, name="forecastbench", schedule=schedule)
    audit = audit_construction([dataset], [])
    (built,) = audit.results
    assert built.leaks, built
    assert len(audit.late_closes) > 20
    assert any("closes after the data was collected" in f for f in audit.findings())
