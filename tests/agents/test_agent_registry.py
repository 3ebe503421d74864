"""The agent registry: arguments checked against the factory before it runs, recorded specs,
prompt ids from registration metadata."""

from __future__ import annotations

import pytest

from pastcast.agents import (
    agent_info,
    agent_spec,
    agents,
    build_agent,
    list_agents,
    prompts_for,
    register_agent,
)
from pastcast.agents._baselines import UniformAgent
from pastcast.errors import FieldError
from pastcast.registry import Registry
from pastcast.runlog import AgentSpec


def test_agents_is_the_one_registry() -> None:
    assert isinstance(agents, Registry) and agents.group == "pastcast.agents"
    assert {"uniform", "market", "heuristic", "tool-agent", "two-stage"} <= set(agents.names())
    assert [a.name for a in list_agents()] == list(agents.names())
    market = agent_info(agent_spec("market"))
    assert (market.role, market.market_access) == ("reference", True)


def test_build_agent_checks_arguments_before_calling_the_factory() -> None:
    bad = AgentSpec(name="u", factory="uniform", args={"temprature": 0.2})
    with pytest.raises(FieldError, match=r"agent 'uniform': .*'temprature'"):
        build_agent(bad)
    spec = AgentSpec(name="h", factory="heuristic", args={"top_k": 5, "depth": 2})
    with pytest.raises(
        FieldError, match=r"'depth'.*accepted arguments: max_reads, top_k, half_life_days"
    ):
        build_agent(spec)
    with pytest.raises(FieldError, match=r"argument 'model' is required"):
        build_agent(AgentSpec(name="t", factory="tool-agent"))
    assert isinstance(build_agent(AgentSpec(name="u", factory="uniform")), UniformAgent)


def test_agent_spec_checks_arguments_when_the_run_is_planned() -> None:
    with pytest.raises(FieldError, match="'max_read'"):
        agent_spec("heuristic", max_read=3)
    with pytest.raises(FieldError, match=r"unknown agent 'nope' \(known: .*uniform"):
        agent_spec("nope")
    # ``setting`` is given by the spec, not passed twice.
    spec = agent_spec("tool-agent", setting="memory_on", model="scripted:x.json")
    assert spec.args == {"model": "scripted:x.json"} and spec.setting == "memory_on"


def test_prompt_ids_come_from_the_registration() -> None:
    specs = [
        agent_spec("no-tools", model="m:x"),
        agent_spec("tool-agent", model="m:x", action_mode="native"),
        agent_spec("tool-agent", setting="memory_on", model="m:x"),
        agent_spec("tool-agent-market", setting="no_tools", model="m:x"),
        agent_spec("two-stage", model="m:x"),
        agent_spec("heuristic"),
    ]
    assert sorted(prompts_for(specs)) == [
        "forecast_stage.v2",
        "json_action_memory.v1",
        "no_tools.v1",
        "research_queries.v1",
        "research_reflect.v1",
        "research_report.v1",
        "tool_agent.v1",
    ]


def test_register_agent_refuses_bad_metadata_and_duplicates() -> None:
    with pytest.raises(FieldError, match="role must be one of"):
        register_agent("test-bad-role", role="judge")  # type: ignore[arg-type]
    with pytest.raises(FieldError, match="already registered"):
        register_agent("uniform")(UniformAgent)
