"""Run agents over a dataset's forecast steps, writing one run-log record per step.

The driver keeps up to ``config.workers`` steps in flight on an executor and appends each record
as it comes back through the one writer. Steps of a memory-on chain run in order (each carries
the notebook of the one before), and a provider failure ends the chain for this execution (the
later steps would build on a hole); every other step runs in parallel. Resume and crash safety:
docs/runs.md, "Crash safety at scale".
"""

from __future__ import annotations

import gc
import queue
import subprocess
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pastcast.agents import agent_info, prompts_for
from pastcast.corpus import CorpusBackend, corpus_identity
from pastcast.dataset import Dataset
from pastcast.errors import FieldError, within
from pastcast.models import knowledge_cutoff
from pastcast.progress import ProgressReporter
from pastcast.records import RETRYABLE_FAILURES, CorpusIdentity, Notebook, StepKey, StepSpec
from pastcast.runlog import AgentSpec, RunHeader, RunLogWriter
from pastcast.runner._accounting import Accounting, RunStats
from pastcast.runner._config import Execution, RunConfig
from pastcast.runner._cutoff_gate import CutoffGate
from pastcast.runner._executors import Executor, drain, executors
from pastcast.runner._work import CorpusRef, StepOutcome, StepTask, WorkContext


@dataclass(frozen=True)
class RunResult:
    path: Path
    run_id: str
    written: int
    skipped: int
    failures: int
    retried: int = 0
    """Steps a provider had failed, run again (``retry_failed``)."""
    waiting: int = 0
    """Steps of memory-on chains not run because a provider failed earlier in the chain."""
    left: int = 0
    """Steps the log does not hold yet: the same run again runs them."""
    capped: bool = False
    """The execution stopped at ``Execution.max_steps``."""
    accounting: Accounting = field(default_factory=Accounting)


@dataclass(frozen=True)
class _Chain:
    spec: AgentSpec
    event_id: str
    rollout: int
    steps: tuple[StepSpec, ...]

    def key(self, step: StepSpec) -> StepKey:
        return (self.spec.name, self.spec.setting, self.event_id, step.step_index, self.rollout)


def _chains(dataset: Dataset, config: RunConfig) -> list[_Chain]:
    by_event: dict[str, list[StepSpec]] = defaultdict(list)
    for s in dataset.steps:
        by_event[s.event_id].append(s)
    event_ids = list(dataset.event_ids_with_steps())
    if config.split is not None:
        event_ids = [e for e in event_ids if dataset.splits.get(e) == config.split]
    if config.max_events is not None:
        event_ids = event_ids[: config.max_events]
    steps = {e: tuple(sorted(by_event[e], key=lambda s: s.step_index)) for e in event_ids}
    return [
        _Chain(spec, event_id, rollout, steps[event_id])
        for spec in config.agents
        for event_id in event_ids
        for rollout in range(config.rollouts)
    ]


def knowledge_cutoffs_of(
    agents: tuple[AgentSpec, ...], known: Mapping[str, date] | None = None
) -> dict[str, date | None]:
    """Knowledge cutoff of each model the agents name (``known`` first, then the registry)."""
    models = dict.fromkeys(m for s in agents if isinstance(m := s.args.get("model"), str))
    return {m: (known or {}).get(m) or knowledge_cutoff(m) for m in models}


_HELD_MAX = 1024
_SPARE = 8
"""The executor holds one step in eight more than the run's workers: a thread that finishes a
step takes the next at once, not after the driver has written what came back."""
_QUIET_S = 0.01
"""Records that came back are written once no step has come back for this long ..."""
_HOLD_S = 1.0
"""... or once the first of them has waited this long."""


