"""Rate limits and the circuit breaker, on a fake clock."""

from __future__ import annotations

import threading
import time

import pytest

from pastcast.models import ProviderError
from pastcast.retrying import TokenBucket
from pastcast.runner._config import BreakerConfig
from pastcast.runner._limits import CircuitBreaker


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_request_rate_is_kept_after_the_burst() -> None:
    clock = FakeClock()
    bucket = TokenBucket(60, burst_s=5, clock=clock, sleep=clock.sleep)  # 1 a second
    for _ in range(5):
        assert bucket.take(1) == 0.0  # a burst of five seconds' worth
    for _ in range(10):
        bucket.take(1)
    assert clock.now == pytest.approx(10.0)  # then one a second


def test_token_charges_are_corrected_and_big_requests_wait_for_a_full_bucket() -> None:
    clock = FakeClock()
    bucket = TokenBucket(6000, burst_s=1, clock=clock, sleep=clock.sleep)  # 100 tokens a second
    bucket.take(100)
    bucket.adjust(-60)  # the request used 40 tokens, not 100
    assert bucket.take(60) == 0.0
    waited = bucket.take(500)  # larger than the bucket: waits for it to fill, then owes
    assert waited == pytest.approx(1.0)
    assert bucket.take(1) == pytest.approx(4.01)


def test_the_breaker_opens_after_consecutive_failures_and_a_probe_closes_it() -> None:
    clock = FakeClock()
    trips: list[str] = []
    cfg = BreakerConfig(failures=3, cooldown_s=10, max_pause_s=100)
    breaker = CircuitBreaker("p", cfg, clock=clock, on_trip=trips.append)
    for _ in range(2):
        breaker.before()
        breaker.record("server_error")
    breaker.before()
    breaker.record("rate_limited")  # rate limiting is not the provider failing
    assert breaker.state == "closed"
    breaker.before()
    breaker.record("timeout")
    assert breaker.state == "open" and trips == ["p"]
    clock.now += 10  # cooldown over: one probe goes through
    breaker.before()
    assert breaker.state == "half_open"
    breaker.record("connection")  # the probe failed: paused again
    assert breaker.state == "open" and breaker.trips == 2
    clock.now += 10
    breaker.before()
    breaker.record(None)
    assert breaker.state == "closed"


def test_a_pause_longer_than_the_limit_fails_the_call() -> None:
    cfg = BreakerConfig(failures=1, cooldown_s=60, max_pause_s=0.2)
    breaker = CircuitBreaker("p", cfg)
    breaker.before()
    breaker.record("server_error")
    started = time.monotonic()
    with pytest.raises(ProviderError, match="paused by its circuit breaker") as info:
        breaker.before()
    assert info.value.kind == "paused" and info.value.failure_reason == "provider_error"
    assert 0.2 <= time.monotonic() - started < 2


def test_only_one_probe_at_a_time_while_half_open() -> None:
    cfg = BreakerConfig(failures=1, cooldown_s=0.0, max_pause_s=5)
    breaker = CircuitBreaker("p", cfg)
    breaker.before()
    breaker.record("server_error")
    breaker.before()  # the probe
    through: list[int] = []
    waiter = threading.Thread(target=lambda: (breaker.before(), through.append(1)), daemon=True)
    waiter.start()
    time.sleep(0.2)
    assert through == []  # held while the probe is out
    breaker.record(None)
    waiter.join(2)
    assert through == [1]


def test_stopped_gates_end_the_calls_waiting_between_retries_and_refuse_new_ones() -> None:
    # An interrupted run stops its gates: a step still running must not sit out its backoff
    # (up to 30 s a retry, 4 retries) or its provider's pause before it can end.
    from pastcast.models import ChatResponse
    from pastcast.retrying import RetryPolicy
    from pastcast.runner import ProviderGates
    from pastcast.runner._config import Execution

    gates = ProviderGates(Execution(retry=RetryPolicy(base_delay_s=30, max_delay_s=30)), seed=0)
    attempts = 0

    def down() -> ChatResponse:
        nonlocal attempts
        attempts += 1
        raise ProviderError("connection refused", kind="connection")

    failed: list[ProviderError] = []

    def call() -> None:
        try:
            gates.call("local", "m", 10, down)
        except ProviderError as exc:
            failed.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    while attempts == 0:
        time.sleep(0.01)
    time.sleep(0.05)  # in its backoff now
    started = time.monotonic()
    gates.stop()
    worker.join(timeout=5)
    assert not worker.is_alive() and time.monotonic() - started < 2
    assert failed and failed[0].kind == "refused" and attempts <= 2
    with pytest.raises(ProviderError, match="the run is over"):
        gates.call("local", "m", 10, down)
