"""New-evidence index, quartile step changes, evidence capture and episode gain, by hand; and
from the notebook records of a memory-on run, without the agents."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from scoring_builders import make_step

from pastcast.agents import agent_spec
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.records import EpisodeRecord, Notebook, ToolCall
from pastcast.runlog import StepRecord, records_table
from pastcast.runner import RunConfig, run_benchmark
from pastcast.scoring import table_from_records
from pastcast.scoring.analyses import (
    EVIDENCE_INPUTS,
    EvidenceCorrelation,
    capture_gain,
    changes_by_evidence,
    evidence_index,
    evidence_index_of,
    evidence_quartiles,
    new_entries,
    notebook_rows,
)
from pastcast.world import WorldConfig, build_world

CUTOFFS = [datetime(2025, 1, d, tzinfo=UTC) for d in (1, 5, 10)]


def notebook(*dates: str) -> Notebook:
    ledger = [
        {"id": f"E{i}", "claim": "c", "date_observed": d, "status": "superseded" if i else "active"}
        for i, d in enumerate(dates)
    ]
    return Notebook.model_validate(
        {"assessment": {"probabilities": {"Yes": 0.5, "No": 0.5}}, "evidence_ledger": ledger}
    )


def step(
    agent: str, t: int, p: float, nb: Notebook | None = None, rollout: int = 0, **kw: object
) -> StepRecord:
    return make_step(
        {"Yes": p, "No": 1 - p},
        agent=agent,
        step_index=t,
        cutoff=CUTOFFS[t],
        rollout=rollout,
        episode=EpisodeRecord(notebook_out=nb),
        **{"setting": "memory_on", **kw},
    )


def _brier(p: float) -> float:
    return 2 * (1 - p) ** 2


def records() -> list[StepRecord]:
    # New at step 1: dated Jan 1..Jan 4 (cutoffs are midnights); at step 2: Jan 5..Jan 9.
    return [
        step("a", 0, 0.5, notebook("2025-01-01")),  # step 0: no previous date, never counted
        step("a", 1, 0.6, notebook("2024-12-30", "2025-01-01", "2025-01-04", "2025-01-05")),
        step("a", 2, 0.9, notebook("2025-01-05", "2025-01-07", "2025-01-09")),
        step("a", 1, 0.5, notebook("2025-01-02"), rollout=1),  # a: (2 + 1) / 2 = 1.5
        step("b", 0, 0.5, notebook()),
        step("b", 1, 0.5, notebook("2025-01-03", "2025-01-03")),  # 2
        step("b", 2, 0.55, notebook("2025-01-06")),  # 1
        step("c", 0, 0.5, notebook()),
        step("c", 1, 0.7),  # no notebook: no count
        step("c", 2, 0.95, notebook(*["2025-01-08"] * 4)),  # 4
        # memory-free forecasts of model a use a's index (from b and c's notebooks)
        step("a", 0, 0.2, setting="memory_free"),
        step("a", 1, 0.4, setting="memory_free"),
        step("a", 2, 0.3, setting="memory_free"),
    ]


def test_new_entries_window_and_midday_cutoff() -> None:
    nb = notebook("2025-01-04", "2025-01-05", "2025-01-06")
    assert new_entries(nb, CUTOFFS[0], CUTOFFS[1]) == 1  # Jan 5 is not over at Jan 5 00:00
    assert new_entries(nb, CUTOFFS[0], datetime(2025, 1, 5, 12, tzinfo=UTC)) == 2
    assert new_entries(None, CUTOFFS[0], CUTOFFS[1]) is None


def test_index_leaves_the_model_out() -> None:
    idx = {(r.agent, r.step): r for r in evidence_index(records())}
    assert sorted(idx) == [(m, t) for m in "abc" for t in (1, 2)]
    assert (idx["a", 1].own, idx["a", 1].n_rollouts) == (1.5, 2)
    assert (idx["a", 1].available, idx["a", 1].n_peers) == (2.0, 1)  # c has no notebook
    assert idx["b", 1].available == 1.5
    assert (idx["c", 1].own, idx["c", 1].available) == (None, 1.75)
    assert [idx[m, 2].available for m in "abc"] == [2.5, 3.5, 2.0]
    assert [idx[m, 2].own for m in "abc"] == [3.0, 1.0, 4.0]


def test_the_index_of_step_columns_reads_only_the_notebooks_it_counts() -> None:
    recs = records()
    cols = records_table(recs).select(list(EVIDENCE_INPUTS))  # the rows a companion holds
    rows = notebook_rows(cols.to_pydict())
    assert [(recs[i].agent, recs[i].step_index) for i in rows] == [
        ("a", 1), ("a", 2), ("a", 1), ("b", 1), ("b", 2), ("c", 1), ("c", 2)
    ]  # fmt: skip
    batches = [b.to_pydict() for b in cols.to_batches(max_chunksize=4)]  # rows across batches
    notebooks = [recs[i].episode.notebook_out for i in rows]
    assert evidence_index_of(batches, iter(notebooks)) == evidence_index(recs)
    with pytest.raises(ValueError):  # a notebook for each row picked, no fewer
        evidence_index_of(batches, notebooks[:-1])


def test_changes_by_evidence_quartiles() -> None:
    # A values: 2, 1.5, 1.75 (step 1); 2.5, 3.5, 2 (step 2) -> sorted 1.5 1.75 2 2 2.5 3.5
    assert evidence_quartiles(evidence_index(records())) == (1.8125, 2.0, 2.375)
    recs = records()
    cuts, rows = changes_by_evidence(table_from_records(recs), evidence_index(recs), bootstrap=50)
    assert cuts == (1.8125, 2.0, 2.375)
    got = {(r.group, r.quartile): r for r in rows}
    # memory-on transitions (rollout 0): a 0->1 (A=2: Q2), a 1->2 (2.5: Q4),
    # b 0->1 (1.5: Q1), b 1->2 (3.5: Q4), c 0->1 (1.75: Q1), c 1->2 (2: Q2)
    on = {q: got[("memory_on",), q] for q in (1, 2, 3, 4)}
    assert [on[q].n_transitions for q in (1, 2, 3, 4)] == [2, 2, 0, 2]
    assert on[1].change.mean == pytest.approx(
        ((_brier(0.5) - _brier(0.5)) + (_brier(0.7) - _brier(0.5))) / 2
    )
    assert on[4].change.mean == pytest.approx(
        ((_brier(0.9) - _brier(0.6)) + (_brier(0.55) - _brier(0.5))) / 2
    )
    assert math.isnan(on[3].change.mean)
    off = {q: got[("memory_free",), q] for q in (1, 2, 3, 4)}
    assert off[2].change.mean == pytest.approx(_brier(0.4) - _brier(0.2))
    assert off[4].change.mean == pytest.approx(_brier(0.3) - _brier(0.4))
    assert off[1].n_transitions == off[3].n_transitions == 0


def capture(recs: list[StepRecord]) -> EvidenceCorrelation:
    """``capture_gain`` over the score table of ``recs`` and their search and read counts."""
    calls = [
        [sum(c.name == t for c in r.episode.tool_calls) for t in ("search", "read")] for r in recs
    ]
    counts = np.array(calls, dtype=np.float64).reshape(-1, 2)
    return capture_gain(table_from_records(recs), evidence_index(recs), tool_counts=counts)


def test_capture_gain_and_spearman() -> None:
    out = capture(records())
    by = {m.agent: m for m in out.models}
    assert by["a"].kappa == pytest.approx((1.5 * 2 + 3 * 2.5) / (2**2 + 2.5**2))
    assert by["b"].kappa == pytest.approx((2 * 1.5 + 1 * 3.5) / (1.5**2 + 3.5**2))
    assert (by["c"].kappa, by["c"].n_pairs) == (pytest.approx(2.0), 1)
    assert by["a"].gain == pytest.approx(_brier(0.5) - _brier(0.9))  # memory-on only
    assert by["b"].gain == pytest.approx(_brier(0.5) - _brier(0.55))
    # kappa order b < a < c matches gain order b < a < c
    assert (out.n_models, out.spearman_rho) == (3, pytest.approx(1.0))
    two = capture([r for r in records() if r.agent != "c"])
    assert two.n_models == 2 and math.isnan(two.spearman_rho)


def with_tools(record: StepRecord, searches: int, reads: int) -> StepRecord:
    names = ["search"] * searches + ["read"] * reads + ["python"]
    calls = tuple(ToolCall(seq=i, name=n, arguments={}) for i, n in enumerate(names))
    episode = record.episode.model_copy(update={"tool_calls": calls})
    return record.model_copy(update={"episode": episode})


def test_the_gain_is_set_beside_the_search_and_read_counts() -> None:
    # per memory-on forecast: searches a 2, b 1, c 3 (the gain's order b < a < c: rho 1);
    # reads a 1, b 3, c 2 (ranks 1, 3, 2 against 2, 1, 3: rho 1 - 6 * 6 / 24 = -0.5)
    counts = {"a": (2, 1), "b": (1, 3), "c": (3, 2)}
    recs = [
        with_tools(r, *counts[r.agent]) if r.setting == "memory_on" else with_tools(r, 9, 9)
        for r in records()
    ]
    out = capture(recs)
    by = {m.agent: m for m in out.models}
    assert (by["a"].searches, by["a"].reads) == (2.0, 1.0)  # memory-free forecasts not counted
    assert out.search_rho == pytest.approx(1.0)
    assert out.read_rho == pytest.approx(-0.5)
    assert math.isnan(capture(records()).search_rho)  # no search anywhere: no correlation


def test_no_peer_counts_is_an_error() -> None:
    recs = [step("a", 0, 0.5), step("a", 1, 0.5)]
    with pytest.raises(ValueError, match="no event-step"):
        changes_by_evidence(table_from_records(recs), evidence_index(recs))
    assert np.isnan(capture(recs).models[0].kappa)


def test_a_memory_on_run_gives_evidence_counts_without_the_agents(tmp_path: Path) -> None:
    # Two memory-on heuristics on the embedded world: each one's notebooks are the other's peers.
    world = build_world(0, WorldConfig(n_events=4, n_documents=400))
    specs = (
        agent_spec("heuristic", setting="memory_on", label="h-recent"),
        agent_spec("heuristic", setting="memory_on", label="h-slow", half_life_days=30.0),
    )
    out = tmp_path / "run.jsonl"
    index = EmbeddedIndex.in_memory(world.documents)
    run_benchmark(world.dataset, index, RunConfig(agents=specs), out, progress=False)
    episodes = [json.loads(line)["episode"] for line in out.read_text().splitlines()]
    assert episodes and all(isinstance(e["notebook_out"], dict) for e in episodes)
    # Scoring reads the notebook records as they are: the agents are never imported.
    script = (
        "import sys\n"
        "from pastcast.runlog import read_run_log\n"
        "from pastcast.scoring.analyses import evidence_index\n"
        f"rows = evidence_index(read_run_log({str(out)!r}).steps)\n"
        "assert 'pastcast.agents' not in sys.modules, 'scoring imported the agents'\n"
        "print(sum(r.own is not None for r in rows), sum(r.available is not None for r in rows))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    own, available = map(int, done.stdout.split())
    assert own > 0 and available > 0
