"""pastcast as a `verifiers` environment: rows carry the question and the step, never the
outcome; a rollout researches with tools bound to the step's cutoff through a real OpenAI
client (against a loopback chat server); the reward is pastcast's negative Brier score."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from pastcast.app import shared_replay as open_replay
from pastcast.records import Forecast
from pastcast.scoring import score_forecast

# Found, not imported: verifiers (and pastcast's integration, which imports it) is imported by the
# tests that use it, so collecting this module stays cheap.
if importlib.util.find_spec("verifiers") is None:
    pytest.skip("could not import 'verifiers'", allow_module_level=True)

MODELS_TESTS = Path(__file__).resolve().parents[1] / "models"


@pytest.fixture
def chat_server(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(MODELS_TESTS))
    from fake_chat_server import completion, start_fake_server

    state, server = start_fake_server()
    yield state, completion
    server.shutdown()
    server.server_close()


def _call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def test_rows_carry_no_outcome_and_offer_pastcast_tools() -> None:
    from pastcast.integrations.verifiers import load_environment

    env = load_environment(dataset="world", max_events=2)
    rows = env.get_dataset()
    assert len(rows) == sum(
        len(open_replay("world").dataset.steps_of(e)) for e in ("world-001", "world-002")
    )
    assert set(rows.column_names) == {"prompt", "info", "example_id"}
    for info in rows["info"]:
        assert set(info) == {"event_id", "step_index", "cutoff"}
    assert [t.name for t in env.tool_defs] == ["search", "read"]
    with pytest.raises(ValueError, match="memory_free or no_tools"):
        load_environment(dataset="world", setting="memory_on")


def test_a_rollout_researches_before_the_cutoff_and_is_rewarded(chat_server: Any) -> None:
    import verifiers as vf
    from openai import AsyncOpenAI

    from pastcast.integrations.verifiers import load_environment

    server, completion = chat_server
    env = load_environment(dataset="world", max_events=1)
    replay = open_replay("world")
    step = replay.steps(max_events=1)[0]
    labels = replay.dataset.event(step.event_id).labels
    assert replay.backend is not None
    first_hit = replay.backend.search("election poll", as_of=step.cutoff, k=3)[0].id
    probs = {label: 1 / len(labels) for label in labels}
    probs[labels[0]] += 0.2
    probs[labels[-1]] -= 0.2
    answer = json.dumps({"probabilities": probs, "rationale": "scripted"})
    server.add(
        completion(
            None,
            tool_calls=[_call("search", {"query": "election poll", "top_k": 3}, "c1")],
            finish_reason="tool_calls",
        )
    )
    server.add(
        completion(
            None,
            tool_calls=[_call("read", {"doc_id": first_hit}, "c2")],
            finish_reason="tool_calls",
        )
    )
    server.add(completion(f"```json\n{answer}\n```"))
    client = vf.OpenAIChatCompletionsClient(AsyncOpenAI(base_url=server.url, api_key="none"))
    out = asyncio.run(
        env.evaluate(
            client,
            "scripted",
            num_examples=1,
            rollouts_per_example=1,
            max_concurrent=1,
            state_columns=["pastcast_episode"],
        )
    )
    (result,) = out["outputs"]
    episode = result["pastcast_episode"]
    assert [c["name"] for c in episode["tool_calls"]] == ["search", "read"]
    for call in episode["tool_calls"]:
        for doc_id in call["doc_ids"]:
            assert replay.backend.read(doc_id, as_of=step.cutoff).timestamp < step.cutoff
    # The model was offered pastcast's tools and got the tools' exact text back.
    assert [t["function"]["name"] for t in server.requests[0]["tools"]] == ["search", "read"]
    assert server.requests[1]["messages"][-1]["content"] == episode["tool_calls"][0]["result"]
    expected = score_forecast(Forecast(probs=probs), replay.grading(step))
    assert result["reward"] == pytest.approx(-expected.brier)
    assert result["metrics"]["usable"] == 1.0
    assert result["metrics"]["log_score"] == pytest.approx(-expected.log_loss)
