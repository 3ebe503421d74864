"""A Dask ``LocalCluster`` on the loopback for the tests that need one: worker processes bound
to 127.0.0.1, no dashboard; skipped with the reason where ``distributed`` is not installed.
``dask_address`` is one such cluster of three workers for a whole session (the sharded corpus
tests: imported by ``tests/corpus/conftest.py``)."""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest


@contextmanager
def local_cluster(workers: int, threads: int) -> Iterator[Any]:
    if importlib.util.find_spec("distributed") is None:
        pytest.skip("dask.distributed is not installed (pip install -e '.[scale]')")
    import distributed

    with distributed.LocalCluster(
        host="127.0.0.1",
        n_workers=workers,
        threads_per_worker=threads,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def dask_address() -> Iterator[str]:
    with local_cluster(3, 2) as cluster:
        yield str(cluster.scheduler_address)
