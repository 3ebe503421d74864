"""The model-driven agents complete episodes on the embedded world through the real runner."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from agent_scripts import BUILT, Scripted, use

from pastcast.agents import agent_spec, build_agent, prompts_for
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.env import EnvConfig, ForecastEnv
from pastcast.models import ChatRequest
from pastcast.runlog import RunLog, read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.scoring.analyses import notebook_failures
from pastcast.world import World


def _run(
    world: World, index: EmbeddedIndex, tmp: Path, specs: list[Any], events: int = 3, **kw: Any
) -> RunLog:
    cfg = RunConfig(agents=tuple(specs), max_events=events, **kw)
    out = tmp / "run.jsonl"
    run_benchmark(world.dataset, index, cfg, out, prompts=prompts_for(specs), progress=False)
    return read_run_log(out)


@pytest.mark.parametrize("mode", ["json", "native"])
@pytest.mark.parametrize("setting", ["memory_free", "memory_on", "no_tools"])
def test_tool_agent_completes_episodes(
    world: World, world_index: EmbeddedIndex, tmp_path: Path, mode: str, setting: str
) -> None:
    model = use("tool", Scripted())
    spec = agent_spec("tool-agent", setting=setting, model=model, action_mode=mode)  # type: ignore[arg-type]
    log = _run(world, world_index, tmp_path, [spec])
    events = world.dataset.event_ids_with_steps()[:3]
    assert len(log.steps) == sum(len(world.dataset.steps_of(e)) for e in events)
    for rec in log.steps:
        assert rec.episode.termination == "forecast", rec.episode.error
        assert rec.forecast.usable, rec.forecast.raw_text
        names = [c.name for c in rec.episode.tool_calls]
        if setting == "no_tools":
            assert names == [] and rec.episode.usage.model_calls == 1
        else:
            assert names == ["search", "read"] and all(c.ok for c in rec.episode.tool_calls)
            assert rec.episode.usage.model_calls == 3
        if mode == "native" and setting != "no_tools":
            tool_msgs = [m for m in rec.episode.messages if m.role == "tool"]
            assert [m.name for m in tool_msgs] == ["search", "read"]
            assert all(m.tool_call_id for m in tool_msgs)
    expected = {
        ("json", "memory_free"): "json_action.v1",
        ("json", "memory_on"): "json_action_memory.v1",
        ("native", "memory_free"): "tool_agent.v1",
        ("native", "memory_on"): "memory_on.v1",
    }.get((mode, setting), "no_tools.v1")
    assert set(log.header.prompts) == {expected}
    system = log.steps[0].episode.messages[0].content
    assert system.split("\n")[0] in log.header.prompts[expected]


def test_memory_on_carries_a_valid_notebook(
    world: World, world_index: EmbeddedIndex, tmp_path: Path
) -> None:
    spec = agent_spec("tool-agent", setting="memory_on", model=use("m", Scripted()))
    log = _run(world, world_index, tmp_path, [spec], events=2)
    by_event: dict[str, list[Any]] = {}
    for rec in log.steps:
        by_event.setdefault(rec.event_id, []).append(rec)
    for chain in by_event.values():
        chain.sort(key=lambda r: r.step_index)
        assert chain[0].episode.notebook_in is None
        for prev, cur in itertools.pairwise(chain):
            assert prev.episode.notebook_out is not None
            assert cur.episode.notebook_in == prev.episode.notebook_out
            assert cur.episode.notebook_in is not None and cur.episode.notebook_in.evidence_ledger
            # The carried notebook is what this step's prompt shows; nothing else carries over.
            assert cur.episode.notebook_in.text() in cur.episode.messages[1].content
    assert notebook_failures(log.steps) == {}
    assert not any(r.episode.notebook_carried for r in log.steps)


def test_malformed_notebook_is_carried_forward_and_counted(
    world: World, world_index: EmbeddedIndex, tmp_path: Path
) -> None:
    good = use("good", Scripted())
    spec = agent_spec("tool-agent", setting="memory_on", model=good)
    first = _run(world, world_index, tmp_path, [spec], events=1)
    step0 = next(r for r in first.steps if r.step_index == 0)
    # A notebook whose ledger is dated after the cutoff is impossible evidence: rejected.
    bad = agent_spec("tool-agent", setting="memory_on", model=use("bad", Scripted(notebook_day=1)))
    env = ForecastEnv(world.dataset, world_index, EnvConfig())
    step1 = world.dataset.steps_of(step0.event_id)[1]
    episode = env.reset(step1, notebook_in=step0.episode.notebook_out)
    forecast = build_agent(bad).forecast(episode)
    assert forecast.usable
    assert episode.notebook_out == step0.episode.notebook_out
    record = episode.record("forecast")
    assert record.notebook_carried and [p.kind for p in record.notebook_problems] == [
        "future_dates"
    ]
    # Carrying forward is recorded in the episode, not written into the rationale.
    assert "carried forward" not in forecast.rationale


def test_no_tools_agent_is_one_call(
    world: World, world_index: EmbeddedIndex, tmp_path: Path
) -> None:
    spec = agent_spec("no-tools", model=use("nt", Scripted()))
    log = _run(world, world_index, tmp_path, [spec])
    for rec in log.steps:
        assert rec.forecast.usable and rec.episode.usage.model_calls == 1
        assert rec.episode.tool_calls == ()
        assert set(rec.forecast.probs) == set(rec.grading.labels)
    assert set(log.header.prompts) == {"no_tools.v1"}


@pytest.mark.parametrize(("confidence", "reflections"), [(0.9, 1), (0.1, 2)])
def test_two_stage_research_then_forecast(
    world: World, world_index: EmbeddedIndex, tmp_path: Path, confidence: float, reflections: int
) -> None:
    script = Scripted(confidence=confidence)
    spec = agent_spec("two-stage", model=use("ts", script), rounds=3, expand=2)
    log = _run(world, world_index, tmp_path, [spec], events=1)
    for rec in log.steps:
        assert rec.forecast.usable, rec.forecast.raw_text
        searches = [c for c in rec.episode.tool_calls if c.name == "search"]
        reads = [c for c in rec.episode.tool_calls if c.name == "read"]
        assert searches and reads and len(reads) <= 2 * (reflections + 1)
        asked = [m.content for m in rec.episode.messages if m.role == "user"]
        n_reflect = sum("Reflect on this evidence" in a for a in asked)
        # A confident reflection stops the research; an unsure one runs to the round budget
        # (three rounds, two reflections) unless a round finds nothing new.
        assert n_reflect <= reflections
        if confidence > 0.7:
            assert n_reflect == 1
        assert any("Evidence report" not in a and "Key facts" in a for a in asked)
    assert set(log.header.prompts) == {
        "research_queries.v1",
        "research_reflect.v1",
        "research_report.v1",
        "forecast_stage.v2",
    }


def test_two_stage_without_archive_forecasts_from_the_prior(
    world: World, world_index: EmbeddedIndex, tmp_path: Path
) -> None:
    spec = agent_spec("two-stage", setting="no_tools", model=use("ts0", Scripted()))
    log = _run(world, world_index, tmp_path, [spec], events=1)
    for rec in log.steps:
        assert rec.forecast.usable and rec.episode.usage.model_calls == 1


def test_unusable_answer_gets_one_repair_then_falls_back(
    world: World, world_index: EmbeddedIndex, tmp_path: Path
) -> None:
    def fixed_by_repair(request: ChatRequest) -> str:
        if "Reply again" in request.messages[-1].content:
            return '{"probabilities": {"Yes": 0.3, "No": 0.7}, "rationale": "fixed"}'
        return "I think it is fairly likely."

    ok = _run(
        world, world_index, tmp_path, [agent_spec("no-tools", model=use("r1", fixed_by_repair))]
    )
    binary = [r for r in ok.steps if r.grading.labels == ("Yes", "No")]
    multi = [r for r in ok.steps if r.grading.labels != ("Yes", "No")]
    for rec in binary:
        assert rec.forecast.usable and rec.forecast.probs["Yes"] == pytest.approx(0.3)
        assert rec.episode.usage.model_calls == 2
    for rec in multi:  # wrong labels after the repair: unusable, counted with its reason
        assert not rec.forecast.usable and rec.forecast.failure_reason == "no_answer_block"
        assert rec.scores.fallback_used and rec.episode.usage.model_calls == 2
    assert binary or multi


def test_budgets_force_a_final_answer(
    world: World, world_index: EmbeddedIndex, tmp_path: Path
) -> None:
    def always_search(request: ChatRequest) -> str:
        schema = request.response_schema or {}
        if schema.get("properties", {}).get("action", {}).get("enum") == ["final"]:
            labels = list(schema["properties"]["probabilities"]["required"])
            return json.dumps({"action": "final", "probabilities": dict.fromkeys(labels, 1)})
        return json.dumps({"action": "search", "query": "election"})

    spec = agent_spec("tool-agent", model=use("b", always_search), max_iterations=3)
    log = _run(world, world_index, tmp_path, [spec], events=1)
    for rec in log.steps:
        assert rec.forecast.usable and len(rec.episode.tool_calls) == 3
        assert rec.episode.usage.model_calls == 4
    spec = agent_spec("tool-agent", model=use("b2", always_search), max_tool_calls=2, label="t2")
    log = _run(world, world_index, tmp_path / "x", [spec], events=1)
    assert all(len(r.episode.tool_calls) == 2 and r.forecast.usable for r in log.steps)


def test_market_history_only_with_market_access(
    world: World, world_index: EmbeddedIndex, tmp_path: Path
) -> None:
    model = use("mk", Scripted())
    specs = [
        agent_spec("tool-agent", model=model),
        agent_spec("tool-agent-market", model=model),
    ]
    log = _run(world, world_index, tmp_path, specs, events=1)
    for rec in log.steps:
        names = [c.name for c in rec.episode.tool_calls]
        assert ("market_history" in names) == (rec.agent == "tool-agent-market")
        assert ("market_history" in rec.episode.messages[0].content) == (
            rec.agent == "tool-agent-market"
        )
    assert BUILT["mk"].requests  # both agents shared one model instance


def test_prompts_for_lists_only_model_agents() -> None:
    specs = [
        agent_spec("uniform"),
        agent_spec("tool-agent", model="x:y", action_mode="native", setting="memory_on"),
        agent_spec("tool-agent", model="x:y", memory=True, label="forced"),
    ]
    prompts = prompts_for(specs)
    assert set(prompts) == {"memory_on.v1", "json_action_memory.v1"}
    assert prompts["memory_on.v1"].startswith("[system]")


def test_tool_agent_compacts_and_answers_when_the_model_rejects_a_long_conversation() -> None:
    import json as _json

    from _tiny import T0, ListBackend, tiny_dataset, tiny_documents
    from pastcast.agents import ToolAgent
    from pastcast.env import ForecastEnv
    from pastcast.models import ModelError, ScriptedModel
    from pastcast.records import StepSpec

    rejected = []

    def responder(request: ChatRequest) -> str:
        # Accept the prompt and one long tool result; reject the conversation after that.
        later = request.messages[2:]
        if len(later) > 2 and any(len(m.content) > 400 for m in later):
            rejected.append(len(request.messages))
            raise ModelError("context window exceeded")
        if len(later) > 2:
            return _json.dumps({"action": "final", "probabilities": {"Yes": 0.7, "No": 0.3}})
        return _json.dumps({"action": "search", "query": "Zephyr rocket launch"})

    env = ForecastEnv(tiny_dataset(), ListBackend(tiny_documents() * 1))
    from datetime import timedelta

    episode = env.reset(
        StepSpec(event_id="ev-rocket", step_index=0, cutoff=T0 + timedelta(days=12))
    )
    agent = ToolAgent(ScriptedModel(responder=responder), max_result_chars=5000)
    forecast = agent.forecast(episode)
    assert rejected, "the long conversation was never sent"
    assert forecast.usable, forecast
    assert forecast.probs["Yes"] == pytest.approx(0.7)


def test_episode_record_holds_exactly_what_each_model_call_sent_through_compaction() -> None:
    from datetime import timedelta

    from _tiny import T0, ListBackend, tiny_dataset, tiny_documents
    from pastcast.agents import ToolAgent
    from pastcast.agents._answer import Decoding
    from pastcast.models import ModelError, ScriptedModel
    from pastcast.records import StepSpec

    def responder(request: ChatRequest) -> str:
        # Two searches, then the long conversation is rejected; the compacted one is answered.
        later = request.messages[2:]
        if len(later) > 2 and any(len(m.content) > 400 for m in later):
            raise ModelError("context window exceeded")
        if len(later) > 2:
            return json.dumps({"action": "final", "probabilities": {"Yes": 0.7, "No": 0.3}})
        return json.dumps({"action": "search", "query": "Zephyr rocket launch"})

    model = ScriptedModel(responder=responder)
    env = ForecastEnv(tiny_dataset(), ListBackend(tiny_documents()))
    step = StepSpec(event_id="ev-rocket", step_index=0, cutoff=T0 + timedelta(days=12))
    episode = env.reset(step, rollout=2)
    decoding = Decoding(temperature=0.3, max_tokens=900, seed=7)
    agent = ToolAgent(model, max_result_chars=5000, decoding=decoding)
    assert agent.forecast(episode).usable
    record = episode.record("forecast")
    calls = record.model_calls
    # Every request exactly as sent, in order, including the rejected one and the compacted one.
    assert [record.messages_of(c) for c in calls] == [r.messages for r in model.requests]
    assert len(calls) == 4 and [c.error is not None for c in calls] == [False, False, True, False]
    assert "context window exceeded" in (calls[2].error or "") and calls[2].reply is None
    for call, request in zip(calls, model.requests, strict=True):
        assert (call.temperature, call.max_tokens, call.seed) == (0.3, 900, 7)
        assert call.model == model.name and call.tools == ()
        assert json.loads(call.response_schema) == request.response_schema
    reply = record.reply_of(calls[0])
    assert reply is not None and json.loads(reply.content)["action"] == "search"
    # The transcript holds each message once: compaction does not repeat the prompts.
    assert [m.role for m in record.messages].count("system") == 1
    assert [m.role for m in record.messages[:2]] == ["system", "user"]
    # Model and tool calls in call order; a tool result is the exact text the model was given.
    assert [(type(e).__name__, e.seq) for e in record.events()] == [
        ("ModelCall", 0),
        ("ToolCall", 1),
        ("ModelCall", 2),
        ("ToolCall", 3),
        ("ModelCall", 4),
        ("ModelCall", 5),
    ]
    assert model.requests[1].messages[3].content == record.tool_calls[0].result
    assert record.tool_calls[0].arguments == {"query": "Zephyr rocket launch", "top_k": 10}
    total = sum(c.usage.input_tokens for c in calls)
    assert total == record.usage.input_tokens > 0


def test_the_no_tools_reply_cap_of_the_tool_agent(
    world: World, world_index: EmbeddedIndex, tmp_path: Path
) -> None:
    """Forecast-Dojo raises the cap of the single no-tools call to 65,536 tokens (the dojo
    preset's ``no_tools`` decoding); with tools the agent's own decoding holds."""
    model = use("cap", Scripted())
    args: dict[str, Any] = {"model": model, "no_tools": {"max_tokens": 65_536}}
    args["decoding"] = {"max_tokens": 1000}
    specs = [
        agent_spec("tool-agent", setting=s, label=f"t-{s}", **args)
        for s in ("no_tools", "memory_free")
    ]
    log = _run(world, world_index, tmp_path, specs, events=1)
    caps = {(r.setting, c.max_tokens) for r in log.steps for c in r.episode.model_calls}
    assert caps == {("no_tools", 65_536), ("memory_free", 1000)}
