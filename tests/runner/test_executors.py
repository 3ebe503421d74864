"""Executors: many episodes in flight, memory-on chains in order, executors from the registry."""

from __future__ import annotations

import itertools
import time
from pathlib import Path

import pytest
from scale_world import model_agents, synthetic_backend, synthetic_dataset
from scripted_provider import ProviderState

from pastcast.errors import FieldError
from pastcast.runlog import read_run_log
from pastcast.runner import RunConfig, executors, run_benchmark
from pastcast.runner._executors import LocalExecutor


def test_episodes_run_in_parallel_and_memory_on_chains_in_order(
    tmp_path: Path, provider: ProviderState
) -> None:
    # long enough that the runner's own CPU time on a loaded machine cannot hide the overlap
    provider.latency_s = 0.3
    out = tmp_path / "run.jsonl"
    # a stall of the machine longer than a short timeout would time out every call in flight
    # and send each again, which the count below would take for extra calls
    config = RunConfig(agents=model_agents(provider.url, timeout_s=30.0), workers=32)
    started = time.monotonic()
    result = run_benchmark(synthetic_dataset(), synthetic_backend(), config, out, progress=False)
    elapsed = time.monotonic() - started
    calls = provider.served
    # a search and an answer per step; on a loaded machine a reply now and then is lost on a
    # closing keep-alive connection and its request sent again, which the server counts twice
    assert result.written == 72 and 144 <= calls <= 152
    assert elapsed < calls * 0.3 / 4, elapsed  # serially: 43 s of provider latency alone
    steps = read_run_log(out).steps
    chains: dict[tuple[str, int], list] = {}  # type: ignore[type-arg]
    for s in steps:
        if s.setting == "memory_on":
            chains.setdefault((s.event_id, s.rollout), []).append(s)
    for chain in chains.values():
        chain.sort(key=lambda s: s.step_index)
        assert chain[0].episode.notebook_in is None
        for before, after in itertools.pairwise(chain):
            # each step started from the notebook the step before it ended with
            assert after.episode.notebook_in == before.episode.notebook_out is not None
    written = [(s.event_id, s.step_index) for s in steps if s.setting == "memory_on"]
    for key in chains:  # and was written after it
        order = [i for e, i in written if e == key[0]]
        assert order == sorted(order)


def test_executors_are_registered_and_checked() -> None:
    assert {"local", "dask"} <= set(executors.names())
    assert isinstance(executors.build("local", threads=3), LocalExecutor)
    with pytest.raises(FieldError, match="accepted arguments"):
        executors.build("local", thread=3)
