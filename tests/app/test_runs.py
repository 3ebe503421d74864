"""The one run path: a plan from options or a file, checked in full before any work, with
problems named by field; the replay's world index is built once and reused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.app import open_replay, plan_from_agents, run_plan
from pastcast.cli import app
from pastcast.errors import FieldError

runner = CliRunner()
SMALL_WORLD = "world:0,n_events=2,n_documents=60"


def test_options_build_a_plan_and_problems_name_the_field() -> None:
    plan = plan_from_agents(["heuristic:max_reads=2@memory_on", "market"], dataset=SMALL_WORLD)
    names = [(s.name, s.setting) for s in plan.run_config().agents]
    assert names == [("heuristic:max_reads=2", "memory_on"), ("market", "memory_free")]
    for agents, fields, field in (
        (["uniform"], {"budgets": {"max_tool_calls": -1}}, "budgets.max_tool_calls"),
        (["nope"], {}, "agents"),
        (["uniform", "uniform"], {}, "agents"),
        (["uniform"], {"concurrency": {"episodes": 0}}, "concurrency.episodes"),
    ):
        with pytest.raises(FieldError) as caught:
            plan_from_agents(agents, **fields)
        assert caught.value.field == field
        assert "--" not in str(caught.value)


def test_resume_without_a_log_is_refused_by_field(tmp_path: Path) -> None:
    plan = plan_from_agents(["uniform"], dataset=SMALL_WORLD)
    with pytest.raises(FieldError) as caught:
        run_plan(plan, tmp_path / "run.jsonl", resume=True)
    assert caught.value.field == "resume"
    assert not (tmp_path / "index").exists()


def test_a_plan_whose_model_cannot_load_is_refused_before_the_run(tmp_path: Path) -> None:
    out = tmp_path / "r" / "run.jsonl"
    body = {
        "dataset": SMALL_WORLD,
        "out": str(out),
        "agents": [{"name": "no-tools", "args": {"model": "local:/no/such/model.gguf"}}],
    }
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(body), encoding="utf-8")
    result = runner.invoke(app, ["run", "--config", str(plan)])
    assert result.exit_code == 2, result.output
    assert (
        result.stderr.startswith(f"error: {plan}: agents") and "cannot be loaded" in result.stderr
    )
    assert not out.exists()


def test_the_worlds_own_index_is_built_once_beside_the_log(tmp_path: Path) -> None:
    index = tmp_path / "index"
    with open_replay(SMALL_WORLD, index_dir=index) as first:
        assert first.corpus_ref is not None and first.corpus_ref.spec == str(index)
        identity = first.corpus
    built = (index / "manifest.json").stat().st_mtime_ns
    with open_replay(SMALL_WORLD, index_dir=index) as again:
        assert again.corpus == identity
    assert (index / "manifest.json").stat().st_mtime_ns == built
    with pytest.raises(FieldError) as caught:
        open_replay(SMALL_WORLD, retrieval="dense")  # no index on disk to search densely
    assert caught.value.field == "retrieval"


def test_a_split_that_selects_nothing_is_named_by_field(tmp_path: Path) -> None:
    plan = plan_from_agents(["uniform"], dataset=SMALL_WORLD, split="eval")
    with pytest.raises(FieldError) as caught:
        run_plan(plan, tmp_path / "run.jsonl", progress=False)
    assert caught.value.field == "split" and caught.value.reason.startswith("'eval': no event")
    assert "--" not in str(caught.value)
    assert not (tmp_path / "run.jsonl").exists()
    args = ["run", "-a", "uniform", "--dataset", SMALL_WORLD, "--split", "x"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "cli.jsonl")])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1].startswith("error: --split 'x': no event")


def test_the_run_header_records_where_the_log_was_written(tmp_path: Path) -> None:
    plan = plan_from_agents(["uniform"], dataset=SMALL_WORLD)
    log = tmp_path / "demo" / "run.jsonl"
    run_plan(plan, log, progress=False)
    header = json.loads((tmp_path / "demo" / "run.header.json").read_text(encoding="utf-8"))
    assert header["plan"]["out"] == str(log) != plan.out
