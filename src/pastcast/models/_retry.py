"""Provider failures, retries with jittered backoff, and the gate a run puts in front of providers.

A remote provider turns each failed attempt into a ``ProviderError`` with a ``kind``: transient
kinds (rate limited, server error, timeout, connection lost, malformed reply) are retried,
configuration kinds (unknown model, refused credentials) and refused requests are not.
``call_with_retries`` (``pastcast.retrying``, shared with the corpus's remote embedders) retries
with full-jitter exponential backoff and waits at least as long as the provider's
``Retry-After``.

A run can put a ``CallGate`` in front of every provider call made in the current context
(``using_gate``): per-provider concurrency, request and token rate limits, a circuit breaker and
the accounting of retries (``pastcast.runner`` implements it). Without a gate a provider retries
on its own with its ``RetryPolicy``. A context variable rather than a model option: the gate is
the run's, not part of the model's recorded spec, and each thread or worker task sets its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

from pastcast.models._protocol import ChatResponse, ModelError
from pastcast.records import FailureReason
from pastcast.retrying import (
    TRANSIENT_KINDS,
    FailureKind,
    ProviderFailure,
    RetryPolicy,
    call_with_retries,
    retry_after_seconds,
)

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


class ProviderError(ModelError, ProviderFailure):
    """A provider call that failed; ``kind`` says why, ``retry_after`` what the provider asked
    (the retry loop, backoff and kinds are ``pastcast.retrying``'s, shared with the corpus's
    remote embedders)."""

    @property
    def failure_reason(self) -> FailureReason | None:
        """What a step that ends on this error records: a provider that failed (transient, or
        paused by its circuit breaker) or a model that is not there (configuration); both may be
        retried later (``pastcast run --retry-failed``). None for a refused request, which is
        the agent's failure."""
        if self.kind == "refused":
            return None
        return "model_unavailable" if self.kind == "unavailable" else "provider_error"


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
