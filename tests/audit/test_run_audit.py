"""`audit run` passes on clean runs and fails on corrupted ones; planted hindsight rewrites are
kept out of the corpus by the content screen and never reach an agent."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pastcast.agents import agent_spec
from pastcast.audit import RunAudit, audit_run
from pastcast.cli import app
from pastcast.corpus import CorpusBackend
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sources import ContentScreen
from pastcast.dataset import Dataset
from pastcast.runlog import StepColumns, header_path, read_run_log, read_step_columns
from pastcast.runner import RunConfig, run_benchmark
from pastcast.world import World, WorldConfig, build_world

runner = CliRunner()


@pytest.fixture(scope="module")
def world() -> World:
    return build_world(0, WorldConfig(hindsight_fraction=0.3))


def _subset(ds: Dataset, event_ids: list[str]) -> Dataset:
    return ds.with_steps(s for s in ds.steps if s.event_id in set(event_ids))


def _planted_events(world: World) -> list[str]:
    texts = [d.text for d in world.documents if d.id in world.hindsight_ids]
    return [e.id for e in world.dataset.events if any(e.title in t for t in texts)]


def _run(dataset: Dataset, index: CorpusBackend, out: Path, scripted: Path) -> Path:
    answer = json.dumps({"probabilities": {"Yes": 0.5, "No": 0.5}, "rationale": "even odds"})
    scripted.write_text(json.dumps([answer]))
    specs = (
        agent_spec("heuristic"),
        agent_spec("heuristic", setting="memory_on", label="heuristic-memory"),
        agent_spec("uniform"),
        agent_spec("no-tools", model=f"scripted:{scripted}"),
    )
    run_benchmark(dataset, index, RunConfig(agents=specs), out, progress=False)
    return out


@pytest.fixture(scope="module")
def screened(world: World, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ContentScreen]:
    """A run over the corpus as built (content screen on), on the events with a planted rewrite."""
    root = tmp_path_factory.mktemp("screened")
    screen = ContentScreen()
    index = EmbeddedIndex.build(screen.screen(world.documents), root / "index")
    dataset = _subset(world.dataset, _planted_events(world)[:8])
    return _run(dataset, index, root / "run.jsonl", root / "answers.json"), screen


def _audit(world: World, path: Path) -> RunAudit:
    log = StepColumns.held(read_run_log(path))  # the records in memory
    return audit_run(log, documents=world.documents, dataset=world.dataset)


def test_a_clean_run_passes(world: World, screened: tuple[Path, ContentScreen]) -> None:
    path, _ = screened
    audit = _audit(world, path)
    assert audit.findings == (), [f.line() for f in audit.findings[:5]]
    assert audit.steps > 50 and audit.documents_seen > 100
    assert audit.texts_checked > audit.steps and audit.outputs_checked > audit.steps
    assert set(audit.checks) == {
        "document_after_cutoff",
        "unknown_document",
        "flagged_document",
        "resolved_label",
        "post_cutoff_price",
        "post_cutoff_text",
    }


def test_planted_hindsight_is_screened_out_and_never_reaches_agents(
    world: World, screened: tuple[Path, ContentScreen]
) -> None:
    path, screen = screened
    assert screen.removed.total() == len(world.hindsight_ids) == 15
    seen = {d for r in read_run_log(path).steps for c in r.episode.tool_calls for d in c.doc_ids}
    assert seen and not seen & world.hindsight_ids


def test_without_the_screen_the_planted_rewrites_reach_agents_and_are_caught(
    world: World, tmp_path: Path
) -> None:
    index = EmbeddedIndex.in_memory(world.documents)  # no content screen
    dataset = _subset(world.dataset, _planted_events(world)[:8])
    path = _run(dataset, index, tmp_path / "run.jsonl", tmp_path / "answers.json")
    seen = {d for r in read_run_log(path).steps for c in r.episode.tool_calls for d in c.doc_ids}
    assert seen & world.hindsight_ids  # dated before the cutoff: the cutoff lets them through
    counts = _audit(world, path).counts()
    assert counts.get("flagged_document", 0) > 0
    assert counts.get("resolved_label", 0) > 0  # their text says how the question resolved


def _corrupt(src: Path, dst: Path, change: Callable[[dict[str, Any]], bool]) -> Path:
    """Copy the run log, applying ``change`` to step records until it reports one changed."""
    lines, done = [], False
    for line in src.read_text().splitlines():
        rec = json.loads(line)
        if not done:
            done = change(rec)
        lines.append(json.dumps(rec))
    assert done
    dst.write_text("\n".join(lines) + "\n")
    header_path(dst).write_text(header_path(src).read_text())
    return dst


def _future_doc(world: World, cutoff: str) -> str:
    return next(d.id for d in world.documents if d.timestamp.isoformat() > cutoff)


def _searched(rec: dict[str, Any]) -> dict[str, Any] | None:
    calls = rec["episode"]["tool_calls"]
    return next((c for c in calls if c["name"] == "search" and c["doc_ids"]), None)


CORRUPTIONS: dict[str, Callable[[World], Callable[[dict[str, Any]], bool]]] = {}


def _corruption(check: str) -> Callable[[Any], Any]:
    def register(make: Callable[[World], Callable[[dict[str, Any]], bool]]) -> Any:
        CORRUPTIONS[check] = make
        return make

    return register


@_corruption("document_after_cutoff")
def _late_document(world: World) -> Callable[[dict[str, Any]], bool]:
    def change(rec: dict[str, Any]) -> bool:
        call = _searched(rec)
        if call is None:
            return False
        call["doc_ids"].append(_future_doc(world, rec["cutoff"]))
        return True

    return change


@_corruption("unknown_document")
def _unknown_document(world: World) -> Callable[[dict[str, Any]], bool]:
    def change(rec: dict[str, Any]) -> bool:
        call = _searched(rec)
        if call is None:
            return False
        call["doc_ids"].append("doc-99999")
        return True

    return change


@_corruption("resolved_label")
def _label_in_prompt(world: World) -> Callable[[dict[str, Any]], bool]:
    def change(rec: dict[str, Any]) -> bool:
        messages = rec["episode"]["messages"]
        user = next((m for m in messages if m["role"] == "user"), None)
        if user is None:
            return False
        user["content"] += f"\n(This question resolved {rec['grading']['truth']}.)"
        return True

    return change


@_corruption("post_cutoff_price")
def _late_price(world: World) -> Callable[[dict[str, Any]], bool]:
    def change(rec: dict[str, Any]) -> bool:
        call = _searched(rec)
        if call is None:
            return False
        day = rec["cutoff"][:10]  # the cutoff's own day has not ended at the cutoff
        call["result"] = json.dumps([{"day": day, "probs": {"Yes": 0.9, "No": 0.1}}])
        return True

    return change


@_corruption("post_cutoff_text")
def _canary_quoted(world: World) -> Callable[[dict[str, Any]], bool]:
    docs = {d.id: d for d in world.documents}

    def change(rec: dict[str, Any]) -> bool:
        canary = docs[_future_doc_of(world, rec)]
        rec["forecast"]["rationale"] += " I recall: " + canary.text
        return True

    return change


def _future_doc_of(world: World, rec: dict[str, Any]) -> str:
    """A canary of some event, dated after the step's cutoff."""
    docs = {d.id: d for d in world.documents}
    return next(
        c for c in sorted(world.canary_ids) if docs[c].timestamp.isoformat() > rec["cutoff"]
    )


