"""Request settings as in Forecast-Dojo Table 10 (temperature, max tokens, top-p, reasoning
effort): sent by every provider that supports them, left out when unset (the provider's default),
refused by a provider that cannot honour them, and recorded in the run log as sent."""

from __future__ import annotations

import importlib.util

import pytest
from fake_chat_server import FakeServer, completion

from pastcast.env import EnvConfig, ForecastEnv
from pastcast.models import ChatRequest, ModelError, ScriptedModel
from pastcast.models._cache import cache_key
from pastcast.models._openai import OpenAICompatibleModel
from pastcast.records import Message
from pastcast.world import build_world

HI = (Message(role="user", content="hi"),)


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")


def test_top_p_and_reasoning_effort_are_sent_when_set(fake_server: FakeServer) -> None:
    fake_server.add(completion("a"))
    fake_server.add(completion("b"))
    model = OpenAICompatibleModel("o4-mini", base_url=fake_server.url)
    model.chat(ChatRequest(messages=HI, top_p=0.95, reasoning_effort="high", max_tokens=64))
    model.chat(ChatRequest(messages=HI))
    first, second = fake_server.requests
    assert (first["top_p"], first["reasoning_effort"], first["max_tokens"]) == (0.95, "high", 64)
    # Unset means not sent: the provider's default applies (Table 10's "default").
    for key in ("top_p", "reasoning_effort", "temperature", "max_tokens", "seed"):
        assert key not in second


def test_a_setting_the_server_cannot_honour_is_refused(fake_server: FakeServer) -> None:
    model = OpenAICompatibleModel(
        "local", base_url=fake_server.url, api_key_env=None, unsupported=("reasoning_effort",)
    )
    with pytest.raises(ModelError, match="does not support reasoning_effort"):
        model.chat(ChatRequest(messages=HI, reasoning_effort="low"))
    assert fake_server.requests == []


def test_out_of_range_top_p_is_refused() -> None:
    with pytest.raises(ValueError, match="top_p"):
        ChatRequest(messages=HI, top_p=0.0)


def test_settings_are_recorded_as_sent() -> None:
    world = build_world(0)
    step = world.dataset.steps[0]
    episode = ForecastEnv(world.dataset, None, EnvConfig()).reset(step)
    model = ScriptedModel(["ok"])
    episode.chat(model, ChatRequest(messages=HI, top_p=0.9, reasoning_effort="minimal"))
    (call,) = episode.record("forecast").model_calls
    assert (call.top_p, call.reasoning_effort) == (0.9, "minimal")
    assert model.requests[0].top_p == 0.9


def test_requests_recorded_before_the_new_settings_keep_their_cache_keys() -> None:
    request = ChatRequest(messages=HI, temperature=0.1, max_tokens=50, seed=3)
    # The key this request had before top-p and reasoning effort existed.
    old = "8bc628f1a3fcc67ec8a3fbac7fb002ea9c3aeedcb08c20a7823aab145c0befc9"
    assert cache_key("openai:gpt-4o-mini", request, {"a": 1}) == old
    with_top_p = request.model_copy(update={"top_p": 0.5})
    assert cache_key("openai:gpt-4o-mini", with_top_p, {"a": 1}) != old


@pytest.mark.skipif(importlib.util.find_spec("inspect_ai") is None, reason="extra inspect")
def test_the_inspect_provider_passes_them_on() -> None:
    from pastcast.integrations.inspect._model import _config

    config = _config(ChatRequest(messages=HI, top_p=0.8, reasoning_effort="medium"))
    assert (config.top_p, config.reasoning_effort) == (0.8, "medium")
