"""Provider failures (``ProviderError``, by kind; the retry loop is ``pastcast.retrying``'s) and
the gate a run puts in front of providers (``CallGate``, ``using_gate``: per-provider limits, a
circuit breaker and the accounting of retries, implemented by ``pastcast.runner``). A context
variable rather than a model option: the gate is the run's, not part of the model's recorded
spec, and each thread or worker task sets its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

from pastcast.models._protocol import ChatResponse, ModelError
from pastcast.records import FailureReason
from pastcast.retrying import ProviderFailure


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