@dataclass
class _Driver:
    """Feeds an executor with ready steps and writes what comes back (the one writer)."""

    chains: list[_Chain]
    writer: RunLogWriter
    executor: Executor
    limit: int
    stats: RunStats
    max_steps: int | None
    submitted: int = 0
    handed: int = 0
    """Steps with the executor, running or held (``limit`` of them run at most)."""
    waiting: int = 0
    retried: int = 0

    def __post_init__(self) -> None:
        self._chain = {(c.spec.name, c.spec.setting, c.event_id, c.rollout): c for c in self.chains}
        self._fresh = self._initial(self.chains)
        self._next: deque[StepTask] = deque()  # continuations of memory-on chains go first
        # Isolated steps at another cutoff than those in flight wait here (docs/isolation.md).
        factories = {c.spec.factory: c.spec for c in self.chains}  # one look-up a factory
        self.gate = CutoffGate({f: agent_info(spec).isolated for f, spec in factories.items()})
        self._held: list[StepTask] = []
        self._done: queue.Queue[tuple[StepTask, StepOutcome | BaseException]] = queue.Queue()
        self._error: BaseException | None = None

    def _task(self, chain: _Chain, step: StepSpec, notebook: Notebook | None) -> StepTask:
        attempt = self.writer.attempts.get(chain.key(step), 0) + 1
        self.retried += attempt > 1
        return StepTask(chain.spec, step, chain.rollout, notebook, attempt)

    def _chain_from(self, chain: _Chain, start: int, notebook: Notebook | None) -> StepTask | None:
        """A memory-on chain's first step from ``start`` not recorded, with the last notebook."""
        for step in chain.steps[start:]:
            key = chain.key(step)
            if key not in self.writer.done:
                return self._task(chain, step, notebook)
            notebook = self.writer.notebooks.get(key)
        return None

    def _initial(self, chains: list[_Chain]) -> Iterator[StepTask]:
        for chain in chains:
            if chain.spec.setting != "memory_on":
                new = (s for s in chain.steps if chain.key(s) not in self.writer.done)
                yield from (self._task(chain, step, None) for step in new)
            elif (task := self._chain_from(chain, 0, None)) is not None:
                yield task

    def _admitted(self) -> StepTask | None:
        """The next step the cutoff gate admits; those it holds back wait (a bounded number)."""
        for i, task in enumerate(self._held):
            if self.gate.admits(task):
                return self._held.pop(i)
        while len(self._held) < _HELD_MAX:
            fresh = self._next.popleft() if self._next else next(self._fresh, None)
            if fresh is None or self.gate.admits(fresh):
                return fresh
            self._held.append(fresh)
        return None

    @property
    def capped(self) -> bool:
        return self.max_steps is not None and self.submitted >= self.max_steps

    def _fill(self) -> bool:
        """Hand out ready steps up to the limit; whether every ready step is handed out."""
        most = self.limit + self.limit // _SPARE
        while self._error is None and self.handed < most and not self.capped:
            task = self._admitted()
            if task is None:
                break
            self.gate.started(task)
            self.executor.submit(task, lambda t, o: self._done.put((t, o)))
            self.submitted += 1
            self.handed += 1
        self.stats.running = min(self.handed, self.limit)
        return self.handed < most

    def _followed(self, task: StepTask, outcome: StepOutcome) -> None:
        spec = task.spec
        if spec.setting != "memory_on":
            return
        chain = self._chain[(spec.name, spec.setting, task.step.event_id, task.rollout)]
        position = chain.steps.index(task.step)
        if outcome.record.forecast.failure_reason in RETRYABLE_FAILURES:
            later = chain.steps[position + 1 :]
            self.waiting += sum(chain.key(s) not in self.writer.done for s in later)
            return
        nxt = self._chain_from(chain, position + 1, outcome.record.episode.notebook_out)
        if nxt is not None:
            self._next.append(nxt)

    def run(self, refresh: Callable[[int], None]) -> None:
        self._fill()
        back: list[StepOutcome] = []
        held_since = 0.0
        try:
            while self.handed or back:
                wait = _QUIET_S if back else None
                came = drain(self._done, timeout=wait) if self.handed else []
                for task, outcome in came:
                    self.gate.finished(task)
                    self.handed -= 1
                    if isinstance(outcome, BaseException):
                        # Stop feeding; what is in flight still lands. Nothing of this step was
                        # written, so a resume runs it again.
                        self._error = self._error or outcome
                        continue
                    held_since = held_since if back else time.monotonic()
                    back.append(outcome)
                    self._followed(task, outcome)
                # The next steps go out first, so their calls run while records wait.
                dry = self._fill()
                if back and (
                    dry
                    or not came
                    or len(back) >= self.limit
                    or time.monotonic() - held_since >= _HOLD_S
                ):
                    # Written once no step waits to be handed out or replies stop coming (or a
                    # wave's worth waits, or a second passed): under 256 threads, writing as
                    # they came held back every request behind it.
                    held, back = back, []  # not written twice if the write fails
                    self._write(held, refresh)
        except BaseException:
            self._write(back, refresh)  # an interrupted run keeps every step that finished
            raise
        if self._error is not None:
            raise self._error

    def _write(self, back: list[StepOutcome], refresh: Callable[[int], None]) -> None:
        """The records of steps that came back, with one fsync for all of them."""
        if not back:
            return
        for outcome in back:
            self.writer.write(outcome.record, sync=False)
            self.stats.add(outcome.record, outcome.retries, outcome.trips)
        self.writer.sync()
        refresh(len(back))


