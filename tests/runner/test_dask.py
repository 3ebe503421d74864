"""The Dask executor on a LocalCluster bound to 127.0.0.1: the same records as the local
executor, streamed back to the one writer; a worker killed mid-episode loses nothing."""

from __future__ import annotations

import faulthandler
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scale_world import model_agents, outcomes, synthetic_backend, synthetic_dataset
from scripted_provider import ProviderState, start_provider

from _dask_cluster import local_cluster
from pastcast.runlog import read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.runner._dask import DaskExecutor

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with local_cluster(2, 8) as c:
        yield c


@pytest.fixture(scope="module")
def provider() -> Iterator[ProviderState]:
    state, server = start_provider()
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory, provider: ProviderState) -> dict:  # type: ignore[type-arg]
    """What the local executor records (answers depend on the requests alone)."""
    out = tmp_path_factory.mktemp("local") / "run.jsonl"
    _run(out, provider)
    return outcomes(read_run_log(out).steps)


def _run(out: Path, provider: ProviderState, executor: Any = None) -> Any:
    config = RunConfig(agents=model_agents(provider.url), workers=16)
    return run_benchmark(
        synthetic_dataset(),
        synthetic_backend(),
        config,
        out,
        progress=False,
        executor=executor,
    )


def test_the_cluster_listens_on_loopback_only(cluster: Any) -> None:
    assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
    with distributed.Client(cluster) as client:
        workers = client.scheduler_info()["workers"]
    assert workers and all(a.startswith("tcp://127.0.0.1:") for a in workers)


def test_dask_gives_the_records_of_the_local_executor(
    tmp_path: Path,
    provider: ProviderState,
    cluster: Any,
    reference: dict,  # type: ignore[type-arg]
) -> None:
    executor = DaskExecutor(cluster.scheduler_address)
    result = _run(tmp_path / "dask.jsonl", provider, executor)
    dask = read_run_log(tmp_path / "dask.jsonl").steps
    assert result.written == len(reference) == 72
    assert outcomes(dask) == reference


def test_a_worker_killed_mid_episode_loses_and_repeats_nothing(
    tmp_path: Path,
    provider: ProviderState,
    cluster: Any,
    reference: dict,  # type: ignore[type-arg]
) -> None:
    provider.latency_s = 0.15
    provider.served = provider.requests = 0
    executor = DaskExecutor(cluster.scheduler_address)
    box: dict[str, Any] = {}
    runner = threading.Thread(
        target=lambda: box.update(result=_run(tmp_path / "run.jsonl", provider, executor)),
        daemon=True,  # a run stuck by a defect fails this test, not the interpreter's exit
    )
    runner.start()
    deadline = time.monotonic() + 60
    while provider.served < 20 and time.monotonic() < deadline:  # episodes are in flight
        time.sleep(0.02)
    pids = executor.worker_pids()
    victim = sorted(pids.values())[0]
    os.kill(victim, signal.SIGKILL)
    runner.join(120)
    if runner.is_alive():  # say where it is stuck: the driver, the collector or a task
        faulthandler.dump_traceback(all_threads=True)
        with distributed.Client(cluster) as client:
            states = client.run_on_scheduler(
                lambda dask_scheduler: {k: t.state for k, t in dask_scheduler.tasks.items()}
            )
        pytest.fail(f"the run did not end after the kill; scheduler tasks: {states}")
    assert box["result"].written == 72
    assert provider.requests > 144  # the killed worker's episodes were run again
    steps = read_run_log(tmp_path / "run.jsonl").steps
    keys = [s.key for s in steps]
    assert len(keys) == len(set(keys)) == 72
    assert outcomes(steps) == reference
    with distributed.Client(cluster) as client:  # the nanny brought a new worker up
        client.wait_for_workers(2, timeout=30)
        assert victim not in client.run(os.getpid).values()


class _LostThenFound:
    """A future whose result was lost with its worker after it finished, then recomputed."""

    def __init__(self, key: str, statuses: list[str]) -> None:
        self.key = key
        self._statuses = statuses

    @property
    def status(self) -> str:
        return self._statuses.pop(0) if len(self._statuses) > 1 else self._statuses[0]

    def exception(self) -> None:
        return None  # what a lost future that is recomputed answers


class _GatherOnly:
    def gather(self, futures: list[Any]) -> list[str]:
        return [f"outcome of {f.key}" for f in futures]


@pytest.mark.parametrize(
    "statuses",
    [
        ["lost", "lost", "pending", "finished"],
        ["lost", "finished"],  # recomputed while the collector looks: read once, not twice
    ],
)
def test_a_result_lost_after_its_task_finished_is_waited_for_not_failed(
    statuses: list[str],
) -> None:
    executor = DaskExecutor("tcp://127.0.0.1:1")  # connects only when started
    executor.client = _GatherOnly()
    got: list[tuple[str, Any]] = []
    lost = _LostThenFound("a", list(statuses))
    found = _LostThenFound("b", ["finished"])
    for future in (lost, found):
        executor._tasks[future.key] = (future, future.key, lambda t, o: got.append((t, o)))
        executor._finished.put(future)
    collector = threading.Thread(target=executor._collect, daemon=True)
    collector.start()
    deadline = time.monotonic() + 10
    while len(got) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    executor._finished.put(None)
    collector.join(10)
    assert sorted(got) == [("a", "outcome of a"), ("b", "outcome of b")]
