"""A Dask cluster on the loopback for the sharded corpus tests (imported by those modules).

The session-scoped ``dask_address`` fixture starts a ``LocalCluster`` of three worker processes
bound to 127.0.0.1 (no dashboard), yields its scheduler address and closes it at the end;
skipped with the reason where ``distributed`` is not installed.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterator

import pytest

WORKERS = 3


@pytest.fixture(scope="session")
def dask_address() -> Iterator[str]:
    if importlib.util.find_spec("distributed") is None:
        pytest.skip("dask.distributed is not installed (pip install -e '.[scale]')")
    import distributed

    with distributed.LocalCluster(
        host="127.0.0.1",
        n_workers=WORKERS,
        threads_per_worker=2,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    ) as cluster:
        yield str(cluster.scheduler_address)
