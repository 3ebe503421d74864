"""Agents take their request settings as one ``Decoding`` and the two-stage loop as one
``TwoStageConfig``, from the API, the command line and plan files alike; a spec built with those
records round-trips through the run log (and resumes), and a run log written when every setting
was an argument of its own still rebuilds the same agent."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from agent_scripts import Scripted, use

from pastcast.agents import Decoding, TwoStageConfig, agent_spec, agents, build_agent, prompts_for
from pastcast.agents._two_stage import TwoStageAgent
from pastcast.app import parse_agent_option
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.runlog import AgentSpec, read_run_log
from pastcast.runner import RunConfig, load_plan, run_benchmark
from pastcast.world import World


def _two_stage(spec: AgentSpec) -> TwoStageAgent:
    agent = build_agent(spec)
    assert isinstance(agent, TwoStageAgent)
    return agent


def test_no_factory_flattens_its_settings() -> None:
    for name in ("no-tools", "zero-shot", "tool-agent", "two-stage", "two-stage-hindcast"):
        params = inspect.signature(agents.get(name).factory).parameters
        assert "decoding" in params, name
        # decoding settings come as records (``decoding``, per call or stage), never flat
        flat = set(params) & set(Decoding.model_fields)
        flat |= {p for p in params if p.endswith(("_max_tokens", "_temperature", "_top_p"))}
        assert not flat, (name, sorted(flat))
        assert len(params) <= 13, (name, list(params))
    assert "config" in inspect.signature(agents.get("two-stage").factory).parameters


def test_records_given_to_a_preset_change_only_what_they_set() -> None:
    spec = agent_spec(
        "two-stage-hindcast",
        model="scripted:x.json",
        config=TwoStageConfig(rounds=1),
        decoding=Decoding(seed=3, reasoning_effort="low"),
        stages={"report": Decoding(max_tokens=100)},
    )
    assert spec.args == {
        "model": "scripted:x.json",
        "config": {"rounds": 1},
        "decoding": {"seed": 3, "reasoning_effort": "low"},
        "stages": {"report": {"max_tokens": 100}},
    }
    agent = _two_stage(spec)
    assert agent.config.rounds == 1 and agent.config.tally  # Hindcast's tally stays on
    assert agent.decoding == Decoding(temperature=0.1, top_p=1.0, seed=3, reasoning_effort="low")
    assert agent.stages["report"] == Decoding(temperature=0.1, max_tokens=100)
    assert agent.stages["queries"] == Decoding(temperature=0.2, max_tokens=4096)


def test_a_spec_with_records_round_trips_through_the_run_log_and_resumes(
    world: World, world_index: EmbeddedIndex, tmp_path: Path
) -> None:
    model = use("rt", Scripted())
    spec = agent_spec(
        "two-stage",
        model=model,
        config=TwoStageConfig(rounds=2, expand=1),
        decoding=Decoding(temperature=0.4, top_p=0.9),
    )
    config = RunConfig(agents=(spec,), max_events=1)
    out = tmp_path / "run.jsonl"
    run_benchmark(world.dataset, world_index, config, out, prompts=prompts_for([spec]))
    log = read_run_log(out)
    (recorded,) = log.header.agents
    assert recorded == spec
    assert {(c.temperature, c.top_p) for r in log.steps for c in r.episode.model_calls} == {
        (0.4, 0.9)
    }
    rebuilt = _two_stage(recorded)
    assert (rebuilt.config.rounds, rebuilt.config.expand) == (2, 1)
    again = agent_spec("two-stage", model=model, config={"rounds": 2, "expand": 1},
                       decoding={"temperature": 0.4, "top_p": 0.9})  # fmt: skip
    result = run_benchmark(
        world.dataset, world_index, RunConfig(agents=(again,), max_events=1), out, progress=False
    )
    assert result.written == 0  # the same definition: everything was recorded already


def test_flat_arguments_of_older_run_logs_rebuild_the_same_agent() -> None:
    old = AgentSpec(
        name="ts",
        factory="two-stage-hindcast",
        args={
            "model": "scripted:x.json",
            "rounds": 1,
            "parse_fallback": "repair",
            "temperature": 0.5,
            "max_tokens": 900,
            "stages": {"report": {"max_tokens": 100}},
        },
    )
    new = agent_spec(
        "two-stage-hindcast",
        model="scripted:x.json",
        config={"rounds": 1, "fallback": "repair"},
        decoding={"temperature": 0.5, "max_tokens": 900},
        stages={"report": {"max_tokens": 100}},
    )
    a, b = _two_stage(old), _two_stage(new)
    assert (a.config, a.decoding, a.stages) == (b.config, b.decoding, b.stages)
    assert a.config.rounds == 1 and a.config.fallback == "repair" and a.config.tally
    assert prompts_for([old]) == prompts_for([new])
    for name, flat in (("tool-agent", {"seed": 4}), ("zero-shot", {"top_p": 0.5})):
        agent = build_agent(AgentSpec(name=name, factory=name, args={"model": "x:y", **flat}))
        assert agent.decoding.model_dump(exclude_unset=True).items() >= flat.items()  # type: ignore[attr-defined]


def test_a_setting_given_both_ways_is_refused() -> None:
    with pytest.raises(ValueError, match=r"'temperature' is given twice: alone and in 'decoding'"):
        agent_spec("no-tools", model="x:y", temperature=0.1, decoding={"temperature": 0.2})
    with pytest.raises(ValueError, match=r"argument 'rounds' must be int, not 'three'"):
        agent_spec("two-stage", model="x:y", rounds="three")


def test_the_command_line_takes_the_records_as_json() -> None:
    spec = parse_agent_option(
        'two-stage:model=scripted:x.json,config={"rounds": 2, "tally": true},'
        'decoding={"temperature": 0.2, "top_p": 0.9, "reasoning_effort": "low"}'
    )
    agent = _two_stage(spec)
    assert agent.config.rounds == 2 and agent.config.tally
    assert agent.decoding == Decoding(temperature=0.2, top_p=0.9, reasoning_effort="low")
    with pytest.raises(ValueError, match=r"argument 'decoding' must be Decoding \| None") as err:
        parse_agent_option('no-tools:model=scripted:x.json,decoding={"top_p": 2}')
    assert "top_p: Input should be less than or equal to 1" in str(err.value)


def test_a_plans_decoding_is_the_same_record(tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text(
        'settings = ["memory_free", "two_stage"]\n'
        '[[models]]\nspec = "openai:gpt-4o-mini"\n'
        '[decoding]\ntemperature = 0.3\ntop_p = 0.8\nreasoning_effort = "high"\n'
        "[agent_args.two-stage]\ndecoding = { temperature = 0.1 }\nconfig = { rounds = 1 }\n"
    )
    tool, two = load_plan(plan).agent_specs()
    assert tool.args["decoding"] == {"temperature": 0.3, "top_p": 0.8, "reasoning_effort": "high"}
    assert two.args["decoding"] == {"temperature": 0.1, "top_p": 0.8, "reasoning_effort": "high"}
    assert two.args["config"] == {"rounds": 1}
