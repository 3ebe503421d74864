"""Local models that finish: generation is bounded by default, every request is fitted to the
model's context window before it is sent, and a prompt that would overflow is refused before
sending (``ContextOverflow``) so agents compact first. Checked with scripted models that state a
window, so no server is needed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pastcast.agents import agent_model, clear_models
from pastcast.env import EnvConfig, ForecastEnv
from pastcast.models import (
    CachedModel,
    ChatRequest,
    ContextLimits,
    ContextOverflow,
    ScriptedModel,
    context_limits_for,
    fit_request,
)
from pastcast.models._local import DEFAULT_MAX_TOKENS, local_context_limits
from pastcast.records import Message
from pastcast.world import build_world

LIMITS = ContextLimits(window=1000, default_max_tokens=300, min_reply_tokens=100)


def _request(chars: int, max_tokens: int | None = None) -> ChatRequest:
    return ChatRequest(messages=(Message(role="user", content="x" * chars),), max_tokens=max_tokens)


class Windowed(ScriptedModel):
    """A scripted model with a bounded context, as a local model states it."""

    context_limits = LIMITS


def test_generation_is_bounded_when_the_request_names_no_cap() -> None:
    fitted = fit_request(_request(30), LIMITS)
    assert fitted.max_tokens == 300


def test_the_cap_is_the_room_the_prompt_leaves() -> None:
    request = _request(2100, max_tokens=900)  # 700 tokens of text at 3 bytes a token
    fitted = fit_request(request, LIMITS)
    assert fitted.max_tokens == LIMITS.window - LIMITS.prompt_tokens(request)
    assert LIMITS.prompt_tokens(fitted) + (fitted.max_tokens or 0) <= LIMITS.window


def test_a_prompt_that_leaves_too_little_room_overflows() -> None:
    with pytest.raises(ContextOverflow, match="1000-token context") as caught:
        fit_request(_request(2700), LIMITS)
    assert caught.value.window == 1000 and caught.value.prompt_tokens > 900


def test_the_episode_sends_fitted_requests_and_refuses_overflow_before_sending() -> None:
    world = build_world(0)
    episode = ForecastEnv(world.dataset, None, EnvConfig()).reset(world.dataset.steps[0])
    model = Windowed(["ok"], cycle=True)
    episode.chat(model, _request(30))
    assert model.requests[0].max_tokens == 300
    with pytest.raises(ContextOverflow):
        episode.chat(model, _request(2700))
    assert len(model.requests) == 1  # nothing was sent
    record = episode.record("forecast")
    assert [c.max_tokens for c in record.model_calls] == [300]  # recorded as sent
    assert record.usage.model_calls == 1  # and not charged


@pytest.fixture
def _forget_shared_models() -> Iterator[None]:
    """The shared models this test makes point at no file: forgotten after it, so that a later
    run, which loads every shared model before starting, never meets them."""
    yield
    clear_models()


@pytest.mark.usefixtures("_forget_shared_models")
def test_local_limits_are_known_without_starting_the_model(tmp_path: Path) -> None:
    assert local_context_limits("smollm2", {}).default_max_tokens == DEFAULT_MAX_TOKENS
    limits = context_limits_for("local:/nowhere/model.gguf", {"n_ctx": 2048})
    assert limits is not None and limits.window == 2048
    assert context_limits_for("openai:gpt-4o-mini", {}) is None
    # An agent's shared model knows its window before (and without) building the provider, so a
    # replayed run, which never builds it, fits its requests as the recorded run did.
    lazy = agent_model("local:/nowhere/model.gguf", {"n_ctx": 2048, "default_max_tokens": 64})
    assert lazy.context_limits == ContextLimits(window=2048, default_max_tokens=64)  # type: ignore[attr-defined]
    cached = agent_model("local:/nowhere/model.gguf", {"n_ctx": 4096}, cache_dir=str(tmp_path))
    assert isinstance(cached, CachedModel)
    assert cached.context_limits is not None and cached.context_limits.window == 4096
