"""`pastcast plan` prices every agent by the call estimate its registration declares: for each
registered model-driven agent, the estimated calls per step are within one call of what a
scripted run of that agent makes; a third-party agent's declared estimate is used as it is."""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from agent_scripts import Scripted, use

from pastcast.agents import (
    CallContext,
    CallEstimate,
    agent_spec,
    agents,
    call_estimate,
    list_agents,
    prompts_for,
    register_agent,
)
from pastcast.agents._baselines import UniformAgent
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.runlog import read_run_log
from pastcast.runner import ExperimentPlan, estimate_plan, run_benchmark
from pastcast.world import World

SCRIPTED_TURNS = 3
"""The scripted model's research: a search, a read, then the answer."""


def agents_info(name: str) -> Any:
    return next(i for i in list_agents() if i.name == name)


def _model_driven() -> list[str]:
    """Every registered agent that needs a model to run."""
    out = []
    for info in list_agents():
        params = inspect.signature(info.factory).parameters
        model = params.get("model")
        if model is not None and model.default is model.empty:
            out.append(info.name)
    return out


# A round-level agent (arena-benchmark) forecasts binary markets with tools of its own: its
# estimate is checked against its own scripted run in tests/agents/test_round_agent.py.
CASES = [
    (name, setting)
    for name in _model_driven()
    if not agents_info(name).round_level
    for setting in (("memory_free", "no_tools") if "tool-agent" in name else ("memory_free",))
]


def test_the_cases_cover_the_model_driven_agents() -> None:
    assert {n for n, _ in CASES} >= {
        "no-tools",
        "zero-shot",
        "tool-agent",
        "tool-agent-market",
        "two-stage",
        "two-stage-hindcast",
    }


def _plan(agent: str, setting: str, model: str, **extra: Any) -> ExperimentPlan:
    return ExperimentPlan.model_validate(
        {
            "agents": [{"name": agent, "setting": setting, "args": {"model": model}}],
            "max_events": 2,
            "estimate": {"tool_turns": SCRIPTED_TURNS},
            **extra,
        }
    )


@pytest.mark.parametrize(("agent", "setting"), CASES)
def test_the_estimate_is_within_a_call_of_a_scripted_run(
    world: World, world_index: EmbeddedIndex, tmp_path: Path, agent: str, setting: str
) -> None:
    plan = _plan(agent, setting, use(agent, Scripted()))
    (row,) = estimate_plan(plan, world.dataset).rows
    config = plan.run_config()
    out = tmp_path / "run.jsonl"
    prompts = prompts_for(config.agents)
    run_benchmark(world.dataset, world_index, config, out, prompts=prompts, progress=False)
    log = read_run_log(out)
    assert len(log.steps) == row.episodes > 0
    assert all(r.forecast.usable for r in log.steps), [r.forecast.raw_text for r in log.steps]
    made = sum(r.episode.usage.model_calls for r in log.steps) / len(log.steps)
    estimated = row.model_calls / row.episodes
    assert abs(estimated - made) <= 1, (agent, setting, estimated, made)
    assert row.model_calls_max >= row.model_calls


@pytest.fixture
def _declared() -> Iterator[str]:
    def estimate(args: Mapping[str, Any], context: CallContext) -> CallEstimate:
        per_round = 2 * int(args["rounds"])
        return CallEstimate(calls=per_round, max_calls=min(per_round + 1, 150))

    @register_agent("test-declared-calls", calls=estimate)
    def factory(model: str, rounds: int = 2) -> UniformAgent:
        """A plugin that declares its calls."""
        return UniformAgent()

    yield "test-declared-calls"
    agents.remove("test-declared-calls")


def test_a_plugins_declared_estimate_prices_its_steps(world: World, _declared: str) -> None:
    default = estimate_plan(_plan(_declared, "memory_free", "openai:x"), world.dataset).rows[0]
    assert default.model_calls == 4 * default.episodes
    plan = ExperimentPlan.model_validate(
        {
            "agents": [{"name": _declared, "args": {"model": "openai:x", "rounds": 5}}],
            "max_events": 2,
        }
    )
    row = estimate_plan(plan, world.dataset).rows[0]
    assert (row.model_calls, row.model_calls_max) == (10 * row.episodes, 11 * row.episodes)


def test_an_agent_that_declares_nothing_is_one_call_with_a_model(world: World) -> None:
    @register_agent("test-undeclared")
    def factory(model: str | None = None) -> UniformAgent:
        return UniformAgent()

    try:
        with_model = _plan("test-undeclared", "memory_free", "openai:x")
        row = estimate_plan(with_model, world.dataset).rows[0]
        assert row.model_calls == row.episodes
        without = ExperimentPlan.model_validate(
            {"agents": [{"name": "test-undeclared"}], "max_events": 2}
        )
        assert estimate_plan(without, world.dataset).rows[0].model_calls == 0
    finally:
        agents.remove("test-undeclared")


def test_an_isolated_agent_costs_what_the_agent_it_wraps_costs() -> None:
    context = CallContext()
    inner = agent_spec("two-stage-hindcast", model="openai:x", config={"rounds": 2})
    wrapped = agent_spec("isolated", agent="two-stage-hindcast", model="openai:x", rounds=2)
    assert call_estimate(wrapped, context) == call_estimate(inner, context)
    assert call_estimate(inner, context).calls == 5  # queries, a reflection, report, tally, answer
    assert call_estimate(agent_spec("isolated", agent="heuristic"), context).calls == 0
