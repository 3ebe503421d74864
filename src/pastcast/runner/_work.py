"""One unit of work: a forecast step of one agent and rollout, run where an executor puts it.

``run_step(context, task)`` is all an executor calls: it plays and grades the step and returns
the record, writing nothing, so a worker that dies mid-step loses only that step, run again.
Each process keeps what it builds from a run's context (environments, corpus, gates) per run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pastcast.agents import Agent, agent_info, build_agent
from pastcast.corpus import CorpusBackend, open_backend
from pastcast.cutoff import age_days
from pastcast.dataset import Dataset
from pastcast.env import BudgetExceeded, EnvConfig, Episode, ForecastEnv
from pastcast.models import ProviderError, using_gate
from pastcast.probabilities import completed
from pastcast.records import (
    EpisodeRecord,
    FailureReason,
    Forecast,
    Notebook,
    StepSpec,
    Termination,
)
from pastcast.runlog import PENDING_TRUTH, AgentSpec, Grading, StepRecord
from pastcast.runner._config import Execution, PlanCorpus, RunConfig
from pastcast.runner._limits import ProviderGates, task_tally
from pastcast.scoring import score_forecast


class CorpusRef(PlanCorpus):
    """A corpus by where it is and how it is searched, opened where the work runs."""

    spec: str

    def open(self) -> CorpusBackend:
        """The one place a run opens a corpus by reference (on workers too)."""
        options: dict[str, object] = {"embedder": self.embedder} if self.embedder else {}
        if self.nprobe is not None:
            options["nprobe"] = self.nprobe
        return open_backend(self.spec, self.retrieval, **options)


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
    notebook: Notebook | None = None
    """The notebook carried into the step (memory-on chains)."""
    attempt: int = 1


@dataclass(frozen=True)
class StepOutcome:
    record: StepRecord
    retries: int = 0
    """Provider attempts retried during the step."""
    trips: tuple[str, ...] = ()
    """Providers whose circuit breaker opened during the step."""


def grade_step(dataset: Dataset, step: StepSpec) -> Grading:
    """What the grader knows of a step, after its episode: the outcome, the labels, the market
    belief at the cutoff and when the event resolved. Never shown to an agent."""
    event = dataset.event(step.event_id)
    resolution = dataset.resolutions.get(step.event_id)
    market = dataset.market_at(step.event_id, step.cutoff)
    reference: dict[str, Any] = {}
    if market is not None:  # the belief, when it was public and its age at the cutoff
        reference = {
            "market_probs": dict(market.probs),
            "market_at": market.public_at,
            "market_age_days": age_days(market.public_at, step.cutoff),
        }
    if resolution is None and dataset.pending:
        # a live question: nothing is known yet; graded again when it resolves
        return Grading(truth=PENDING_TRUTH, labels=event.labels, **reference)
    if resolution is None:
        raise ValueError(f"dataset {dataset.id}: event {step.event_id!r} has no resolution")
    return Grading(
        truth=resolution.label,
        labels=event.labels,
        resolved_at=resolution.resolved_at,
        **reference,
    )


def agent_env_config(env: EnvConfig, spec: AgentSpec) -> EnvConfig:
    """The environment settings of one agent's steps: market prices only for an agent registered
    with market access, and neither prices nor the python tool under ``no_tools``."""
    no_tools = spec.setting == "no_tools"
    return env.model_copy(
        update={
            "market_access": agent_info(spec).market_access and not no_tools,
            "python_tool": env.python_tool and not no_tools,
        }
    )


def graded_step_record(
    run_id: str,
    spec: AgentSpec,
    dataset: Dataset,
    step: StepSpec,
    forecast: Forecast,
    episode: EpisodeRecord,
    *,
    fallback: Literal["uniform", "worst"],
    rollout: int = 0,
    attempt: int = 1,
) -> StepRecord:
    """The run log's record of one played step: graded after the episode, scored, with the
    step's split and category: every step pastcast plays is logged through it."""
    grading = grade_step(dataset, step)
    return StepRecord(
        run_id=run_id,
        agent=spec.name,
        role=agent_info(spec).role,
        setting=spec.setting,
        event_id=step.event_id,
        step_index=step.step_index,
        cutoff=step.cutoff,
        rollout=rollout,
        split=dataset.splits.get(step.event_id, ""),
        category=dataset.event(step.event_id).category,
        attempt=attempt,
        forecast=forecast,
        episode=episode,
        grading=grading,
        scores=score_forecast(forecast, grading, fallback=fallback),
    )


