"""Provider faults against a real loopback server: each failed attempt is classified, transient
ones are retried with jittered backoff that honours Retry-After, the rest fail at once."""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import pytest
from fake_chat_server import FakeServer, completion

from pastcast.models import (
    ChatRequest,
    ChatResponse,
    ModelError,
    ProviderError,
    using_gate,
)
from pastcast.models._openai import OpenAICompatibleModel
from pastcast.records import FAILURE_REASONS, RETRYABLE_FAILURES, Message
from pastcast.retrying import RetryPolicy, call_with_retries, retry_after_seconds


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")


def _model(server: FakeServer, **kw: object) -> OpenAICompatibleModel:
    return OpenAICompatibleModel("gpt-4o-mini", base_url=server.url, **kw)  # type: ignore[arg-type]


REQ = ChatRequest(messages=(Message(role="user", content="hi"),))


def test_a_truncated_reply_is_retried(fake_server: FakeServer) -> None:
    whole = completion("whole")
    fake_server.add(whole, raw=b'{"id": "x", "object": "chat.completion", "choices": [{"ind')
    fake_server.add(whole)
    resp = _model(fake_server, max_retries=2).chat(REQ)
    assert resp.content == "whole"
    assert len(fake_server.requests) == 2


def test_a_reply_that_stays_truncated_is_a_provider_error(fake_server: FakeServer) -> None:
    for _ in range(2):
        fake_server.add({}, raw=b'{"choices": [')
    with pytest.raises(ProviderError) as info:
        _model(fake_server, max_retries=1).chat(REQ)
    assert info.value.kind == "bad_response" and info.value.failure_reason == "provider_error"


def test_connection_resets_are_retried(fake_server: FakeServer) -> None:
    fake_server.add({}, reset=True)
    fake_server.add({}, reset=True)
    fake_server.add(completion("after resets"))
    assert _model(fake_server, max_retries=3).chat(REQ).content == "after resets"
    assert len(fake_server.requests) == 3


def test_timeouts_are_retried(fake_server: FakeServer) -> None:
    fake_server.add(completion("late"), delay_s=1.0)
    fake_server.add(completion("in time"))
    assert _model(fake_server, timeout_s=0.3, max_retries=1).chat(REQ).content == "in time"


def test_retry_after_is_honoured(fake_server: FakeServer) -> None:
    fake_server.add({"error": {"message": "slow down"}}, 429, headers={"retry-after": "0.6"})
    fake_server.add(completion("ok"))
    started = time.monotonic()
    assert _model(fake_server, max_retries=1).chat(REQ).content == "ok"
    assert time.monotonic() - started >= 0.6


@pytest.mark.parametrize(
    ("status", "kind", "reason"),
    [
        (404, "unavailable", "model_unavailable"),
        (401, "unavailable", "model_unavailable"),
        (400, "refused", None),
    ],
)
def test_configuration_and_request_errors_are_not_retried(
    fake_server: FakeServer, status: int, kind: str, reason: str | None
) -> None:
    fake_server.add({"error": {"message": "no"}}, status)
    with pytest.raises(ProviderError) as info:
        _model(fake_server, max_retries=3).chat(REQ)
    assert len(fake_server.requests) == 1
    assert (info.value.kind, info.value.status, info.value.failure_reason) == (kind, status, reason)
    assert isinstance(info.value, ModelError)  # agents that catch ModelError still do


def test_failure_reasons_of_providers_are_known_and_retryable() -> None:
    assert set(RETRYABLE_FAILURES) == {"provider_error", "model_unavailable"}
    assert set(RETRYABLE_FAILURES) <= set(FAILURE_REASONS)


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"Retry-After": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=0) > 1e9
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2015 07:28:10 GMT"}) == 0.0  # past
    assert retry_after_seconds({"Retry-After": "soon"}) is None
    assert retry_after_seconds({}) is None


def test_backoff_is_jittered_bounded_and_respects_retry_after() -> None:
    policy = RetryPolicy(base_delay_s=1.0, max_delay_s=8.0, max_retry_after_s=20.0)
    rng = random.Random(0)
    for attempt in range(8):
        delays = [policy.delay(attempt, None, rng) for _ in range(200)]
        ceiling = min(8.0, 2.0**attempt)
        assert all(0.0 <= d <= ceiling for d in delays)
        assert max(delays) > 0.5 * ceiling  # jittered over the whole range, not a constant
    assert all(policy.delay(0, 5.0, rng) >= 5.0 for _ in range(50))
    assert policy.delay(0, 1000.0, rng) == 20.0  # a provider's wait is capped


def test_call_with_retries_gives_up_after_the_policy_and_reports_each_retry() -> None:
    seen: list[tuple[str, float]] = []
    calls = 0

    def attempt() -> str:
        nonlocal calls
        calls += 1
        raise ProviderError("down", kind="server_error", status=503, retry_after=0.01)

    policy = RetryPolicy(max_retries=3, base_delay_s=0.0)
    with pytest.raises(ProviderError):
        call_with_retries(attempt, policy, on_retry=lambda e, d: seen.append((e.kind, d)))
    assert calls == 4 and [k for k, _ in seen] == ["server_error"] * 3
    assert all(d >= 0.01 for _, d in seen)


class _RecordingGate:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int]] = []

    def call(
        self, provider: str, model: str, estimated_tokens: int, attempt: Callable[[], ChatResponse]
    ) -> ChatResponse:
        self.calls.append((provider, model, estimated_tokens))
        return attempt()


def test_a_gate_in_context_sees_every_provider_call(fake_server: FakeServer) -> None:
    gate = _RecordingGate()
    model = _model(fake_server)
    with using_gate(gate):
        model.chat(ChatRequest(messages=(Message(role="user", content="x" * 400),), max_tokens=10))
    model.chat(REQ)  # outside the context: not gated
    assert gate.calls == [("openai", "gpt-4o-mini", 110)]
