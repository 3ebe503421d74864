"""Provider failures, retries with jittered backoff, and the gate a run puts in front of providers.

A remote provider turns each failed attempt into a ``ProviderError`` with a ``kind``: transient
kinds (rate limited, server error, timeout, connection lost, malformed reply) are retried,
configuration kinds (unknown model, refused credentials) and refused requests are not.
``call_with_retries`` retries with full-jitter exponential backoff and waits at least as long as
the provider's ``Retry-After``.

A run can put a ``CallGate`` in front of every provider call made in the current context
(``using_gate``): per-provider concurrency, request and token rate limits, a circuit breaker and
the accounting of retries (``pastcast.runner`` implements it). Without a gate a provider retries
on its own with its ``RetryPolicy``. A context variable rather than a model option: the gate is
the run's, not part of the model's recorded spec, and each thread or worker task sets its own.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from email.utils import parsedate_to_datetime
from typing import Literal, Protocol, TypeVar

from pydantic import Field

from pastcast.models._protocol import ChatResponse, ModelError
from pastcast.records import FailureReason, Record

__all__ = [
    "TRANSIENT_KINDS",
    "CallGate",
    "FailureKind",
    "ProviderError",
    "RetryPolicy",
    "call_with_retries",
    "current_gate",
    "retry_after_seconds",
    "using_gate",
]

T = TypeVar("T")

FailureKind = Literal[
    "rate_limited",  # 429
    "server_error",  # 5xx, 408, 409
    "timeout",
    "connection",  # refused, reset, closed mid-reply
    "bad_response",  # a reply that is not the protocol's JSON (truncated, garbled)
    "paused",  # the provider's circuit stayed open longer than the run waits
    "unavailable",  # the model or endpoint does not exist, credentials refused (401/403/404)
    "refused",  # the request itself was rejected (400, 413, 422: e.g. context overflow)
]

TRANSIENT_KINDS: frozenset[FailureKind] = frozenset(
    {"rate_limited", "server_error", "timeout", "connection", "bad_response"}
)


class ProviderError(ModelError):
    """A provider call that failed; ``kind`` says why, ``retry_after`` what the provider asked."""

    def __init__(
        self,
        message: str,
        *,
        kind: FailureKind,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: FailureKind = kind
        self.status = status
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        """Worth another attempt now (after a backoff)."""
        return self.kind in TRANSIENT_KINDS

    @property
    def failure_reason(self) -> FailureReason | None:
        """What a step that ends on this error records: a provider that failed (transient, or
        paused by its circuit breaker) or a model that is not there (configuration); both may be
        retried later (``pastcast run --retry-failed``). None for a refused request, which is
        the agent's failure."""
        if self.kind == "refused":
            return None
        return "model_unavailable" if self.kind == "unavailable" else "provider_error"


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds a reply's ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date) asks
    to wait, or None."""
    lower = {k.lower(): v for k, v in headers.items()}
    ms = lower.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


class RetryPolicy(Record):
    """How often and how long to retry transient failures: full-jitter exponential backoff
    (a uniform draw in [0, min(max_delay_s, base_delay_s * 2**attempt)]), never shorter than the
    provider's Retry-After (which is capped by ``max_retry_after_s``)."""

    max_retries: int = Field(default=4, ge=0)
    base_delay_s: float = Field(default=0.5, ge=0)
    max_delay_s: float = Field(default=30.0, ge=0)
    max_retry_after_s: float = Field(default=300.0, ge=0)

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry number ``attempt + 1`` (``attempt`` counts from 0)."""
        ceiling = min(self.max_delay_s, self.base_delay_s * (2.0**attempt))
        jittered = rng.uniform(0.0, ceiling)
        if retry_after is None:
            return jittered
        return max(min(retry_after, self.max_retry_after_s), jittered)


def call_with_retries(
    attempt: Callable[[], T],
    policy: RetryPolicy,
    *,
    on_retry: Callable[[ProviderError, float], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
) -> T:
    """``attempt()``, retried on transient ``ProviderError`` up to ``policy.max_retries`` times;
    ``on_retry(error, delay)`` is told before each wait. The last error is raised as it is."""
    draw = rng or random.Random()
    for n in range(policy.max_retries + 1):
        try:
            return attempt()
        except ProviderError as exc:
            if not exc.transient or n == policy.max_retries:
                raise
            wait = policy.delay(n, exc.retry_after, draw)
            if on_retry is not None:
                on_retry(exc, wait)
            sleep(wait)
    raise AssertionError("unreachable")  # the loop returns or raises


class CallGate(Protocol):
    """What a run puts in front of provider calls (``pastcast.runner.ProviderGates``)."""

    def call(
        self,
        provider: str,
        model: str,
        estimated_tokens: int,
        attempt: Callable[[], ChatResponse],
    ) -> ChatResponse:
        """Run ``attempt`` (one request) under the provider's limits, with retries."""
        ...


_GATE: ContextVar[CallGate | None] = ContextVar("pastcast_call_gate", default=None)


def current_gate() -> CallGate | None:
    """The gate of the current context (None outside a gated run)."""
    return _GATE.get()


@contextmanager
def using_gate(gate: CallGate | None) -> Iterator[None]:
    """Provider calls made in this context (this thread, this task) go through ``gate``."""
    token = _GATE.set(gate)
    try:
        yield
    finally:
        _GATE.reset(token)