def play_episode(agent: Agent, episode: Episode) -> tuple[Forecast, EpisodeRecord]:
    """Let ``agent`` forecast in ``episode``: its forecast and the episode's record. A spent
    budget, an agent's exception or a provider failure ends the episode with an unusable
    forecast, recorded (an agent bug must not stop a run; a provider failure is kept retryable:
    it says nothing about the agent)."""
    termination: Termination = "forecast"
    error: str | None = None
    try:
        forecast = agent.forecast(episode)
        labels = episode.question.labels
        if forecast.usable and set(forecast.probs) < set(labels):
            # Completed as a parsed answer is: scored as it stands, it would be renormalised
            # into certainty.
            forecast = forecast.model_copy(update={"probs": completed(forecast.probs, labels)})
    except BudgetExceeded as exc:
        termination = "tool_budget" if exc.kind == "tool" else "model_budget"
        forecast = Forecast(usable=False, failure_reason="budget_exhausted", raw_text=str(exc))
    except Exception as exc:
        termination, error = "error", f"{type(exc).__name__}: {exc}"
        reason: FailureReason = "agent_error"
        if isinstance(exc, ProviderError) and exc.failure_reason is not None:
            reason = exc.failure_reason
        forecast = Forecast(usable=False, failure_reason=reason, raw_text=error)
    return forecast, episode.record(termination, error)


class _Worker:
    """What one process builds from a context: environments and provider gates."""

    def __init__(self, context: WorkContext) -> None:
        self.context = context
        corpus, env = context.corpus, context.config.env
        backend = corpus.open() if isinstance(corpus, CorpusRef) else corpus
        self.env = ForecastEnv(context.dataset, backend, env, context.python_runner)
        no_python = env.model_copy(update={"python_tool": False})
        self.no_tools_env = ForecastEnv(context.dataset, None, no_python)
        self.gates = ProviderGates(context.execution)
        self._env_configs: dict[tuple[str, str], EnvConfig] = {}

    def run(self, task: StepTask) -> StepOutcome:
        spec, step, config = task.spec, task.step, self.context.config
        env = self.no_tools_env if spec.setting == "no_tools" else self.env
        notebook = task.notebook if spec.setting == "memory_on" else None
        key = (spec.factory, spec.setting)  # all that an agent's environment settings vary by
        env_config = self._env_configs.get(key)
        if env_config is None:
            env_config = self._env_configs[key] = agent_env_config(config.env, spec)
        with task_tally() as tally, using_gate(self.gates):
            episode = env.reset(step, notebook_in=notebook, config=env_config, rollout=task.rollout)
            forecast, played = play_episode(build_agent(spec), episode)
            record = graded_step_record(
                self.context.run_id,
                spec,
                self.context.dataset,
                step,
                forecast,
                played,
                fallback=config.fallback,
                rollout=task.rollout,
                attempt=task.attempt,
            )
        return StepOutcome(record, tally.retries, tuple(tally.trips))


_WORKERS: dict[str, _Worker] = {}
_WORKERS_LOCK = threading.Lock()


def _worker(context: WorkContext) -> _Worker:
    if (known := _WORKERS.get(context.key)) is not None:  # read without the lock: every step
        return known
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
    if worker is not None:
        worker.gates.stop()  # a step still running (an interrupted run) calls no provider again
    close = getattr(worker.env.backend, "close", None) if worker is not None else None
    if worker is not None and isinstance(worker.context.corpus, CorpusRef) and callable(close):
        close()