@pytest.mark.parametrize("check", sorted(CORRUPTIONS))
def test_a_corrupted_run_fails(
    check: str, world: World, screened: tuple[Path, ContentScreen], tmp_path: Path
) -> None:
    path = _corrupt(screened[0], tmp_path / "run.jsonl", CORRUPTIONS[check](world))
    audit = _audit(world, path)
    assert [f.check for f in audit.findings] == [check], [f.line() for f in audit.findings]
    streamed = audit_run(read_step_columns(path), documents=world.documents, dataset=world.dataset)
    assert streamed == audit  # the records streamed by offset: the same audit


def test_the_cli_passes_a_clean_run_and_fails_a_corrupted_one(tmp_path: Path) -> None:
    world = build_world(0)
    root = tmp_path / "clean"
    root.mkdir()
    index = EmbeddedIndex.build(world.documents, root / "index")
    events = list(world.dataset.event_ids_with_steps()[:4])
    path = _run(_subset(world.dataset, events), index, root / "run.jsonl", root / "a.json")
    result = runner.invoke(app, ["audit", "run", str(path)])  # the world is rebuilt from the log
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith("no findings")
    result = runner.invoke(app, ["audit", "run", str(path), "--corpus", str(root / "index")])
    assert result.exit_code == 0, result.output
    bad = _corrupt(path, tmp_path / "bad.jsonl", _label_in_prompt(world))
    bad = _corrupt(bad, tmp_path / "worse.jsonl", _late_document(world))
    result = runner.invoke(app, ["audit", "run", str(bad), "--json"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["ok"] is False
    assert payload["counts"] == {"document_after_cutoff": 1, "resolved_label": 1}
    result = runner.invoke(app, ["audit", "run", str(bad)])
    lines = [line for line in result.output.splitlines() if line.startswith("finding: ")]
    assert result.exit_code == 1 and len(lines) == 2
    assert "resolved_label" in lines[1] and "document_after_cutoff" in lines[0]
    # every finding counted, none listed: the same exit status and counts
    result = runner.invoke(app, ["audit", "run", str(bad), "--json", "--examples", "0"])
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["findings"] == [] and payload["examples"] == 0 and payload["ok"] is False
    assert payload["counts"] == {"document_after_cutoff": 1, "resolved_label": 1}
    result = runner.invoke(app, ["audit", "run", str(bad), "--examples", "0"])
    assert result.exit_code == 1 and "finding: " not in result.output
    assert "2 finding(s) (0 listed)" in result.output
    assert "by check: document_after_cutoff 1, resolved_label 1" in result.output


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    for args in (
        ["audit", "run", str(tmp_path / "missing.jsonl")],
        ["audit", "construction", str(tmp_path / "nothing")],
        ["audit", "construction", "world:x"],
        ["audit", "construction", "world:0", "--schedule", "weekly"],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert len(result.output.strip().splitlines()) == 1, result.output
