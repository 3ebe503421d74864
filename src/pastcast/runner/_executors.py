"""Executors run steps somewhere and hand their outcomes back to the driver, which writes them.

Registered by name in ``executors`` (entry point group ``pastcast.executors``): ``local``, a
bounded pool of threads (why threads, not asyncio: docs/runs.md, "Concurrency"), and ``dask``.
"""

from __future__ import annotations

import queue
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol, TypeVar

from pastcast.registry import Registry
from pastcast.runner._work import (
    StepOutcome,
    StepTask,
    WorkContext,
    forget_context,
    prepare_context,
    run_step,
)

Done = Callable[[StepTask, StepOutcome | BaseException], None]
"""Called once per submitted task, from any thread, with its outcome or the exception that
kept it from having one."""


class Executor(Protocol):
    """Where steps run. ``start`` gets the run's context before any ``submit``; ``close`` ends
    the run's use of the executor (workers forget the context)."""

    def start(self, context: WorkContext) -> None: ...

    def submit(self, task: StepTask, done: Done) -> None: ...

    def close(self) -> None: ...


T = TypeVar("T")


def drain(items: queue.Queue[T], timeout: float | None = None) -> list[T]:
    """The next item (waited for up to ``timeout``: none then) and every one already queued,
    so what came back together is handled together."""
    try:
        batch = [items.get(timeout=timeout)]
    except queue.Empty:
        return []
    while True:
        try:
            batch.append(items.get_nowait())
        except queue.Empty:
            return batch


executors: Registry[Executor] = Registry("executor")
# A Dask cluster's executor, by reference: its module loads with the ``scale`` extra's use.
executors.add("dask", "pastcast.runner._dask:DaskExecutor")


@executors.register("local")
class LocalExecutor:
    """Threads of this process (the default): as many as the run's workers unless given."""

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads
        self._pool: ThreadPoolExecutor | None = None
        self._context: WorkContext | None = None
        self.paused: Callable[[], tuple[str, ...]] = lambda: ()
        """Providers paused by their circuit breaker now."""

    def start(self, context: WorkContext) -> None:
        self._context = context
        # Built now, so a corpus that cannot open or a missing sandbox fails before any step.
        self.paused = prepare_context(context)
        size = self.threads or context.config.workers
        self._pool = ThreadPoolExecutor(size, thread_name_prefix="pastcast-step")

    def submit(self, task: StepTask, done: Done) -> None:
        if self._pool is None or self._context is None:
            raise RuntimeError("executor not started")
        future = self._pool.submit(run_step, self._context, task)
        future.add_done_callback(lambda f: done(task, f.exception() or f.result()))

    def close(self) -> None:
        if self._pool is not None:
            # Only an interrupted run has steps left here (the driver waits for every step it
            # submitted otherwise): those not started are dropped, those running are not waited
            # for (nothing writes them now), so the run's models stop at once after it.
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
        if self._context is not None:
            forget_context(self._context.key)
            self._context = None
