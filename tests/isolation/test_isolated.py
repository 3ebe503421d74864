"""Registered agents run isolated exactly as in-process: the same forecasts, tool calls, model
transcripts, notebooks and budget endings, recorded by the runner's episode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.agents import agent_spec
from pastcast.env import EnvConfig
from pastcast.runlog import StepRecord, read_run_log
from pastcast.runner import RunConfig, run_benchmark


def _steps(tmp_path: Path, specs: tuple[Any, ...], **config: Any) -> dict[str, list[StepRecord]]:
    out = tmp_path / "run.jsonl"
    run_config = RunConfig(agents=specs, max_events=1, **config)
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), run_config, out, progress=False)
    by_agent: dict[str, list[StepRecord]] = {}
    for step in read_run_log(out).steps:
        by_agent.setdefault(step.agent, []).append(step)
    return by_agent


def _same(record: StepRecord) -> dict[str, Any]:
    """What must not depend on the mode: everything but timings."""
    episode = record.episode.model_dump(mode="json", exclude={"wall_s"})
    for call in (*episode["tool_calls"], *episode["model_calls"]):
        call.pop("elapsed_s", None)
        call.pop("latency_s", None)
    return {"forecast": record.forecast.model_dump(), "episode": episode}


def test_isolated_agents_match_in_process(tmp_path: Path, bindable_environment: None) -> None:
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(['{"probabilities": {"Yes": 0.8, "No": 0.2}}']))
    model = f"scripted:{outputs}"
    pairs = [
        ("heuristic", {}, "memory_free"),
        ("heuristic", {}, "memory_on"),
        ("no-tools", {"model": model}, "memory_free"),
    ]
    specs = []
    for name, args, setting in pairs:
        specs.append(agent_spec(name, setting=setting, label=f"{name}-{setting}", **args))
        specs.append(
            agent_spec(
                "isolated", agent=name, setting=setting, label=f"iso-{name}-{setting}", **args
            )
        )
    steps = _steps(tmp_path, tuple(specs))
    for name, _, setting in pairs:
        local, isolated = steps[f"{name}-{setting}"], steps[f"iso-{name}-{setting}"]
        assert [_same(s) for s in isolated] == [_same(s) for s in local], (name, setting)
    carried = steps["iso-heuristic-memory_on"][1].episode.notebook_in
    assert carried and carried == steps["iso-heuristic-memory_on"][0].episode.notebook_out
    assert steps["iso-no-tools-memory_free"][0].episode.model_calls  # proxied and recorded


def test_budgets_end_isolated_episodes_as_in_process(
    tmp_path: Path, bindable_environment: None
) -> None:
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(["{}"]))
    model = {"model": f"scripted:{outputs}"}
    specs = (
        agent_spec("heuristic"),  # catches the tool budget and answers with what it has
        agent_spec("isolated", agent="heuristic", label="iso-heuristic"),
        agent_spec("no-tools", **model),  # lets the model budget end the episode
        agent_spec("isolated", agent="no-tools", label="iso-no-tools", **model),
    )
    steps = _steps(tmp_path, specs, env=EnvConfig(max_tool_calls=1, max_model_calls=0))
    for name, ending in (("heuristic", "forecast"), ("no-tools", "model_budget")):
        for local, isolated in zip(steps[name], steps[f"iso-{name}"], strict=True):
            assert isolated.episode.termination == local.episode.termination == ending
            assert isolated.forecast == local.forecast
            assert len(isolated.episode.tool_calls) == len(local.episode.tool_calls)
    assert steps["iso-no-tools"][0].forecast.failure_reason == "budget_exhausted"


def test_an_unknown_inner_agent_is_an_agent_error(
    tmp_path: Path, bindable_environment: None
) -> None:
    steps = _steps(tmp_path, (agent_spec("isolated", agent="no-such-agent", label="x"),))
    error = steps["x"][0].episode.error
    assert error is not None and error.startswith("AgentProcessError: ")
    assert "unknown agent 'no-such-agent'" in error


@pytest.mark.parametrize("name", ["isolated", "external"])
def test_market_access_goes_with_the_market_variant(name: str) -> None:
    from pastcast.agents import agent_info

    plain = agent_spec(name, agent="x") if name == "isolated" else agent_spec(name, command="x")
    market = plain.model_copy(update={"factory": f"{name}-market"})
    assert not agent_info(plain).market_access and agent_info(market).market_access
