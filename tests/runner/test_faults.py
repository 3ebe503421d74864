"""Fault injection against a scripted provider on loopback: rate limits with Retry-After, server
errors, timeouts, truncated replies and connection resets are retried and leave the run's
forecasts exactly as without them; a provider that keeps failing is paused, reported, and its
steps are run again on resume."""

from __future__ import annotations

from pathlib import Path

from scale_world import model_agents, outcomes, synthetic_backend, synthetic_dataset
from scripted_provider import FAULT_KINDS, Faults, ProviderState

from pastcast.retrying import RetryPolicy
from pastcast.runlog import read_run_log, retried_path
from pastcast.runner import RunConfig, run_benchmark
from pastcast.runner._config import BreakerConfig, Execution, ProviderLimits

FAST_RETRIES = RetryPolicy(max_retries=6, base_delay_s=0.01, max_delay_s=0.05)


def _run(  # type: ignore[no-untyped-def]
    out: Path,
    provider: ProviderState,
    execution: Execution,
    *,
    retry_failed: bool = False,
    **kw: object,
):
    config = RunConfig(agents=model_agents(provider.url), workers=16, **kw)  # type: ignore[arg-type]
    return run_benchmark(
        synthetic_dataset(),
        synthetic_backend(),
        config,
        out,
        progress=False,
        execution=execution,
        retry_failed=retry_failed,
    )


def test_every_fault_is_retried_and_the_forecasts_are_those_of_a_clean_run(
    tmp_path: Path, provider: ProviderState
) -> None:
    execution = Execution(retry=FAST_RETRIES)
    _run(tmp_path / "clean.jsonl", provider, execution)
    clean = read_run_log(tmp_path / "clean.jsonl").steps
    provider.seen.clear()
    provider.faults = Faults(rate=0.6, seed=3, timeout_s=1.3)
    result = _run(tmp_path / "faulty.jsonl", provider, execution)
    faulty = read_run_log(tmp_path / "faulty.jsonl").steps
    assert set(provider.faults_served) == set(FAULT_KINDS)  # each kind of fault happened
    assert result.failures == 0 and all(s.forecast.usable for s in faulty)
    assert outcomes(faulty) == outcomes(clean)
    assert result.accounting.retries == sum(provider.faults_served.values())
    assert result.accounting.by_model  # calls, tokens and latency per model
    calls = result.accounting.by_model["openai-compatible:scripted@" + provider.url]
    assert calls.model_calls == sum(s.episode.usage.model_calls for s in faulty)


def test_per_provider_concurrency_is_capped(tmp_path: Path, provider: ProviderState) -> None:
    provider.latency_s = 0.02
    limits = {"openai-compatible": ProviderLimits(max_concurrent=3)}
    _run(tmp_path / "run.jsonl", provider, Execution(providers=limits, retry=FAST_RETRIES))
    assert provider.max_in_flight == 3  # 16 episodes in flight, 3 requests at a time


def test_a_provider_that_keeps_failing_is_paused_then_resumes(
    tmp_path: Path, provider: ProviderState
) -> None:
    import threading

    provider.down = True
    threading.Timer(1.0, lambda: setattr(provider, "down", False)).start()
    breaker = BreakerConfig(failures=3, cooldown_s=0.3, max_pause_s=30)
    result = _run(
        tmp_path / "run.jsonl",
        provider,
        Execution(retry=FAST_RETRIES, breaker=breaker),
        max_events=3,
    )
    assert result.accounting.pauses.get("openai-compatible", 0) >= 1  # reported
    assert result.failures == 0  # every step waited for the provider and went through


def test_steps_a_provider_failed_are_recorded_as_such_and_run_again_on_request(
    tmp_path: Path, provider: ProviderState
) -> None:
    out = tmp_path / "run.jsonl"
    execution = Execution(
        retry=RetryPolicy(max_retries=1, base_delay_s=0.0),
        breaker=BreakerConfig(failures=1000),
    )
    reference = tmp_path / "reference.jsonl"
    _run(reference, provider, execution, max_events=4)
    provider.down = True
    first = _run(out, provider, execution, max_events=4)
    steps = read_run_log(out).steps
    memory_free = [s for s in steps if s.setting == "memory_free"]
    assert len(memory_free) == 12 and {s.forecast.failure_reason for s in steps} == {
        "provider_error"
    }
    # A memory-on chain stops at its first failed step: later steps would build on a hole.
    assert [s.step_index for s in steps if s.setting == "memory_on"] == [0, 0, 0, 0]
    assert first.waiting == 8
    provider.down = False
    again = _run(out, provider, execution, max_events=4)  # a plain resume keeps the failures...
    assert {s.forecast.failure_reason for s in read_run_log(out).steps} >= {"provider_error"}
    assert again.retried == 0
    provider.missing = True  # ...and a model that is not there is a configuration failure
    _run(tmp_path / "missing.jsonl", provider, execution, max_events=1)
    missing = read_run_log(tmp_path / "missing.jsonl").steps
    assert {s.forecast.failure_reason for s in missing} == {"model_unavailable"}
    provider.missing = False
    retried = _run(out, provider, execution, max_events=4, retry_failed=True)
    final = read_run_log(out).steps
    assert all(s.forecast.usable for s in final)
    assert outcomes(final) == outcomes(read_run_log(reference).steps)
    assert len({s.key for s in final}) == len(final) == 24  # nothing duplicated
    assert retried.retried == 16 and {s.attempt for s in final if s.setting == "memory_free"} == {2}
    aside = retried_path(out).read_text().splitlines()
    assert len(aside) == 16  # the failed records, kept for the audit
