"""The Dask executor: steps run on the workers of a ``distributed`` cluster, records come back.

The run's context is scattered to every worker once; each step is one task (``run_step``), and
its outcome (the record) streams back to the driver as the task finishes, where the one writer
appends it. A worker that dies mid-step (killed, out of memory) has its tasks rescheduled by the
scheduler on another worker: the step runs again from its start, and nothing of the lost attempt
was written. Without ``address`` a ``LocalCluster`` is started bound to 127.0.0.1 with no
dashboard; with one, the client connects to that scheduler (see docs/runs.md).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from typing import Any

from pastcast.runner._work import StepTask, WorkContext, forget_context, run_step

__all__ = ["DaskExecutor"]


def _distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise RuntimeError(
            "the dask executor needs dask.distributed: pip install 'pastcast[scale]'"
        ) from exc
    return distributed


class DaskExecutor:
    def __init__(
        self,
        address: str | None = None,
        *,
        n_workers: int = 2,
        threads_per_worker: int = 16,
        processes: bool = True,
    ) -> None:
        _distributed()  # refused now, before a run starts, where the extra is missing
        self.address = address
        self.n_workers = n_workers
        self.threads_per_worker = threads_per_worker
        self.processes = processes
        self.client: Any = None
        self._cluster: Any = None
        self._context: Any = None
        self._key = ""

    def start(self, context: WorkContext) -> None:
        distributed = _distributed()
        if self.address is None:
            self._cluster = distributed.LocalCluster(
                host="127.0.0.1",
                n_workers=self.n_workers,
                threads_per_worker=self.threads_per_worker,
                processes=self.processes,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            self.client = distributed.Client(self._cluster)
        else:
            self.client = distributed.Client(self.address)
        # Workers build the sandboxed python tool themselves; a local runner does not travel.
        shipped = dataclasses.replace(context, python_runner=None)
        self._context = self.client.scatter(shipped, broadcast=True, hash=False)
        self._key = context.key

    def submit(self, task: StepTask, done: Any) -> None:
        if self.client is None:
            raise RuntimeError("executor not started")
        future = self.client.submit(run_step, self._context, task, pure=False)

        def finished(fut: Any) -> None:
            if fut.status == "finished":
                done(task, fut.result())
            else:
                try:
                    exc = fut.exception()
                except BaseException as err:  # cancelled: the exception is the cancellation
                    exc = err
                done(task, exc if isinstance(exc, BaseException) else RuntimeError(str(exc)))

        future.add_done_callback(finished)

    def worker_pids(self) -> dict[str, int]:
        """Worker address -> process id (to watch or kill workers)."""
        import os

        return dict(self.client.run(os.getpid)) if self.client is not None else {}

    def close(self) -> None:
        if self.client is not None:
            # A cluster shutting down has nothing left to forget.
            with contextlib.suppress(Exception):
                self.client.run(forget_context, self._key)
            self.client.close()
            self.client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
