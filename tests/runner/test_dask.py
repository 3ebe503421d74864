"""The Dask executor on a LocalCluster bound to 127.0.0.1: the same records as the local
executor, streamed back to the one writer; a worker killed mid-episode loses nothing."""

from __future__ import annotations

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

from pastcast.runlog import read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.runner._dask import DaskExecutor

distributed = pytest.importorskip("distributed")
pytest.importorskip("openai")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with distributed.LocalCluster(
        host="127.0.0.1",
        n_workers=2,
        threads_per_worker=8,
        processes=True,
        dashboard_address=None,
    ) as c:
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
        target=lambda: box.update(result=_run(tmp_path / "run.jsonl", provider, executor))
    )
    runner.start()
    deadline = time.monotonic() + 60
    while provider.served < 20 and time.monotonic() < deadline:  # episodes are in flight
        time.sleep(0.02)
    pids = executor.worker_pids()
    victim = sorted(pids.values())[0]
    os.kill(victim, signal.SIGKILL)
    runner.join(120)
    assert not runner.is_alive()
    assert box["result"].written == 72
    assert provider.requests > 144  # the killed worker's episodes were run again
    steps = read_run_log(tmp_path / "run.jsonl").steps
    keys = [s.key for s in steps]
    assert len(keys) == len(set(keys)) == 72
    assert outcomes(steps) == reference
    with distributed.Client(cluster) as client:  # the nanny brought a new worker up
        client.wait_for_workers(2, timeout=30)
        assert victim not in client.run(os.getpid).values()
