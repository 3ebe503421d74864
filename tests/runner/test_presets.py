"""Presets: each sets exactly the values ``pastcast presets show`` lists (in the resolved plan
and the agents' arguments), explicit options and plan fields are set over them, and the run
header records the plan as resolved with its preset named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pastcast.app import plan_from_agents, read_plan
from pastcast.cli import app
from pastcast.errors import FieldError
from pastcast.runlog import read_run_log
from pastcast.runner import ExperimentPlan, deep_merge, preset, preset_names

cli = CliRunner()
MODEL = "openai-compatible:m@http://127.0.0.1:9/v1"


def _shown(name: str) -> list[dict[str, Any]]:
    out = cli.invoke(app, ["presets", "show", name, "--json"])
    assert out.exit_code == 0, out.output
    settings: list[dict[str, Any]] = json.loads(out.stdout)["settings"]
    return settings


def _at(data: Any, key: str) -> Any:
    for part in key.split("."):
        data = data[part]
    return data


def _plan(name: str) -> ExperimentPlan:
    return ExperimentPlan.model_validate({"preset": name, "models": [{"spec": MODEL}]})


def test_the_papers_presets_are_registered() -> None:
    assert set(preset_names()) >= {"dojo", "dojo-train", "hindcast", "arena"}
    listed = cli.invoke(app, ["presets", "list"])
    assert listed.exit_code == 0
    assert [line.split("\t")[0] for line in listed.stdout.splitlines()] == list(preset_names())


@pytest.mark.parametrize("name", ["dojo", "dojo-train", "hindcast"])
def test_each_run_setting_shown_is_the_resolved_plans_value(name: str) -> None:
    shown = _shown(name)
    assert shown == [s.model_dump(mode="json") for s in preset(name).settings]
    assert all(s["source"] for s in shown)  # every value names the paper's section
    plan = _plan(name)
    resolved = plan.model_dump(mode="json")
    specs = plan.agent_specs()
    for s in (s for s in shown if s["stage"] == "run"):
        key = s["key"]
        if key.startswith("agent_args."):
            _, factory, rest = key.split(".", 2)
            built = [sp for sp in specs if sp.factory == factory]
            assert built, f"{name}: no agent built on {factory}"
            assert all(_at(sp.args, rest) == s["value"] for sp in built), key
        else:
            assert _at(resolved, key) == s["value"], key
    assert plan.preset == name


def test_exact_values_of_the_presets() -> None:
    """The numbers the papers give, written out once more by hand."""
    dojo = _plan("dojo")
    assert (dojo.rollouts, dojo.budgets.max_tool_iterations, dojo.budgets.max_tool_calls) == (
        4,
        120,
        400,
    )
    assert dojo.budgets.python_tool is True
    (tool_agent,) = dojo.agent_specs()
    assert tool_agent.args["no_tools"] == {"max_tokens": 65_536}
    train = _plan("dojo-train")
    assert (train.budgets.max_tool_iterations, train.budgets.max_tool_calls) == (80, 200)
    assert train.decoding.model_dump(exclude_none=True) == {
        "temperature": 0.6,
        "max_tokens": 32_768,
        "top_p": 1.0,
    }
    assert (dojo.corpus.retrieval, dojo.corpus.embedder, dojo.corpus.nprobe) == (
        "dense",
        "qwen3-embedding-8b",
        None,
    )
    hc = _plan("hindcast")
    assert (hc.corpus.retrieval, hc.corpus.embedder) == ("dense", "qwen3-embedding-0.6b")
    assert (hc.rollouts, hc.settings, hc.schedule) == (5, ("two_stage",), None)
    (agent,) = hc.agent_specs()
    assert agent.factory == "two-stage"
    cfg = agent.args["config"]
    assert (cfg["rounds"], cfg["seed_queries"], cfg["top_k"], cfg["stop_confidence"]) == (
        3,
        6,
        20,
        0.7,
    )
    assert (cfg["tally"], cfg["doc_type"]) == (True, "submission")
    assert agent.args["stages"]["tally"] == {"temperature": 0.1, "max_tokens": 2200}
    arena = {s.key: s.value for s in preset("arena").of_stage("arena")}
    assert arena == {"markets": 7, "rounds": 50, "selector": "volume-activity"}


def test_a_plan_without_preset_is_unchanged() -> None:
    plain = ExperimentPlan.model_validate({"models": [{"spec": MODEL}]})
    assert plain.rollouts == 1 and plain.budgets.python_tool is False
    (spec,) = plain.agent_specs()
    assert "no_tools" not in spec.args


def test_plan_fields_are_set_over_the_preset(tmp_path: Path) -> None:
    path = tmp_path / "plan.toml"
    path.write_text(
        'preset = "hindcast"\nrollouts = 2\n'
        f'[[models]]\nspec = "{MODEL}"\n'
        "[agent_args.two-stage.config]\nrounds = 1\n"
        "[budgets]\nmax_search_k = 5\n"
    )
    plan = read_plan(path)
    assert (plan.rollouts, plan.budgets.max_search_k) == (2, 5)
    (agent,) = plan.agent_specs()
    assert agent.args["config"]["rounds"] == 1  # the plan's own
    assert agent.args["config"]["top_k"] == 20  # the preset's, beside it
    # An agent's listed arguments win over the preset's too.
    listed = plan_from_agents([f'two-stage:model={MODEL},config={{"top_k": 3}}'], preset="hindcast")
    (agent,) = listed.agent_specs()
    assert agent.args["config"]["top_k"] == 3 and agent.args["config"]["tally"] is True


def test_unknown_preset_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FieldError, match="preset"):
        plan_from_agents(["uniform"], preset="nope")
    path = tmp_path / "plan.toml"
    path.write_text('preset = "nope"\n[[agents]]\nname = "uniform"\n')
    with pytest.raises(FieldError, match="preset: unknown 'nope'"):
        read_plan(path)
    out = cli.invoke(app, ["presets", "show", "nope"])
    assert out.exit_code == 2 and "unknown 'nope'" in out.output


def test_deep_merge_replaces_lists_and_merges_tables() -> None:
    base = {"a": {"x": 1, "y": 2}, "s": ["one", "two"]}
    assert deep_merge(base, {"a": {"y": 3}, "s": ["three"]}) == {
        "a": {"x": 1, "y": 3},
        "s": ["three"],
    }


def test_run_options_override_the_preset_and_the_header_records_it(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    result = cli.invoke(
        app,
        [
            "run",
            "--preset",
            "dojo",
            "--agent",
            "uniform",
            "--dataset",
            "world:0",
            "--max-events",
            "1",
            "--no-python-tool",  # explicit: over the preset's python tool
            "--max-tool-calls",
            "7",
            "--retrieval",
            "bm25",  # over the preset's dense search: its embedder is left out
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    header = read_run_log(out).header
    assert header.plan is not None
    assert (
        header.plan["corpus"]["retrieval"] == "bm25" and header.plan["corpus"]["embedder"] is None
    )
    assert header.plan is not None and header.plan["preset"] == "dojo"
    assert header.plan["rollouts"] == 4  # the preset's
    assert header.plan["budgets"]["max_tool_calls"] == 7  # the option's
    assert header.plan["budgets"]["python_tool"] is False
    assert header.plan["budgets"]["max_tool_iterations"] == 120
    assert header.config["rollouts"] == 4 and header.config["env"]["max_tool_calls"] == 7
    # Without a preset the options' defaults are what they were.
    plain = tmp_path / "plain.jsonl"
    again = cli.invoke(
        app,
        [
            "run",
            "--agent",
            "uniform",
            "--dataset",
            "world:0",
            "--max-events",
            "1",
            "--out",
            str(plain),
        ],
    )
    assert again.exit_code == 0, again.output
    h2 = read_run_log(plain).header
    assert h2.plan is not None and h2.plan["preset"] is None and h2.config["rollouts"] == 1
