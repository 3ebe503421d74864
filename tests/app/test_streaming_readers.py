"""`audit run` and `stats longitudinal` read a log's step columns and stream its records by
offset, one at a time, with the results of the full records to the last bit: on a synthetic run
(tool agents, notebooks), on real runs of the embedded world, and on logs whose notebooks give
new evidence."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from _streaming import MAX_LIVE, records_streamed, synthetic_run
from pastcast.agents import agent_spec
from pastcast.app import audit_run_log, longitudinal, read_runs
from pastcast.audit import audit_run
from pastcast.corpus import EmbeddedIndex
from pastcast.runlog import read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.scoring import (
    capture_gain,
    changes_by_evidence,
    episode_gain,
    evidence_index,
    step_changes,
    table_from_records,
    thirds,
)
from pastcast.world import build_world

pytestmark = pytest.mark.slow  # real runs, a synthetic one, each export made twice


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
        plain = audit_run_log(synthetic)
        with_world = audit_run_log(world_run)  # the world's documents and dataset, by its id
    assert seen.parsed and seen.max_live <= MAX_LIVE, seen
    assert plain.audit == audit_run(read_run_log(synthetic))
    full = audit_run(read_run_log(world_run), documents=world.documents, dataset=world.dataset)
    assert with_world.audit == full
    assert full.documents_seen > 0 and "post_cutoff_text" in full.checks


def _longitudinal_of_records(paths: list[str], **kw: Any) -> dict[str, Any]:
    """``stats longitudinal`` as it was computed from every record in memory."""
    steps = list(read_runs(paths).steps)
    table = table_from_records(steps)
    groups = ("agent", "setting")
    index = evidence_index(steps)
    evidence = None
    if any(r.available is not None for r in index):
        cuts, rows = changes_by_evidence(steps, index, **kw)
        capture = capture_gain(steps, index, kw["metric"], kw["fallback"])
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


def _stats_logs(tmp_path: Path) -> list[str]:
    """The stats tests' logs: notebooks whose new evidence differs by model and step."""
    here = str(Path(__file__).resolve().parents[1] / "scoring")
    if here not in sys.path:
        sys.path.insert(0, here)
    from test_stats_cli import _logs, _steps

    return _logs(tmp_path, _steps())


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