@contextmanager
def _steps_gc() -> Iterator[None]:
    """While steps run, the cyclic garbage collector leaves out what existed before them
    (modules, schemas, the dataset) and runs every 10,000 allocations rather than 700. Each
    collection holds the GIL while it walks every episode in flight: at 256 in flight that
    stalled every step for 0.6 s of a 10 s run (docs/measurements/runner.md)."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(threshold[0], 10_000), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


@cache
def code_version() -> str:
    """The code version recorded in run logs: the package version, plus the git commit when
    available."""
    try:
        pkg = version("pastcast")
    except PackageNotFoundError:
        pkg = "0+unknown"
    here = Path(__file__).resolve().parent

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(here), *args], capture_output=True, text=True, timeout=5, check=True
        )
        return done.stdout.strip()

    try:
        commit = git("rev-parse", "--short=12", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
        return f"{pkg}+g{commit}{'.dirty' if dirty else ''}"
    except (OSError, subprocess.SubprocessError):
        return pkg


def new_run_header(
    dataset: Dataset,
    config: RunConfig,
    backend: CorpusBackend | None,
    *,
    prompts: dict[str, str] | None = None,
    corpus: CorpusIdentity | None = None,
    knowledge_cutoffs: Mapping[str, date] | None = None,
    plan: Mapping[str, Any] | None = None,
) -> RunHeader:
    """A new run's header (every run log pastcast writes starts with one): the corpus is
    ``corpus``, else the backend's own identity; ``knowledge_cutoffs`` before the registry's."""
    return RunHeader(
        run_id=uuid.uuid4().hex[:12],
        created_at=datetime.now(UTC),
        dataset_id=dataset.id,
        config=config.model_dump(mode="json"),
        agents=config.agents,
        prompts=prompts if prompts is not None else prompts_for(config.agents),
        code_version=code_version(),
        corpus=corpus if corpus is not None else corpus_identity(backend),
        knowledge_cutoffs=knowledge_cutoffs_of(config.agents, knowledge_cutoffs),
        plan=None if plan is None else dict(plan),
    )


def run_benchmark(
    dataset: Dataset,
    backend: CorpusBackend | None,
    config: RunConfig,
    out: str | Path,
    *,
    prompts: dict[str, str] | None = None,
    progress: bool = True,
    python_runner: Callable[[str], dict[str, Any]] | None = None,
    corpus: CorpusIdentity | None = None,
    execution: Execution | None = None,
    executor: Executor | None = None,
    corpus_ref: CorpusRef | None = None,
    retry_failed: bool = False,
    knowledge_cutoffs: Mapping[str, date] | None = None,
    plan: Mapping[str, Any] | None = None,
) -> RunResult:
    """Run every agent of ``config`` on the dataset's steps and write the run log to ``out``
    (the step file; the header beside it, ``new_run_header``'s arguments recorded in it).

    The same ``out`` and definition resumes (``retry_failed``: provider failures run again); a
    different definition, a log another process writes, or a selection that leaves no step
    raises ``FieldError``. ``executor`` overrides ``execution.executor``; ``corpus_ref`` names the
    corpus for executors in other processes (``backend`` is used in this one).
    """
    path = Path(out)
    execution = execution or Execution()
    header = new_run_header(
        dataset,
        config,
        backend,
        prompts=prompts,
        corpus=corpus,
        knowledge_cutoffs=knowledge_cutoffs,
        plan=plan,
    )
    chains = _chains(dataset, config)
    total = sum(len(c.steps) for c in chains)
    if total == 0 and config.split is not None:  # refused before a log is written
        known = sorted({dataset.splits.get(e) or "" for e in dataset.event_ids_with_steps()} - {""})
        raise FieldError(
            "split",
            f"{config.split!r}: no event of dataset {dataset.id} with forecast steps is in this "
            f"split (splits: {', '.join(known) or 'none'})",
        )
    if total == 0:
        raise FieldError("dataset", f"{dataset.id}: no event has forecast steps")
    with within("out"):  # a log in use, or of another run
        writer = RunLogWriter(path, header, retry_failed=retry_failed)
    with writer:
        skipped = sum(c.key(s) in writer.done for c in chains for s in c.steps)
        stats = RunStats(skipped)
        run_id = writer.header.run_id
        context = WorkContext(
            key=f"{run_id}-{uuid.uuid4().hex[:8]}",
            dataset=dataset,
            config=config,
            corpus=corpus_ref if corpus_ref is not None else backend,
            execution=execution,
            run_id=run_id,
            python_runner=python_runner,
        )
        if executor is None:
            executor = executors.build(execution.executor, **execution.executor_args)
        driver = _Driver(chains, writer, executor, config.workers, stats, execution.max_steps)
        try:
            executor.start(context)
            paused = getattr(executor, "paused", None)
            if callable(paused):
                stats.paused_now = paused
            # On stderr (stdout carries the caller's result), counting only the steps this
            # execution runs, so resumed ones do not flatter the ETA.
            todo = total - skipped
            cap = todo if execution.max_steps is None else min(todo, execution.max_steps)
            with ProgressReporter("steps", enabled=progress, transient=False) as bar, _steps_gc():
                task = bar.add_task("forecast steps", total=cap, status=stats.line())
                driver.run(lambda n: bar.update(task, advance=n, status=stats.line()))
        finally:
            executor.close()
        left = sum(c.key(s) not in writer.done for c in chains for s in c.steps)
        return RunResult(
            path,
            run_id,
            stats.written,
            skipped,
            stats.unusable,
            retried=driver.retried,
            waiting=driver.waiting,
            left=left,
            capped=driver.capped and left > 0,
            accounting=stats.accounting(),
        )
