"""Memory-on against memory-free resource ratios over matched records."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from scoring_builders import make_step

from pastcast.records import EpisodeRecord, ToolCall, Usage
from pastcast.runlog import StepRecord
from pastcast.scoring import ScoreTable, ratio_bootstrap, table_from_records
from pastcast.scoring.analyses import EvidenceRow, cost_by_step, memory_cost, resource_rows


def rec(
    setting: str, event: str, t: int, cost: float, tokens: int, tools: int, agent: str = "a"
) -> StepRecord:
    calls = tuple(ToolCall(name="search", arguments={}, result=None) for _ in range(tools))
    episode = EpisodeRecord(
        usage=Usage(model_calls=1, input_tokens=tokens, cost_usd=cost), tool_calls=calls
    )
    return make_step(
        {"Yes": 0.5, "No": 0.5},
        setting=setting,
        event_id=event,
        step_index=t,
        agent=agent,
        episode=episode,
    )


def records() -> list[StepRecord]:
    on, free = "memory_on", "memory_free"
    return [
        rec(on, "e1", 0, 1.0, 100, 2),
        rec(free, "e1", 0, 1.0, 100, 2),
        rec(on, "e2", 0, 2.0, 300, 4),
        rec(free, "e2", 0, 1.0, 100, 2),
        rec(on, "e1", 1, 1.0, 50, 1),
        rec(free, "e1", 1, 2.0, 200, 4),
        rec(on, "e2", 2, 0.5, 10, 0),
        rec(free, "e2", 2, 2.0, 100, 4),
        rec(on, "e3", 1, 9.0, 900, 9),  # no memory-free twin: ignored
        rec(free, "e2", 1, 5.0, 500, 5),  # no memory-on twin: ignored
        rec(free, "e2", 1, 5.0, 500, 5, agent="b"),  # another agent, unmatched
    ]


def scored(recs: list[StepRecord] | None = None) -> tuple[ScoreTable, NDArray[np.float64]]:
    """The score table of ``recs`` (by default ``records()``) and their resources."""
    recs = records() if recs is None else recs
    return table_from_records(recs), resource_rows(recs)


def test_memory_cost_ratios_by_phase() -> None:
    table, usage = scored()
    out = {(r.phase, r.resource): r for r in memory_cost(table, bootstrap=200, usage=usage)}
    first = out["first", "cost_usd"]
    assert (first.group, first.n_matched, first.n_events) == (("a",), 2, 2)
    assert (first.on_total, first.free_total) == (3.0, 2.0)
    assert first.ratio.mean == pytest.approx(1.5) and first.change.mean == pytest.approx(0.5)
    later = out["later", "cost_usd"]
    assert later.n_matched == 2 and later.ratio.mean == pytest.approx(1.5 / 4.0)
    assert out["later", "input_tokens"].ratio.mean == pytest.approx(60 / 300)
    assert out["later", "tool_calls"].ratio.mean == pytest.approx(1 / 8)
    assert out["all", "model_calls"].ratio.mean == pytest.approx(1.0)
    assert math.isnan(out["all", "output_tokens"].ratio.mean)  # nothing logged
    r = out["all", "cost_usd"]
    assert r.ratio.ci_low <= r.ratio.mean <= r.ratio.ci_high
    assert r.change.ci_low == pytest.approx(r.ratio.ci_low - 1)


def test_memory_cost_pooled_and_errors() -> None:
    table, usage = scored()
    pooled = memory_cost(table, by=(), resources=("cost_usd",), bootstrap=0, usage=usage)
    assert [(r.group, r.phase) for r in pooled] == [((), "first"), ((), "later"), ((), "all")]
    assert math.isnan(pooled[0].ratio.ci_low)  # no draws
    with pytest.raises(ValueError, match="two memory_on records"):
        twice, use = scored([*records(), records()[0]])
        memory_cost(twice, usage=use)
    with pytest.raises(ValueError, match="group by agent only"):
        memory_cost(table, by=("event",), usage=usage)


def test_ratio_bootstrap_matches_naive_loop() -> None:
    rng = np.random.default_rng(2)
    cluster = rng.integers(0, 9, size=60)
    num, den = rng.uniform(size=60) + cluster * 0.05, rng.uniform(size=60)
    low, high = ratio_bootstrap(cluster, num, den, 400, np.random.default_rng(4))
    draw = np.random.default_rng(4)
    ids = np.unique(cluster)
    ratios = []
    for _ in range(400):
        pick = draw.integers(0, ids.size, size=ids.size)
        rows = np.concatenate([np.flatnonzero(cluster == ids[k]) for k in pick])
        ratios.append(num[rows].sum() / den[rows].sum())
    assert (low[0], high[0]) == tuple(pytest.approx(x) for x in np.percentile(ratios, [2.5, 97.5]))


def test_memory_cost_by_evidence_quartile() -> None:
    index = [
        EvidenceRow("a", "e1", 1, None, 0, 1.0, 1),  # lowest quartile
        EvidenceRow("a", "e2", 2, None, 0, 4.0, 1),  # highest
        EvidenceRow("b", "e2", 1, None, 0, 2.0, 1),
        EvidenceRow("b", "e1", 1, None, 0, 3.0, 1),
    ]  # cut points 1.75, 2.5, 3.25
    table, usage = scored()
    kw: dict[str, Any] = {"resources": ("cost_usd",), "bootstrap": 0, "usage": usage}
    out = {r.phase: r for r in memory_cost(table, evidence=index, **kw)}
    assert out["later Q1"].ratio.mean == pytest.approx(1.0 / 2.0)
    assert out["later Q4"].ratio.mean == pytest.approx(0.5 / 2.0)
    assert out["later Q2"].n_matched == out["later Q3"].n_matched == 0


def test_cost_by_step_is_the_mean_per_forecast_at_each_step() -> None:
    table, usage = scored()
    rows = {(r.group, r.step): r for r in cost_by_step(table, usage=usage)}
    # memory-on at t = 1 (step index 0): e1 1.0 and e2 2.0; at t = 2: e1 1.0 and e3 9.0
    on1, on2 = rows[("memory_on",), 1], rows[("memory_on",), 2]
    assert (on1.mean, on1.n_forecasts, on1.n_events) == (1.5, 2, 2)
    assert (on2.mean, on2.n_forecasts, on2.n_events) == (5.0, 2, 2)
    # memory-free at t = 2: e1 2.0, e2 5.0 (agent a) and e2 5.0 (agent b): three forecasts, 2 events
    free2 = rows[("memory_free",), 2]
    assert (free2.mean, free2.n_forecasts, free2.n_events) == (4.0, 3, 2)
    assert rows[("memory_on",), 3].mean == 0.5
    tokens = {
        (r.group, r.step): r.mean for r in cost_by_step(table, (), "input_tokens", usage=usage)
    }
    assert tokens[(), 1] == pytest.approx((100 + 100 + 300 + 100) / 4)
    with pytest.raises(ValueError, match="unknown resource"):
        cost_by_step(table, resource="dollars", usage=usage)


def test_resource_rows_are_read_beside_the_table_row_for_row() -> None:
    table, usage = scored()
    assert usage.shape == (len(table), 5) and usage[2].tolist() == [2.0, 300.0, 0.0, 1.0, 4.0]
    with pytest.raises(ValueError, match="not one row of 5"):
        cost_by_step(table, usage=usage[:3])
