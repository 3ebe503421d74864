"""`pastcast audit retrievals` on a real run of the embedded world: the served documents of its
log, the result written beside it, a rerun answered from the cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.agents import agent_spec
from pastcast.audit import read_retrieval_audit, served_documents
from pastcast.cli import app
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.runlog import StepColumns, read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.world import build_world

runner = CliRunner()


@pytest.fixture(scope="module")
def run_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("retrievals")
    world = build_world(0)
    index = EmbeddedIndex.build(world.documents, root / "index")
    events = {e.id for e in world.dataset.events[:3]}
    dataset = world.dataset.with_steps(s for s in world.dataset.steps if s.event_id in events)
    out = root / "run.jsonl"
    run_benchmark(dataset, index, RunConfig(agents=(agent_spec("heuristic"),)), out, progress=False)
    return out


def test_served_documents_are_those_the_tools_exposed(run_log: Path) -> None:
    log = read_run_log(run_log)
    world = build_world(0)
    served, _docs, unknown = served_documents(StepColumns.held(log), world.documents)
    exposed = {d for r in log.steps for c in r.episode.tool_calls for d in c.doc_ids}
    assert {s.doc_id for s in served} == exposed and not unknown
    assert all(s.bucket != "after_cutoff" for s in served)
    assert len({s.bucket for s in served}) >= 2


def test_the_command_writes_the_audit_and_a_rerun_costs_nothing(
    run_log: Path, tmp_path: Path
) -> None:
    answers = tmp_path / "judge.json"
    answers.write_text(json.dumps([json.dumps({"reveals_later": False, "reason": "clean"})]))
    args = ["audit", "retrievals", str(run_log), "--judge", f"scripted:{answers}"]
    args += ["--prompt", "audit_retrieval.v2"]
    args += ["--sample", "12", "--positives", "5", "--negatives", "5", "--draws", "500"]
    first = runner.invoke(app, [*args, "--json"])
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert data["judged"] == 12 and data["calls"] == 22 and data["cached"] == 0
    assert data["judge_accuracy"]["sensitivity"] == 0.0 and data["overall"]["corrected"] is None
    audit = read_retrieval_audit(run_log)
    assert audit is not None and audit.judged == 12
    again = runner.invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "22 of 22 calls cached" in again.stdout
    assert "no better than chance" in again.stdout


def test_a_world_without_planted_documents_cannot_calibrate(run_log: Path) -> None:
    res = runner.invoke(
        app,
        [
            "audit",
            "retrievals",
            str(run_log),
            "--judge",
            "scripted:x.json",
            "--calibration",
            "world:1",
        ],
    )
    assert res.exit_code == 2
    assert "--calibration" in res.output and "hindsight" in res.output


def test_the_leakage_card_reads_the_audit_beside_the_log(run_log: Path, tmp_path: Path) -> None:
    from pastcast.app import read_runs
    from pastcast.app._audits import run_leakage_cards
    from pastcast.audit._retrievals import retrieval_audit_path

    copy = tmp_path / "run.jsonl"  # a copy of the run, so the module's log stays unaudited
    copy.write_bytes(run_log.read_bytes())
    header = run_log.with_name("run.header.json")
    (tmp_path / "run.header.json").write_bytes(header.read_bytes())
    (card,) = run_leakage_cards(read_runs([copy]))
    assert card.served_leakage is None and card.served_leakage_note == ""
    audit = read_retrieval_audit(run_log)
    if audit is None:  # the command's test did not run first: audit with a judge said clean
        answers = tmp_path / "judge.json"
        answers.write_text(json.dumps([json.dumps({"reveals_later": False, "reason": "x"})]))
        args = ["audit", "retrievals", str(copy), "--judge", f"scripted:{answers}"]
        args += ["--prompt", "audit_retrieval.v2"]
        assert runner.invoke(app, [*args, "--sample", "6", "--draws", "200"]).exit_code == 0
    else:
        retrieval_audit_path(copy).write_bytes(retrieval_audit_path(run_log).read_bytes())
    (card,) = run_leakage_cards(read_runs([copy]))
    # the scripted judge flags nothing, so it is no better than chance: no number, and why
    assert card.served_leakage is None and "no better than chance" in card.served_leakage_note
    rows = dict(card.rows())
    assert "no better than chance" in rows["served-document leakage"]


def test_the_prompt_is_chosen_and_recorded(run_log: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run.jsonl"  # a copy: the module's log keeps its own audit
    copy.write_bytes(run_log.read_bytes())
    header = run_log.with_name("run.header.json")
    (tmp_path / "run.header.json").write_bytes(header.read_bytes())
    nothing = {"reported_outcome": "not stated", "outcome_quote": None}
    answers = tmp_path / "judge.json"
    answers.write_text(
        json.dumps([json.dumps({**nothing, "latest_date": None, "date_quote": None})])
    )
    args = ["audit", "retrievals", str(copy), "--judge", f"scripted:{answers}", "--draws", "200"]
    args += ["--sample", "4", "--positives", "2", "--negatives", "2"]
    res = runner.invoke(app, [*args, "--prompt", "audit_retrieval.v3", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert (data["prompt"], data["decision"], data["errors"]) == (
        "audit_retrieval.v3",
        "grounded",
        0,
    )
    assert data["judge_accuracy"]["specificity"] == 1.0
    bad = runner.invoke(app, [*args, "--prompt", "zero_shot.v1"])
    assert bad.exit_code == 2 and "--prompt" in bad.output and "audit_retrieval.v3" in bad.output
