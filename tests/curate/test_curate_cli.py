"""`pastcast data curate` on the embedded world with a scripted judge: the funnel, the curated
dataset and its records, the judgement cache, accuracy by coverage label, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from curate_judges import world_judge
from typer.testing import CliRunner

from pastcast.agents import agent_spec
from pastcast.cli import app
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.curate import (
    EventCuration,
    Judgement,
    coverage_label_summary,
    coverage_labels,
    read_curation,
)
from pastcast.dataset import load_dataset, read_metadata
from pastcast.models import ChatRequest, ScriptedModel, providers, register_provider
from pastcast.runlog import read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.world import World

# What the scripted judge makes of world:0 (see curate_judges.py), stage by stage. One event
# resolved early and keeps two forecast dates under the world's (non-anticipating) schedule.
FUNNEL = [
    ("input", 0, 50),
    ("forecast dates", 1, 49),
    ("query decomposition", 0, 49),
    ("evidence judge", 26, 23),
    ("coverage probe", 16, 7),
    ("outcome and topic balance", 1, 6),
]


def _curate(index: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    args = ["data", "curate", "world:0", "--corpus", str(index), "--judge", "curate-test:world"]
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--retrieval", "bm25", *extra])
    return result.exit_code, result.stdout, result.stderr


def test_the_world_funnel_and_the_curated_dataset(
    world_index_dir: Path, tmp_path: Path, judge_provider: list[ScriptedModel]
) -> None:
    out = tmp_path / "curated"
    code, stdout, stderr = _curate(world_index_dir, out, "--json")
    assert code == 0, stderr
    report = json.loads(stdout)
    assert [(s["stage"], s["removed"], s["remaining"]) for s in report["funnel"]] == FUNNEL
    notes = {s["stage"]: s["note"] for s in report["funnel"]}
    assert notes["evidence judge"] == "Partial: 10; leakage: 10; Insufficient: 6"
    assert notes["coverage probe"] == "coverage none: 16"
    assert notes["outcome and topic balance"] == "No outcomes cut from 4 to 3: 1"
    calls = len(judge_provider[0].requests)
    assert report["judgements"] == calls and report["cached"] == 0

    ds = load_dataset(out)
    assert ds.id == report["dataset_id"] and ds.id.startswith("world-v2-curated:")
    assert len(ds.events) == 6 and {s.event_id for s in ds.steps} == {e.id for e in ds.events}
    labels = [ds.resolutions[e.id].label for e in ds.events if e.kind == "binary"]
    assert labels.count("Yes") == labels.count("No") == 3
    meta = read_metadata(out)
    assert [f["stage"] for f in meta["funnel"] if f.get("curation")] == [s for s, _, _ in FUNNEL]
    assert meta["curation"]["plan"]["judge"] == "curate-test:world"
    assert meta["curation"]["corpus"]["doc_count"] == 5000

    events = read_curation(out)
    assert len(events) == 50 and sum(e.kept for e in events) == 6
    removed = [e for e in events if not e.kept]
    assert all(e.stage and e.reason for e in removed)
    judged = [e for e in events if e.stage != "forecast dates"]  # the others were not judged
    assert len(judged) == 49
    assert all(e.evidence is not None and e.queries is not None for e in judged)
    lines = (out / "curation" / "judgements.jsonl").read_text().splitlines()
    judgements = [Judgement.model_validate_json(line) for line in lines]
    assert len(judgements) == calls
    assert {j.prompt for j in judgements} == {
        "curate_queries.v1",
        "curate_evidence.v1",
        "curate_coverage_queries.v1",
        "curate_coverage_labels.v1",
    }

    info = CliRunner().invoke(app, ["data", "info", str(out), "--json"])
    assert info.exit_code == 0
    assert [s["stage"] for s in json.loads(info.stdout)["funnel"]][-1] == FUNNEL[-1][0]


def test_recurating_answers_every_judgement_from_the_cache(
    world_index_dir: Path, tmp_path: Path, judge_provider: list[ScriptedModel]
) -> None:
    out = tmp_path / "curated"
    code, first, _ = _curate(world_index_dir, out, "--json")
    assert code == 0
    code, second, stderr = _curate(world_index_dir, out, "--json")  # replaces its own dataset
    assert code == 0, stderr
    one, two = json.loads(first), json.loads(second)
    assert two["cached"] == two["judgements"] == one["judgements"]
    assert two["dataset_id"] == one["dataset_id"] and two["funnel"] == one["funnel"]
    assert len(judge_provider) == 2 and not judge_provider[1].requests  # no model call at all
    assert (tmp_path / "curated.judge-cache").is_dir()


def test_the_text_report_lists_every_stage(
    world_index_dir: Path, tmp_path: Path, judge_provider: list[ScriptedModel]
) -> None:
    out = tmp_path / "c"
    code, stdout, _ = _curate(world_index_dir, out, "--no-coverage", "--no-balance")
    assert code == 0
    lines = stdout.splitlines()
    ds = load_dataset(out)
    assert lines[0] == f"wrote {ds.id} to {out}: 23 events, {len(ds.steps)} steps"
    assert [line.split()[0] for line in lines[1:-1]] == ["input", "forecast", "query", "evidence"]
    assert (
        lines[4]
        == "  evidence judge               -26       23  Partial: 10; leakage: 10; Insufficient: 6"
    )
    assert lines[-1].startswith("judgements: 98 (0 from the cache")


def test_accuracy_by_coverage_label(world: World, tmp_path: Path, world_index_dir: Path) -> None:
    labels = {"world-001": "strong", "world-002": "weak", "world-003": "none"}
    records = [
        EventCuration(event_id="world-004", kept=False, stage="evidence judge", reason="Partial")
    ]
    assert coverage_labels(records) == {}
    events = ("world-001", "world-002", "world-003", "world-004")
    ds = world.dataset.with_steps(s for s in world.dataset.steps if s.event_id in events)
    out = tmp_path / "run.jsonl"
    run_benchmark(
        ds,
        EmbeddedIndex.open(world_index_dir),
        RunConfig(agents=(agent_spec("uniform"),)),
        out,
        progress=False,
    )
    summary = coverage_label_summary(read_run_log(out).steps, labels, bootstrap=50)
    groups = {s.group[-1]: s for s in summary}
    assert set(groups) == {"strong", "weak", "none", "unprobed"}
    for label, event in zip(("strong", "weak", "none", "unprobed"), events, strict=True):
        assert groups[label].n_recorded == len(ds.steps_of(event))
    assert "accuracy" in groups["strong"].metrics


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--retrieval", "bm25,shiny"], "error: --retrieval: expected a comma-separated list"),
        (["--judge", "nonsense"], "error: --judge: model spec 'nonsense' is not PROVIDER:NAME"),
        (["--judge", "nope:x"], "error: --judge: unknown model provider 'nope'"),
        (["--corpus", "/nonexistent/index"], "error: --corpus: /nonexistent/index: not an index"),
        (["--embedder", "x"], "error: --embedder: only with a dense leg"),
        (["--keep-coverage", "great"], None),
        (["--topics", "stars"], None),
    ],
)
def test_bad_input_is_a_one_line_usage_error(
    world_index_dir: Path,
    tmp_path: Path,
    judge_provider: list[ScriptedModel],
    args: list[str],
    message: str | None,
) -> None:
    base = ["data", "curate", "world:0", "--corpus", str(world_index_dir)]
    base += ["--judge", "curate-test:world", "--out", str(tmp_path / "o"), "--retrieval", "bm25"]
    result = CliRunner().invoke(app, [*base, *args])
    assert result.exit_code == 2
    if message is not None:
        assert result.stderr.startswith(message), result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists() and not judge_provider


def test_a_users_folder_a_file_for_the_cache_or_a_missing_dataset_is_refused(
    world_index_dir: Path, tmp_path: Path, judge_provider: list[ScriptedModel]
) -> None:
    out = tmp_path / "o"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    code, _, stderr = _curate(world_index_dir, out)
    assert code == 2
    assert stderr.startswith(f"error: --out: {out}: exists and was not made by pastcast")
    assert (out / "notes.txt").read_text() == "mine"
    cache = tmp_path / "a-file"
    cache.write_text("x")
    code, _, stderr = _curate(world_index_dir, tmp_path / "p", "--cache", str(cache))
    assert code == 2 and stderr.startswith(f"error: --cache: {cache}: exists and is not a")
    args = ["data", "curate", str(tmp_path / "none"), "--corpus", str(world_index_dir)]
    result = CliRunner().invoke(
        app, [*args, "--judge", "curate-test:w", "--out", str(tmp_path / "p")]
    )
    assert result.exit_code == 2 and "not a dataset directory" in result.stderr


def test_a_curation_that_keeps_nothing_writes_nothing_and_says_why(
    world_index_dir: Path, tmp_path: Path
) -> None:
    def nothing_suffices(request: ChatRequest) -> str:
        assert request.response_schema is not None
        if request.response_schema["title"] == "curate_evidence":
            verdict = {"verdict": "Insufficient", "leakage": False, "leak_documents": []}
            return json.dumps({**verdict, "rationale": ""})
        return world_judge(request)

    register_provider("curate-none")(
        lambda rest: ScriptedModel(responder=nothing_suffices, name="curate-none")
    )
    try:
        out = tmp_path / "o"
        args = ["data", "curate", "world:0", "--corpus", str(world_index_dir), "--json"]
        args += ["--judge", "curate-none:x", "--out", str(out), "--retrieval", "bm25"]
        result = CliRunner().invoke(app, args)
    finally:
        providers.remove("curate-none")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "error: no events are left to write (the last removed at stage 'evidence judge': "
        "Insufficient: 49); nothing written"
    )
    assert len(result.stderr.strip().splitlines()) == 1
    report = json.loads(result.stdout)  # the funnel is still shown
    assert report["events"] == 0 and report["out"] is None and report["judgements"] == 98
    assert not out.exists()
