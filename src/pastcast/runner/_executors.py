"""Executors run steps somewhere and hand their outcomes back to the driver, which writes them.

Registered by name in ``executors`` (entry point group ``pastcast.executors``): ``local``, a
bounded pool of threads (why threads, not asyncio: docs/runs.md, "Concurrency"), and ``dask``.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
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
_Tasks = queue.SimpleQueue[tuple[StepTask, Done] | None]


class Executor(Protocol):
    """Where steps run. ``start`` gets the run's context before any ``submit``; ``close`` ends
    the run's use of the executor (workers forget the context)."""

    def start(self, context: WorkContext) -> None: ...

    def submit(self, task: StepTask, done: Done) -> None: ...

    def close(self) -> None: ...


T = TypeVar("T")


def drain(items: queue.Queue[T] | queue.SimpleQueue[T], timeout: float | None = None) -> list[T]:
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
        self._tasks: queue.SimpleQueue[tuple[StepTask, Done] | None] = queue.SimpleQueue()
        self._size = 0
        self._context: WorkContext | None = None
        self._failed: BaseException | None = None
        self.paused: Callable[[], tuple[str, ...]] = lambda: ()
        """Providers paused by their circuit breaker now."""

    def start(self, context: WorkContext) -> None:
        self._context = context
        # Built now, so a corpus that cannot open or a missing sandbox fails before any step.
        self.paused = prepare_context(context)
        self._size = self.threads or context.config.workers
        self._tasks = queue.SimpleQueue()  # a thread of an earlier run never takes this one's
        self._failed = None
        self._spawn(0, context, self._tasks)

    def _spawn(self, index: int, context: WorkContext, tasks: _Tasks) -> None:
        if index < self._size:
            name = f"pastcast-step_{index}"
            threading.Thread(target=self._serve, args=(index, context, tasks), name=name).start()

    def _serve(self, index: int, context: WorkContext, tasks: _Tasks) -> None:
        # Each thread starts two more before it takes a step. One after another (a pool's way,
        # on first use), each start waits for the thread before it to be scheduled: 0.04 to
        # 0.4 s for 256 on two busy cores; as a tree they are up in about 30 ms, and a run's
        # first steps go out together (docs/measurements/runner.md).
        try:
            for child in (2 * index + 1, 2 * index + 2):
                self._spawn(child, context, tasks)
        except RuntimeError as exc:  # no more threads: the next submit says so
            self._failed = exc
        while (item := tasks.get()) is not None:
            task, done = item
            try:
                outcome: StepOutcome | BaseException = run_step(context, task)
            except BaseException as exc:  # handed to the driver, as a failed future would be
                outcome = exc
            done(task, outcome)

    def submit(self, task: StepTask, done: Done) -> None:
        if self._context is None:
            raise RuntimeError("executor not started")
        if self._failed is not None:
            raise self._failed
        self._tasks.put((task, done))

    def close(self) -> None:
        if self._context is not None:
            # Only an interrupted run has steps left here (the driver waits for every step it
            # submitted otherwise): those not started are dropped, those running are not waited
            # for (nothing writes them now), so the run's models stop at once after it.
            drain(self._tasks, 0)
            for _ in range(self._size):
                self._tasks.put(None)  # each thread ends after its step
            forget_context(self._context.key)
            self._context = None
