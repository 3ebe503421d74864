"""The Dask executor: each step is one task (``run_step``) on a ``distributed`` cluster, its
record fetched back in batches (one ``gather`` for the tasks that finished together) for the
driver's writer. A worker's death reruns its steps elsewhere (docs/runs.md, "Scale-out on Dask").
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import queue
import threading
from typing import Any

from pastcast.runner._executors import Done, drain
from pastcast.runner._work import StepTask, WorkContext, forget_context, run_step

_ENDED = ("error", "cancelled")
_WATCH_S = 0.1
"""How often futures whose results were lost are looked at again."""


def _failure(future: Any) -> BaseException:
    """Why a task has no outcome: its exception, or its cancellation."""
    try:
        exc = future.exception()
    except BaseException as err:
        return err
    return exc if isinstance(exc, BaseException) else RuntimeError(str(exc))


def _unsettled(future: Any, state: str) -> BaseException:
    return RuntimeError(f"the task of {future.key} was still {state} at the run's end")


class DaskExecutor:
    """Workers of a Dask cluster: the scheduler at ``address``, or a local cluster of
    ``n_workers`` processes bound to 127.0.0.1 (extra ``scale``)."""

    def __init__(
        self,
        address: str | None = None,
        *,
        n_workers: int = 2,
        threads_per_worker: int = 16,
        processes: bool = True,
    ) -> None:
        try:  # refused now, before a run starts, where the extra is missing
            import distributed
        except ImportError as exc:
            raise RuntimeError(
                "the dask executor needs dask.distributed: pip install 'pastcast[scale]'"
            ) from exc
        self._distributed: Any = distributed
        self.address = address
        self._local = {  # a LocalCluster's, where no address is given
            "n_workers": n_workers,
            "threads_per_worker": threads_per_worker,
            "processes": processes,
        }
        self.client: Any = None
        self._cluster: Any = None
        self._context: Any = None
        self._key = ""
        self._tasks: dict[str, tuple[Any, StepTask, Done]] = {}  # held until done: a future
        self._finished: queue.Queue[Any] = queue.Queue()  # dropped is a future cancelled
        self._collector: threading.Thread | None = None

    def start(self, context: WorkContext) -> None:
        if self.address is None:
            self._cluster = self._distributed.LocalCluster(
                host="127.0.0.1", dashboard_address=None, silence_logs=logging.ERROR, **self._local
            )
            self.client = self._distributed.Client(self._cluster)
        else:
            self.client = self._distributed.Client(self.address)
        # Workers build the sandboxed python tool themselves; a local runner does not travel.
        shipped = dataclasses.replace(context, python_runner=None)
        self._context = self.client.scatter(shipped, broadcast=True, hash=False)
        self._key = context.key
        self._collector = threading.Thread(target=self._collect, daemon=True)
        self._collector.start()

    def submit(self, task: StepTask, done: Done) -> None:
        if self.client is None:
            raise RuntimeError("executor not started")
        future = self.client.submit(run_step, self._context, task, pure=False)
        self._tasks[future.key] = (future, task, done)
        future.add_done_callback(self._finished.put)

    def _collect(self) -> None:
        """Hand finished tasks' outcomes to the driver, fetched together. A task whose result
        was lost with its worker is ``lost`` (or ``pending``) until run again: watched, not
        failed."""
        watched: list[Any] = []
        stop = False
        while not stop:
            # Block for news only while nothing is being watched.
            batch = drain(self._finished, _WATCH_S if watched else None)
            stop = stop or None in batch
            states = [(f, f.status) for f in watched + [f for f in batch if f is not None]]
            ready = [f for f, state in states if state == "finished"]
            # At the end nothing is in flight (the driver has had every outcome): a future
            # still watched then is failed rather than waited for.
            failed = [(f, s) for f, s in states if s != "finished" and (stop or s in _ENDED)]
            watched = [f for f, state in states if state not in ("finished", *_ENDED) and not stop]
            try:
                outcomes = self.client.gather(ready) if ready else []
            except BaseException as lost:  # the cluster went away: every one of them failed
                outcomes = [lost] * len(ready)
            ended = [(f, _failure(f) if s in _ENDED else _unsettled(f, s)) for f, s in failed]
            for fut, outcome in [*zip(ready, outcomes, strict=True), *ended]:
                _, task, done = self._tasks.pop(fut.key)
                done(task, outcome)

    def worker_pids(self) -> dict[str, int]:
        """Worker address -> process id (to watch or kill workers)."""
        return dict(self.client.run(os.getpid)) if self.client is not None else {}

    def close(self) -> None:
        if self._collector is not None:
            self._finished.put(None)
            self._collector.join()
            self._collector = None
        if self.client is not None:
            # A cluster shutting down has nothing left to forget.
            with contextlib.suppress(Exception):
                self.client.run(forget_context, self._key)
            self.client.close()
            self.client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None
