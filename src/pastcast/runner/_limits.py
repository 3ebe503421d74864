"""Per-provider limits in front of every model call of a run (docs/runs.md, "Per-provider
limits"). Blocking primitives (a semaphore, a condition) suit the thread-based executors: a
waiting call holds a thread, never a provider connection.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

from pastcast.models import ChatResponse, ProviderError
from pastcast.retrying import FailureKind, ProviderFailure, TokenBucket, call_with_retries
from pastcast.runner._config import BreakerConfig, Execution, ProviderLimits

Clock = Callable[[], float]


BreakerState = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    """Pauses a provider that keeps failing (see ``BreakerConfig``); ``trips`` counts pauses."""

    def __init__(
        self,
        name: str,
        config: BreakerConfig,
        *,
        clock: Clock = time.monotonic,
        on_trip: Callable[[str], None] | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.state: BreakerState = "closed"
        self.trips = 0
        self._failures = 0
        self._opened_at = 0.0
        self._probing = False
        self._clock = clock
        self._on_trip = on_trip
        self._cond = threading.Condition()
        self._stopped = False

    def stop(self) -> None:
        """The run is over: callers waiting for the provider give up now."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    def before(self) -> None:
        """Wait while the provider is paused; raise ``ProviderError`` (``paused``) after
        ``max_pause_s``. In the half-open state one caller at a time is let through (the
        probe)."""
        if self.state == "closed" and not self._stopped:
            return  # the common case, read without the lock (a lock taken at every call of
            # 256 threads is a queue of them, each turn a wait for the interpreter)
        started = self._clock()
        with self._cond:
            while True:
                if self._stopped:
                    raise ProviderError(f"provider {self.name}: the run is over", kind="refused")
                if self.state == "closed":
                    return
                now = self._clock()
                if self.state == "open" and now >= self._opened_at + self.config.cooldown_s:
                    self.state = "half_open"
                if self.state == "half_open" and not self._probing:
                    self._probing = True
                    return
                waited = now - started
                if waited >= self.config.max_pause_s:
                    raise ProviderError(
                        f"provider {self.name} paused by its circuit breaker after "
                        f"{self.config.failures} failures in a row; gave up after {waited:.0f} s",
                        kind="paused",
                    )
                reopen = self._opened_at + self.config.cooldown_s - now
                left = self.config.max_pause_s - waited
                self._cond.wait(timeout=max(0.01, min(left, reopen if reopen > 0 else left, 1.0)))

    def record(self, kind: FailureKind | None) -> None:
        """The outcome of an attempt let through by ``before``: None for a success."""
        if kind is None and self.state == "closed" and not self._failures and not self._probing:
            return  # a success that changes nothing, read without the lock
        counts = kind in ("server_error", "timeout", "connection", "bad_response")
        tripped = False
        with self._cond:
            probe, self._probing = self._probing, False
            if kind is None:
                self.state, self._failures = "closed", 0
            elif counts:
                self._failures += 1
                if probe or (self.state == "closed" and self._failures >= self.config.failures):
                    self.state, self._opened_at = "open", self._clock()
                    self.trips += 1
                    tripped = True
            self._cond.notify_all()
        if tripped and self._on_trip is not None:
            self._on_trip(self.name)


@dataclass
class TaskTally:
    """What happened at the providers during one task (one step), for the run's accounting."""

    retries: int = 0
    trips: list[str] = field(default_factory=list)


_TALLY: ContextVar[TaskTally | None] = ContextVar("pastcast_task_tally", default=None)


@contextmanager
def task_tally() -> Iterator[TaskTally]:
    """Count the retries and circuit trips of provider calls made in this context."""
    tally = TaskTally()
    token = _TALLY.set(tally)
    try:
        yield tally
    finally:
        _TALLY.reset(token)


class _Lane:
    def __init__(self, limits: ProviderLimits, breaker: CircuitBreaker) -> None:
        self.slots: AbstractContextManager[Any] = (
            threading.BoundedSemaphore(limits.max_concurrent)
            if limits.max_concurrent
            else nullcontext()
        )
        self.requests = (
            TokenBucket(limits.requests_per_minute) if limits.requests_per_minute else None
        )
        self.tokens = TokenBucket(limits.tokens_per_minute) if limits.tokens_per_minute else None
        self.breaker = breaker


class ProviderGates:
    """The run's gate in front of every provider (``pastcast.models.CallGate``)."""

    def __init__(self, execution: Execution, *, seed: int | None = None) -> None:
        self.execution = execution
        self._lanes: dict[str, _Lane] = {}
        self._lock = threading.Lock()
        self._rng = random.Random(seed)
        self._stopped = threading.Event()

    def stop(self) -> None:
        """The run is over (ended or interrupted): a step still running reaches no provider
        again (docs/runs.md, "Stopping early and stopping by hand")."""
        self._stopped.set()
        with self._lock:
            lanes = list(self._lanes.values())
        for lane in lanes:
            lane.breaker.stop()

    def _lane(self, provider: str) -> _Lane:
        lane = self._lanes.get(provider)  # read without the lock, as ``before`` reads
        if lane is not None:
            return lane
        with self._lock:
            lane = self._lanes.get(provider)
            if lane is None:
                limits = self.execution.providers.get(provider, ProviderLimits())
                breaker = CircuitBreaker(provider, self.execution.breaker, on_trip=_count_trip)
                lane = self._lanes[provider] = _Lane(limits, breaker)
            return lane

    def _backoff(self, seconds: float) -> None:
        self._stopped.wait(seconds)  # woken by ``stop``

    def paused(self) -> tuple[str, ...]:
        """Providers whose circuit is open now."""
        with self._lock:
            lanes = dict(self._lanes)
        return tuple(sorted(n for n, lane in lanes.items() if lane.breaker.state != "closed"))

    def call(
        self,
        provider: str,
        model: str,
        estimated_tokens: int,
        attempt: Callable[[], ChatResponse],
    ) -> ChatResponse:
        lane = self._lane(provider)

        def once() -> ChatResponse:
            if self._stopped.is_set():
                raise ProviderError(f"provider {provider}: the run is over", kind="refused")
            lane.breaker.before()
            try:
                if lane.requests is not None:
                    lane.requests.take(1)
                if lane.tokens is not None:
                    lane.tokens.take(estimated_tokens)
                with lane.slots:
                    response = attempt()
            except ProviderError as exc:
                lane.breaker.record(exc.kind)
                raise
            except BaseException:
                lane.breaker.record("refused")  # releases a probe without judging the provider
                raise
            lane.breaker.record(None)
            if lane.tokens is not None:
                used = response.usage.input_tokens + response.usage.output_tokens
                lane.tokens.adjust(used - estimated_tokens)
            return response

        rng = random.Random(self._rng.random())  # backoff jitter per call (random() is atomic)
        return call_with_retries(
            once, self.execution.retry, on_retry=_count_retry, sleep=self._backoff, rng=rng
        )


def _count_retry(error: ProviderFailure, delay: float) -> None:
    if (tally := _TALLY.get()) is not None:
        tally.retries += 1


def _count_trip(provider: str) -> None:
    if (tally := _TALLY.get()) is not None:
        tally.trips.append(provider)
