"""Leakage through construction, measured on the embedded world and on real ForecastBench data:
the schedules fitted to the resolution leak the outcome, the non-anticipating ones do not."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import pytest

from pastcast.audit import AS_BUILT, ConstructionAudit, ScheduleAudit, audit_construction
from pastcast.dataset import Dataset
from pastcast.markets import build_dataset, collected_at, make_schedule, read_forecastbench
from pastcast.records import Event, Resolution, StepSpec
from pastcast.world import build_world

pytestmark = pytest.mark.slow

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
    audit = audit_construction(worlds, draws=1000)
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
    audit = audit_construction(before, [], draws=1000)
    (built,) = audit.results
    assert built.leaks, built
    assert audit.findings() and "metadata predicts the outcome" in audit.findings()[0]


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
    assert any("closes after the data's last resolution" in f for f in audit.findings())
