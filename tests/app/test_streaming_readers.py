"""`audit run`, `audit retrievals`, `stats longitudinal` and `stats coverage` read a log's step
columns and stream its records by offset, one at a time (`stats recoveries` and `stats coverage
--bins label` read only the columns), with the results of the full records to the last bit: on
a synthetic run (tool agents, notebooks), on real runs of the embedded world, on logs whose
notebooks give new evidence, and on logs of the agents' own evidence labels and stop reasons.
`audit run` counts every finding and keeps a few of each."""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from _streaming import MAX_LIVE, records_streamed, synthetic_run
from pastcast.agents import agent_spec
from pastcast.app import (
    DEFAULT_CALIBRATION,
    RunAuditPlan,
    audit_run_log,
    audit_run_retrievals,
    coverage_bins,
    longitudinal,
    read_runs,
    recoveries,
)
from pastcast.audit import audit_run, audit_served, calibration_items, served_documents
from pastcast.audit._runaudit import Finding
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.curate import Judge
from pastcast.dataset import Dataset
from pastcast.models import resolve_model
from pastcast.runlog import StepColumns, StepRecord, read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.scoring import table_from_records
from pastcast.scoring.analyses import (
    DURATION_EDGES,
    capture_gain,
    changes_by_evidence,
    coverage,
    coverage_summary,
    duration_bucket,
    episode_gain,
    evidence_index,
    evidence_label,
    evidence_summary,
    market_days,
    model_recoveries,
    paired_recoveries,
    step_changes,
    stop_counts,
    stop_reason_of,
    thirds,
)
from pastcast.world import build_world, world_from_spec


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return synthetic_run(tmp_path_factory.mktemp("synthetic") / "run.jsonl", 300)


@pytest.fixture(scope="module")
def world_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The heuristic research agent in both settings (searches, reads, notebooks), a baseline
    and the market on the embedded world."""
    world = build_world(0)
    out = tmp_path_factory.mktemp("world-run") / "run.jsonl"
    specs = (
        agent_spec("heuristic"),
        agent_spec("heuristic", setting="memory_on", label="heuristic-memory"),
        agent_spec("uniform"),
        agent_spec("market"),
    )
    index = EmbeddedIndex.in_memory(world.documents)
    run_benchmark(world.dataset, index, RunConfig(agents=specs, max_events=5), out, progress=False)
    return out


def _same(a: object, b: object) -> bool:
    return json.dumps(a, sort_keys=True, default=repr) == json.dumps(
        b, sort_keys=True, default=repr
    )


def test_the_run_audit_streams_and_equals_the_audit_of_records(
    synthetic: Path, world_run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = build_world(0)
    with records_streamed(monkeypatch) as seen:
        plain = audit_run_log(RunAuditPlan(run_log=synthetic))
        with_world = audit_run_log(
            RunAuditPlan(run_log=world_run)
        )  # the world's documents and dataset, by its id
    assert seen.parsed and seen.max_live <= MAX_LIVE, seen
    assert plain.audit == audit_run(StepColumns.held(read_run_log(synthetic)))
    full = audit_run(
        StepColumns.held(read_run_log(world_run)), documents=world.documents, dataset=world.dataset
    )
    assert with_world.audit == full
    assert full.documents_seen > 0 and "post_cutoff_text" in full.checks


def _longitudinal_of_records(paths: list[str], **kw: Any) -> dict[str, Any]:
    """``stats longitudinal`` as it was computed from every record in memory."""
    steps = list(read_runs(paths).runs.records())
    table = table_from_records(steps)
    groups = ("agent", "setting")
    index = evidence_index(steps)
    evidence = None
    if any(r.available is not None for r in index):
        cuts, rows = changes_by_evidence(table, index, **kw)
        calls = [
            [sum(c.name == t for c in s.episode.tool_calls) for t in ("search", "read")]
            for s in steps
        ]
        tools = np.array(calls, dtype=np.float64).reshape(-1, 2)
        capture = capture_gain(table, index, kw["metric"], kw["fallback"], tools)
        evidence = {
            "cut_points": list(cuts),
            "by_quartile": [asdict(r) for r in rows],
            "capture": asdict(capture),
        }
    return {
        "run_logs": paths,
        "by": list(groups),
        "metric": kw["metric"],
        "thirds": [asdict(t) for t in thirds(table, groups, **kw, market_only=False)],
        "step_changes": [asdict(s) for s in step_changes(table, groups, **kw)],
        "episode_gain": [asdict(g) for g in episode_gain(table, groups, **kw)],
        "evidence": evidence,
    }


def _scoring_tests() -> None:
    """The scoring tests' folder on the path: their logs are reused here."""
    here = str(Path(__file__).resolve().parents[1] / "scoring")
    if here not in sys.path:
        sys.path.insert(0, here)


