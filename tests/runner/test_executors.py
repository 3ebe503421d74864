"""Executors: many episodes in flight, memory-on chains in order, executors from the registry."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import pytest
from scale_world import model_agents, synthetic_backend, synthetic_dataset
from scripted_provider import ProviderState

from pastcast.errors import FieldError
from pastcast.runlog import RunLogWriter, read_run_log
from pastcast.runner import RunConfig, RunResult, _run, executors, run_benchmark
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


def test_the_local_pool_is_up_before_the_first_step_and_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every thread is started by ``start`` (as a tree), none by a submit; no more steps run at
    # once than threads; a step's exception reaches ``done``; ``close`` drops what has not
    # started, and a thread of a closed run never takes a step of the next one.
    import threading
    from types import SimpleNamespace

    from pastcast.runner import _executors

    gate, lock = threading.Event(), threading.Lock()
    running, most, seen = [0], [0], []

    def run_step(context: object, task: object) -> object:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        gate.wait(10)
        with lock:
            running[0] -= 1
        if task == "bad":
            raise ValueError("step failed")
        return (context, task)

    monkeypatch.setattr(_executors, "run_step", run_step)
    monkeypatch.setattr(_executors, "prepare_context", lambda context: lambda: ())
    monkeypatch.setattr(_executors, "forget_context", lambda key: None)
    pool = LocalExecutor(threads=7)
    first = SimpleNamespace(key="first", config=None)
    before = set(threading.enumerate())
    pool.start(first)  # type: ignore[arg-type]
    deadline = time.monotonic() + 10
    while len(set(threading.enumerate()) - before) < 7 and time.monotonic() < deadline:
        time.sleep(0.01)
    started = set(threading.enumerate()) - before
    assert sorted(t.name for t in started) == [f"pastcast-step_{i}" for i in range(7)]
    done = threading.Semaphore(0)

    def record(task: object, outcome: object) -> None:
        seen.append((task, outcome))
        done.release()

    for task in ["bad", *range(11)]:
        pool.submit(task, record)  # type: ignore[arg-type]
    assert set(threading.enumerate()) - before == started  # no thread per submit
    time.sleep(0.2)
    assert most[0] == 7 and not seen
    gate.set()
    for _ in range(12):
        assert done.acquire(timeout=10)
    assert most[0] == 7
    failed = [o for t, o in seen if t == "bad"]
    assert len(failed) == 1 and isinstance(failed[0], ValueError)
    assert sorted(t for t, o in seen if t != "bad") == list(range(11))  # type: ignore[type-var]
    gate.clear()
    pool.submit("held-1", record)  # type: ignore[arg-type]
    pool.submit("held-2", record)  # type: ignore[arg-type]
    time.sleep(0.1)
    for _ in range(7):
        pool.submit("dropped", record)  # type: ignore[arg-type]
    pool.close()
    second = SimpleNamespace(key="second", config=None)
    pool.start(second)  # type: ignore[arg-type]
    pool.submit("next", record)  # type: ignore[arg-type]
    gate.set()
    for _ in range(3):
        assert done.acquire(timeout=10)
    assert not done.acquire(timeout=0.3)  # the dropped steps never ran
    by_task = {t: o for t, o in seen[12:]}
    assert set(by_task) == {"held-1", "held-2", "next"}
    assert by_task["next"] == (second, "next")  # taken by the new run's threads
    pool.close()
    for thread in started:
        thread.join(10)
        assert not thread.is_alive()


def _memory_free_run(
    provider: ProviderState, out: Path, dataset: Any, workers: int, executor: LocalExecutor
) -> RunResult:
    """The scripted tool agent, memory-free only, on ``dataset``: one step after another
    where ``executor`` has one thread."""
    agents = model_agents(provider.url, settings=("memory_free",), timeout_s=30.0)
    config = RunConfig(agents=agents, workers=workers)
    return run_benchmark(
        dataset, synthetic_backend(), config, out, progress=False, executor=executor
    )


def test_the_next_steps_go_out_before_the_records_that_came_back_are_written(
    tmp_path: Path, provider: ProviderState, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A thread that finishes a step must not wait for the driver to write records: the
    # executor holds one step in eight more than the workers, and the driver hands out the
    # next steps before it writes those that came back. At every write the steps handed out
    # so far cover the records written plus the workers and their spare (or every step).
    events: list[str] = []

    class Recording(LocalExecutor):
        def submit(self, task: Any, done: Any) -> None:
            def back(task: Any, outcome: Any) -> None:
                events.append("back")
                done(task, outcome)

            events.append("submit")
            super().submit(task, back)

    real_write = RunLogWriter.write

    def write(self: RunLogWriter, record: Any, **kw: Any) -> None:
        events.append("write")
        real_write(self, record, **kw)

    monkeypatch.setattr(RunLogWriter, "write", write)
    provider.latency_s = 0.02
    dataset = synthetic_dataset()
    result = _memory_free_run(provider, tmp_path / "run.jsonl", dataset, 8, Recording())
    total = len(dataset.steps)
    assert result.written == total == events.count("write")
    submitted = written = handed = most = 0
    for event in events:
        submitted += event == "submit"
        handed += (event == "submit") - (event == "back")
        most = max(most, handed)
        if event == "write":
            written += 1
            assert submitted >= min(total, written + 8 + 1), (written, submitted)
    assert most == 8 + 1  # the workers and one spare, never more


def test_records_that_come_back_one_after_another_are_written_together(
    tmp_path: Path, provider: ProviderState, monkeypatch: pytest.MonkeyPatch
) -> None:
    # While steps keep coming back and others wait to be handed out, the driver holds their
    # records and writes them together (one fsync) once replies pause, a wave's worth waits or
    # nothing is left to hand out; every record is written by the end.
    syncs: list[int] = []
    real_sync = RunLogWriter.sync

    def sync(self: RunLogWriter, **kw: Any) -> None:
        syncs.append(1)
        real_sync(self, **kw)

    monkeypatch.setattr(RunLogWriter, "sync", sync)
    # Replies never pause long enough here, however busy the machine: what is held is written
    # when a wave's worth (the workers) waits, or when nothing is left to hand out.
    monkeypatch.setattr(_run, "_QUIET_S", 60.0)
    monkeypatch.setattr(_run, "_HOLD_S", 60.0)
    provider.latency_s = 0.0  # one thread: the steps come back one after another
    dataset = synthetic_dataset(n_events=60)
    out = tmp_path / "run.jsonl"
    result = _memory_free_run(provider, out, dataset, 16, LocalExecutor(1))
    total = len(dataset.steps)
    assert result.written == total == len(read_run_log(out).steps)
    assert len(syncs) <= total // 4, (len(syncs), total)


def test_an_interrupted_run_keeps_the_records_it_held(
    tmp_path: Path, provider: ProviderState, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ctrl-C reaches the driver while it holds the records of steps that came back: they are
    # written before the interrupt goes on, so the log holds every step that came back.
    real_drain, came = _run.drain, [0]

    def drain(items: Any, timeout: float | None = None) -> list[Any]:
        if came[0] >= 40:  # the interrupt, once 40 steps came back, some of them held
            raise KeyboardInterrupt
        got = real_drain(items, timeout)
        came[0] += len(got)
        return got

    monkeypatch.setattr(_run, "_QUIET_S", 60.0)  # held until 16 wait, however busy the machine
    monkeypatch.setattr(_run, "drain", drain)
    provider.latency_s = 0.0
    out = tmp_path / "run.jsonl"
    with pytest.raises(KeyboardInterrupt):
        _memory_free_run(provider, out, synthetic_dataset(n_events=60), 16, LocalExecutor(1))
    assert 0 < len(read_run_log(out).steps) == came[0] < 180
