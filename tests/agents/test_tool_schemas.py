"""The tool agent's schemas are derived from the environment's tool definitions, and a call
with invalid arguments goes back to the model as a tool error."""

from __future__ import annotations

import json
from itertools import combinations

import pytest
from agent_scripts import labels_of, title_of, use

from pastcast.agents import ACTION_SCHEMA, action_schema, action_template, agent_spec, build_agent
from pastcast.agents._tool_agent import present_form
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.env import TOOLS, EnvConfig, ForecastEnv
from pastcast.models import ChatRequest, ChatResponse
from pastcast.records import RequestedToolCall
from pastcast.world import World

NAMES = tuple(t.name for t in TOOLS)


def _agrees(derived: dict[str, object], defined: dict[str, object]) -> bool:
    """A flat JSON-action field keeps only what the tools sharing it agree on (a type, or the
    alternatives of an optional field)."""
    typed = "type" in derived or "anyOf" in derived
    agreed = all(defined.get(k, ...) == v for k, v in derived.items())
    return typed and (
        agreed or all(present_form(defined).get(k, ...) == v for k, v in derived.items())
    )


def test_json_action_schema_is_the_definitions() -> None:
    for t in TOOLS:
        alone = action_schema((t.name,))["properties"]
        for field, schema in t.parameters["properties"].items():
            assert alone[field] == schema, (t.name, field)
        extra = set(alone) - set(t.parameters["properties"]) - {"action", "probabilities"}
        assert extra == {"rationale"}, (t.name, extra)
    for pair in combinations(NAMES, 2):
        props = action_schema(pair)["properties"]
        assert props["action"]["enum"] == [*pair, "final"]
        for t in TOOLS:
            if t.name in pair:
                for field, schema in t.parameters["properties"].items():
                    assert _agrees(props[field], schema), (pair, field)
    assert action_schema(NAMES) == ACTION_SCHEMA
    with pytest.raises(ValueError, match="unknown tool 'browse'"):
        action_schema(("browse",))


def test_action_examples_are_the_definitions() -> None:
    text = action_template(("Yes", "No"), ("search", "read"))
    lines = text.splitlines()
    assert lines[:2] == [f"- {t.example()}" for t in TOOLS if t.name in ("search", "read")]
    assert lines[2].startswith('- {"action": "final", "probabilities": {"Yes": <probability>')


def _episode(world: World, index: EmbeddedIndex, **cfg: object):  # type: ignore[no-untyped-def]
    env = ForecastEnv(world.dataset, index, EnvConfig(**cfg))  # type: ignore[arg-type]
    return env.reset(world.dataset.steps[0])


@pytest.mark.parametrize("market", [False, True])
def test_the_agent_sends_what_the_step_defines(
    world: World, world_index: EmbeddedIndex, market: bool
) -> None:
    sent: list[ChatRequest] = []

    def answer_at_once(request: ChatRequest) -> str:
        sent.append(request)
        labels = labels_of(request)
        return json.dumps({"action": "final", "probabilities": dict.fromkeys(labels, 1)})

    for mode in ("json", "native"):
        sent.clear()
        episode = _episode(world, world_index, market_access=market)
        spec = agent_spec("tool-agent", model=use(f"s-{mode}", answer_at_once), action_mode=mode)
        assert build_agent(spec).forecast(episode).usable
        offered = episode.tools.tools()
        names = tuple(t.name for t in offered)
        assert ("market_history" in names) == market
        if mode == "native":
            assert sent[0].tools == tuple(t.spec for t in offered)
        else:
            labels = episode.question.labels
            assert sent[0].response_schema == action_schema(names, labels)
            prompt = "\n".join(m.content for m in sent[0].messages)
            assert action_template(labels, names) in prompt


def test_invalid_arguments_go_back_to_the_model(world: World, world_index: EmbeddedIndex) -> None:
    seen: list[str] = []

    def json_mode(request: ChatRequest) -> str:
        seen.append(request.messages[-1].content)
        if len(request.messages) == 2:
            return json.dumps({"action": "search", "query": title_of(request), "top_k": "many"})
        labels = labels_of(request)
        return json.dumps({"action": "final", "probabilities": dict.fromkeys(labels, 1)})

    def native_mode(request: ChatRequest) -> ChatResponse:
        seen.append(request.messages[-1].content)
        if len(request.messages) == 2:
            call = RequestedToolCall(id="c1", name="read", arguments={"document": "x"})
            return ChatResponse(content="", tool_calls=(call,))
        labels = labels_of(request)
        return ChatResponse(content=json.dumps({"probabilities": dict.fromkeys(labels, 1)}))

    for name, responder, problem in [
        ("bad-json", json_mode, "search: invalid arguments: top_k: Input should be a valid int"),
        ("bad-native", native_mode, "read: invalid arguments: doc_id: Field required"),
    ]:
        mode = "native" if "native" in name else "json"
        seen.clear()
        episode = _episode(world, world_index)
        spec = agent_spec("tool-agent", model=use(name, responder), action_mode=mode)
        forecast = build_agent(spec).forecast(episode)
        assert forecast.usable, forecast.raw_text
        error = json.loads(seen[1])["error"]
        assert error.startswith(problem), error
        (call,) = episode.tools.calls
        assert not call.ok and call.error == error