def _stats_logs(tmp_path: Path) -> list[str]:
    """The stats tests' logs: notebooks whose new evidence differs by model and step."""
    _scoring_tests()
    from test_stats_cli import _logs, _steps

    return _logs(tmp_path, _steps())


def _hindcast_log(tmp_path: Path, which: str) -> list[str]:
    """A log of the Hindcast tests: ``table1`` (the agents' own evidence labels) or ``section7``
    (pairs of pipelines, their stop reasons)."""
    _scoring_tests()
    from test_hindcast_sections import _section7, _table1_steps, _write_log

    folder = tmp_path / which
    folder.mkdir()
    steps = _table1_steps() if which == "table1" else _section7()
    return [str(_write_log(folder, steps))]


def _records(paths: list[str]) -> list[StepRecord]:
    """Every record of the logs, in memory (the expected results' input)."""
    return [s for p in paths for s in read_run_log(p).steps]


@pytest.mark.parametrize("metric", ["brier", "log_loss"])
def test_longitudinal_streams_and_equals_the_statistics_of_records(
    synthetic: Path,
    world_run: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    metric: str,
) -> None:
    kw: dict[str, Any] = {"metric": metric, "fallback": "uniform", "bootstrap": 200, "seed": 1}
    runs = [[str(synthetic)], [str(world_run)], _stats_logs(tmp_path)]
    expected = [_longitudinal_of_records(paths, **kw) for paths in runs]
    assert expected[2]["evidence"] is not None  # the evidence analyses are compared too
    with records_streamed(monkeypatch) as seen:
        got = [longitudinal(paths, **kw).values for paths in runs]  # type: ignore[arg-type]
    assert seen.parsed and seen.max_live <= MAX_LIVE, seen
    for a, b in zip(got, expected, strict=True):
        assert _same(a, b)


def _coverage_of_records(paths: list[str], kind: str, bins: str, **kw: Any) -> dict[str, Any]:
    """``stats coverage`` as it was computed from every record in memory."""
    steps = _records(paths)
    table = table_from_records(steps)
    groups, cuts = ("run_id", "agent", "setting"), (1, 5, 20)
    if bins == "label":
        out = evidence_summary(table, [evidence_label(s) for s in steps], groups, **kw)
    else:
        counts = [coverage(s, kind) for s in steps]  # type: ignore[arg-type]
        out = coverage_summary(table, counts, cuts, groups, **kw)
    return {
        "run_logs": paths,
        "bins": bins,
        "kind": kind,
        "edges": list(cuts),
        "groups": [g.as_dict() for g in out],
    }


@pytest.mark.parametrize(
    ("kind", "bins"), [("shown", "count"), ("read", "count"), ("shown", "label")]
)
def test_coverage_streams_and_equals_the_bins_of_records(
    synthetic: Path,
    world_run: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    bins: str,
) -> None:
    kw: dict[str, Any] = {"fallback": "uniform", "bootstrap": 200, "seed": 1}
    runs = [[str(synthetic)], [str(world_run)], _stats_logs(tmp_path)]
    runs.append(_hindcast_log(tmp_path, "table1"))
    expected = [_coverage_of_records(paths, kind, bins, **kw) for paths in runs]
    assert len({len(e["groups"]) for e in expected}) > 1  # bins differ from log to log
    with records_streamed(monkeypatch) as seen:
        got = [
            coverage_bins(paths, kind=kind, bins=bins, **kw).values  # type: ignore[arg-type]
            for paths in runs
        ]
    # the documents seen are in the tool results: the records are streamed; the labels are
    # step columns: no record is read in full
    assert (seen.parsed > 0) == (bins == "count") and seen.max_live <= MAX_LIVE, seen
    for a, b in zip(got, expected, strict=True):
        assert _same(a, b)


def _selection(text: str) -> dict[str, str]:
    return dict(part.split("=") for part in text.split(","))


def _recoveries_of_records(
    paths: list[str], a: str, b: str, ds: Dataset | None, models: dict[str, tuple[str, str]]
) -> dict[str, Any]:
    """``stats recoveries`` as it was computed from every record in memory."""
    steps = _records(paths)
    table = table_from_records(steps)
    sel_a, sel_b = _selection(a), _selection(b)

    def run(key: Callable[[StepRecord], str], least: int = 0) -> list[dict[str, Any]]:
        rows = paired_recoveries(table, sel_a, sel_b, [key(s) for s in steps], (), least)
        return [asdict(r) | {"net": r.net} for r in rows]

    def topic(r: StepRecord) -> str:
        if ds is not None:
            with contextlib.suppress(KeyError):
                return ds.event(r.event_id).category or r.category or "unknown"
        return r.category or "unknown"

    values: dict[str, Any] = {
        "run_logs": paths,
        "a": sel_a,
        "b": sel_b,
        "min_markets": 4,
        "topics": run(topic, 4),
        "stops": run(stop_reason_of),
        "stop_counts": [
            {"agent": agent, "setting": setting, "counts": counts}
            for (agent, setting), counts in stop_counts(
                table, [stop_reason_of(s) for s in steps]
            ).items()
        ],
    }
    if ds is not None:
        known = ds

        def duration(r: StepRecord) -> str:
            event = known.event(r.event_id)
            res = known.resolutions.get(r.event_id)
            end = None if res is None else res.resolved_at
            return duration_bucket(market_days(event.open_time, event.close_time, end))

        values["durations"] = run(duration)
        values["duration_edges_days"] = list(DURATION_EDGES)
    if models:
        chosen = {k: (_selection(x), _selection(y)) for k, (x, y) in models.items()}
        values["models"] = [asdict(r) | {"net": r.net} for r in model_recoveries(table, chosen)]
    return values


