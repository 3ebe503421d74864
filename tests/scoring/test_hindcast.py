"""Coverage bins, the lookback sweep and pipeline recoveries, by hand."""

from __future__ import annotations

import pytest
from scoring_builders import make_step

from pastcast.records import EpisodeRecord, ToolCall
from pastcast.runlog import StepRecord
from pastcast.scoring import table_from_records
from pastcast.scoring.analyses import (
    coverage,
    coverage_bin,
    coverage_summary,
    lookback_summary,
    pipeline_recoveries,
    with_row_column,
)


def shown(*calls: tuple[str, tuple[str, ...]]) -> EpisodeRecord:
    return EpisodeRecord(
        tool_calls=tuple(ToolCall(name=n, arguments={}, result=None, doc_ids=d) for n, d in calls)
    )


def test_coverage_counts_distinct_documents() -> None:
    r = make_step(
        {"Yes": 1.0},
        episode=shown(("search", ("d1", "d2", "d3")), ("read", ("d2",)), ("read", ("d9",))),
    )
    assert (coverage(r), coverage(r, "read")) == (4, 2)
    labels = [coverage_bin(n) for n in (0, 1, 4, 5, 19, 20, 99)]
    assert labels == ["0", "1-4", "1-4", "5-19", "5-19", ">=20", ">=20"]
    assert coverage_bin(3, edges=(2,)) == ">=2" and coverage_bin(1, edges=(2,)) == "0-1"


def test_coverage_summary_bins_per_run() -> None:
    many = shown(("search", tuple(f"d{i}" for i in range(6))))
    recs = [
        make_step({"Yes": 0.9, "No": 0.1}, event_id="e1", episode=many),
        make_step({"Yes": 0.2, "No": 0.8}, event_id="e2", episode=many),
        make_step({"Yes": 0.4, "No": 0.6}, event_id="e3"),
        make_step({"Yes": 0.7, "No": 0.3}, event_id="e3", run_id="other"),
    ]
    table, counts = table_from_records(recs), [coverage(r) for r in recs]
    out = {s.group: s for s in coverage_summary(table, counts, by=("run_id",), bootstrap=50)}
    assert sorted(out) == [("other", "0"), ("run", "0"), ("run", "5-19")]
    strong = out["run", "5-19"]
    assert strong.n_recorded == 2 and strong.metrics["accuracy"].mean == pytest.approx(0.5)
    assert strong.metrics["brier"].mean == pytest.approx((2 * 0.1**2 + 2 * 0.8**2) / 2)
    assert out["other", "0"].metrics["accuracy"].mean == 1.0
    with pytest.raises(ValueError, match="2 labels for 4 rows"):
        with_row_column(table, "x", ["a", "b"])


def test_lookback_summary_maps_steps_to_fractions() -> None:
    recs = [
        make_step({"Yes": p, "No": 1 - p}, event_id=e, step_index=t, rollout=r)
        for e in ("e1", "e2")
        for r in (0, 1)
        for t, p in enumerate((0.5, 0.6, 0.7 + 0.1 * r, 0.9))
    ]
    recs.append(make_step({"Yes": 0.5, "No": 0.5}, event_id="short"))  # merged steps
    out, skipped = lookback_summary(table_from_records(recs), by=("agent",), bootstrap=50)
    assert skipped == ("short",)
    assert [s.group for s in out] == [("m", "25%"), ("m", "50%"), ("m", "75%"), ("m", "100%")]
    q75 = out[2].metrics["brier"]
    assert q75.mean == pytest.approx((2 * 0.3**2 + 2 * 0.2**2) / 2)
    assert q75.rollout_std == pytest.approx(abs(2 * 0.3**2 - 2 * 0.2**2) / 2**0.5)


def test_pipeline_recoveries_pairs_within_model() -> None:
    def rec(agent: str, setting: str, event: str, p: float, cat: str) -> StepRecord:
        return make_step(
            {"Yes": p, "No": 1 - p}, agent=agent, setting=setting, event_id=event, category=cat
        )

    recs = []
    for agent in ("m1", "m2"):
        recs += [
            rec(agent, "memory_free", "e1", 0.9, "sports"),  # right
            rec(agent, "no_tools", "e1", 0.3, "sports"),  # wrong: recovery
            rec(agent, "memory_free", "e2", 0.2, "music"),  # wrong
            rec(agent, "no_tools", "e2", 0.6, "music"),  # right: regression
            rec(agent, "memory_free", "e3", 0.5, "music"),  # tie: not right
            rec(agent, "no_tools", "e3", 0.5, "music"),  # both wrong
        ]
    recs.append(rec("m3", "memory_free", "e1", 0.9, "sports"))  # no pair
    table = table_from_records(recs)
    out = pipeline_recoveries(table, {"setting": "memory_free"}, {"setting": "no_tools"})
    got = {r.topic: (r.n, r.recoveries, r.regressions, r.net) for r in out}
    assert got == {"sports": (2, 2, 0, 2), "music": (4, 0, 2, -2)}
    by_map = pipeline_recoveries(
        table, {"setting": "memory_free"}, {"setting": "no_tools"}, topic={"e1": "x"}
    )
    assert {r.topic for r in by_map} == {"x", "unknown"}
    assert {(r.n, r.net) for r in by_map} == {(2, 2), (4, -2)}
    with pytest.raises(ValueError, match="several records"):
        pipeline_recoveries(table, {"setting": "memory_free"}, {"setting": "no_tools"}, pair_by=())
