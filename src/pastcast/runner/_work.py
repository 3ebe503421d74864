"""One unit of work: a forecast step of one agent and rollout, run where an executor puts it.

``run_step(context, task)`` is all an executor calls. It builds the agent from its spec, the
episode from the dataset and the corpus, runs the agent, grades the forecast and returns the
record: nothing is written there. Records go back to the one writer in the driver, so a worker
that dies mid-step loses only that step, which is run again.

The context (dataset, corpus, configuration, limits) is sent to a worker once; each worker
process keeps what it builds from it (environments, an opened corpus, provider gates) per run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pastcast.agents import agent_info, build_agent
from pastcast.corpus import CorpusBackend, EmbeddedIndex
from pastcast.dataset import Dataset
from pastcast.env import BudgetExceeded, ForecastEnv
from pastcast.models import ProviderError, using_gate
from pastcast.records import FailureReason, Forecast, Record, StepSpec, Termination
from pastcast.runlog import AgentSpec, Grading, StepRecord
from pastcast.runner._config import Execution, RunConfig
from pastcast.runner._limits import ProviderGates, task_tally
from pastcast.scoring import score_forecast

__all__ = [
    "CorpusRef",
    "StepOutcome",
    "StepTask",
    "WorkContext",
    "forget_context",
    "grading_of",
    "open_corpus",
    "prepare_context",
    "run_step",
]


class CorpusRef(Record):
    """A corpus by where it is and how it is searched, opened where the work runs."""

    spec: str
    retrieval: str = "bm25"


def open_corpus(ref: CorpusRef) -> CorpusBackend:
    """Open the corpus of ``ref``: an embedded index directory searched with BM25.

    The one place a run opens a corpus by reference (on workers too).
    """
    if ref.retrieval != "bm25":
        raise ValueError(
            f"corpus {ref.spec}: retrieval {ref.retrieval!r} is not available to runs yet "
            "(only bm25)"
        )
    return EmbeddedIndex.open(ref.spec)


@dataclass(frozen=True)
class WorkContext:
    """What every step of a run needs besides the step itself (sent once to each worker)."""

    key: str
    """Identifies the run on workers (its run id, plus a nonce per execution)."""
    dataset: Dataset
    config: RunConfig
    corpus: CorpusRef | CorpusBackend | None
    """A reference is opened where the work runs; a backend object is used as it is."""
    execution: Execution
    run_id: str
    python_runner: Callable[[str], dict[str, Any]] | None = None
    """The python tool's runner (in-process executors only; workers build the sandboxed one)."""


@dataclass(frozen=True)
class StepTask:
    spec: AgentSpec
    step: StepSpec
    rollout: int
    notebook: str | None = None
    """The notebook carried into the step (memory-on chains)."""
    attempt: int = 1


@dataclass(frozen=True)
class StepOutcome:
    record: StepRecord
    retries: int = 0
    """Provider attempts retried during the step."""
    trips: tuple[str, ...] = ()
    """Providers whose circuit breaker opened during the step."""


def grading_of(dataset: Dataset, step: StepSpec) -> Grading:
    event = dataset.event(step.event_id)
    resolution = dataset.resolutions.get(step.event_id)
    if resolution is None:
        raise ValueError(f"dataset {dataset.id}: event {step.event_id!r} has no resolution")
    market = dataset.market_at(step.event_id, step.cutoff)
    return Grading(
        truth=resolution.label,
        labels=event.labels,
        market_probs=dict(market.probs) if market else None,
        resolved_at=resolution.resolved_at,
    )


class _Worker:
    """What one process builds from a context: environments and provider gates."""

    def __init__(self, context: WorkContext) -> None:
        self.context = context
        corpus = context.corpus
        backend = open_corpus(corpus) if isinstance(corpus, CorpusRef) else corpus
        config = context.config
        self.env = ForecastEnv(context.dataset, backend, config.env, context.python_runner)
        self.no_tools_env = ForecastEnv(
            context.dataset, None, config.env.model_copy(update={"python_tool": False})
        )
        self.gates = ProviderGates(context.execution)

    def run(self, task: StepTask) -> StepOutcome:
        with task_tally() as tally, using_gate(self.gates):
            record = self._record(task)
        return StepOutcome(record, tally.retries, tuple(tally.trips))

    def _record(self, task: StepTask) -> StepRecord:
        spec, step = task.spec, task.step
        dataset, config = self.context.dataset, self.context.config
        info = agent_info(spec)
        no_tools = spec.setting == "no_tools"
        env = self.no_tools_env if no_tools else self.env
        env_config = config.env.model_copy(
            update={
                "market_access": info.market_access and not no_tools,
                "python_tool": config.env.python_tool and not no_tools,
            }
        )
        notebook = task.notebook if spec.setting == "memory_on" else None
        episode = env.reset(step, notebook_in=notebook, config=env_config, rollout=task.rollout)
        termination: Termination = "forecast"
        error: str | None = None
        try:
            forecast = build_agent(spec).forecast(episode)
        except BudgetExceeded as exc:
            termination = "tool_budget" if exc.kind == "tool" else "model_budget"
            forecast = Forecast(usable=False, failure_reason="budget_exhausted", raw_text=str(exc))
        except Exception as exc:  # an agent bug or a provider failure must not stop the run
            termination, error = "error", f"{type(exc).__name__}: {exc}"
            reason: FailureReason = "agent_error"
            if isinstance(exc, ProviderError) and exc.failure_reason is not None:
                reason = exc.failure_reason  # retryable later: it says nothing about the agent
            forecast = Forecast(usable=False, failure_reason=reason, raw_text=error)
        grading = grading_of(dataset, step)
        return StepRecord(
            run_id=self.context.run_id,
            agent=spec.name,
            role=info.role,
            setting=spec.setting,
            event_id=step.event_id,
            step_index=step.step_index,
            cutoff=step.cutoff,
            rollout=task.rollout,
            split=dataset.splits.get(step.event_id, ""),
            category=dataset.event(step.event_id).category,
            attempt=task.attempt,
            forecast=forecast,
            episode=episode.record(termination, error),
            grading=grading,
            scores=score_forecast(forecast, grading, fallback=config.fallback),
        )


_WORKERS: dict[str, _Worker] = {}
_WORKERS_LOCK = threading.Lock()


def _worker(context: WorkContext) -> _Worker:
    with _WORKERS_LOCK:
        found = _WORKERS.get(context.key)
        if found is None:
            found = _WORKERS[context.key] = _Worker(context)
        return found


def prepare_context(context: WorkContext) -> Callable[[], tuple[str, ...]]:
    """Build this process's share of a run now; returns what tells which providers are paused."""
    return _worker(context).gates.paused


def run_step(context: WorkContext, task: StepTask) -> StepOutcome:
    """Run one step (the function executors call, in any process)."""
    return _worker(context).run(task)


def forget_context(key: str) -> None:
    """Drop what this process built for a run (at its end)."""
    with _WORKERS_LOCK:
        worker = _WORKERS.pop(key, None)
    close = getattr(worker.env.backend, "close", None) if worker is not None else None
    if worker is not None and isinstance(worker.context.corpus, CorpusRef) and callable(close):
        close()