def test_recoveries_stream_and_equal_those_of_records(
    synthetic: Path, world_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = build_world(0)
    cases: list[tuple[list[str], str, str, str | None, dict[str, tuple[str, str]]]] = [
        (
            [str(synthetic)],
            "agent=model-0,setting=memory_free",
            "agent=uniform",
            None,
            {
                "m0": ("agent=model-0,setting=memory_free", "agent=uniform"),
                "m1": ("agent=model-1,setting=memory_on", "agent=uniform"),
            },
        ),
        ([str(world_run)], "agent=heuristic", "agent=uniform", "world:0", {}),
        (
            _hindcast_log(tmp_path, "section7"),
            "agent=agent",
            "agent=base",
            None,
            {"m1": ("agent=agent", "agent=base")},
        ),
    ]
    expected = [
        _recoveries_of_records(p, a, b, world.dataset if d else None, m) for p, a, b, d, m in cases
    ]
    assert all(e["topics"] or e["stops"] for e in expected)
    assert {s["topic"] for s in expected[2]["stops"]} >= {"confident", "budget"}
    with records_streamed(monkeypatch) as seen:
        got = [recoveries(p, a, b, dataset=d, models=m or None).values for p, a, b, d, m in cases]
    assert seen.parsed == 0, seen  # the stop reasons are step columns: no record read in full
    for x, y in zip(got, expected, strict=True):
        assert _same(x, y)


def test_the_retrieval_audit_streams_and_equals_the_audit_of_records(
    world_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    shutil.copytree(world_run.parent, run)  # the audit is written beside the log
    log = run / world_run.name
    answers = tmp_path / "judge.json"
    answers.write_text(json.dumps([json.dumps({"reveals_later": False, "reason": "clean"})]))
    judge, prompt = f"scripted:{answers}", "audit_retrieval.v2"
    kw: dict[str, Any] = {"sample": 12, "seed": 0, "draws": 500}
    with records_streamed(monkeypatch) as seen:
        got = audit_run_retrievals(
            log, judge, positives=5, negatives=5, prompt=prompt, cache=tmp_path / "cache", **kw
        )
    assert seen.parsed and seen.max_live <= MAX_LIVE, seen
    world, known = build_world(0), world_from_spec(DEFAULT_CALIBRATION)
    items = calibration_items(
        known.dataset,
        known.documents,
        known.hindsight_ids,
        known.evidence,
        positives=5,
        negatives=5,
        seed=0,
    )
    held = StepColumns.held(read_run_log(log))
    served, docs, unknown = served_documents(held, world.documents)
    expected = audit_served(
        served,
        docs,
        world.dataset,
        Judge(resolve_model(judge), max_tokens=160),
        items,
        run_log=str(held.path),
        unknown_documents=len(unknown),
        calibration_name=DEFAULT_CALIBRATION,
        prompt=prompt,
        **kw,
    )
    assert expected.served > 12 and expected.judged == 12
    assert got.audit == expected


def test_the_run_audit_counts_every_finding_and_keeps_a_few_of_each(
    synthetic: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = audit_run(StepColumns.held(read_run_log(synthetic)), examples=10**9)
    assert len(every.findings) == every.total > 1000  # the synthetic log is not a replay
    with records_streamed(monkeypatch) as seen:
        got = audit_run_log(RunAuditPlan(run_log=synthetic, examples=3)).audit
    assert seen.parsed and seen.max_live <= MAX_LIVE, seen
    assert got.counts() == every.counts() and got.total == every.total and not got.ok
    firsts: list[Finding] = []  # the first three of each check, in the order of all of them
    for f in every.findings:
        if sum(g.check == f.check for g in firsts) < 3:
            firsts.append(f)
    assert got.findings == tuple(firsts) and len(firsts) == 3 * len(every.counts())
    assert audit_run_log(RunAuditPlan(run_log=synthetic, examples=0)).audit.findings == ()
