"""Run agents over a dataset's forecast steps, writing one run-log record per step.

Steps of one (agent, event, rollout) form a chain run in order (memory-on agents carry their
notebook along it); chains run in parallel threads. A rerun on the same log skips every step
already recorded, and resumes a chain from the notebook of its last recorded step; a rerun whose
definition differs (dataset, configuration, agents, prompts) is refused, so the log's header
describes every record under it.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from pastcast.agents import Agent, agent_info, build_agent, prompts_for
from pastcast.corpus import CorpusBackend, corpus_identity
from pastcast.dataset import Dataset
from pastcast.env import BudgetExceeded, EnvConfig, ForecastEnv
from pastcast.records import AgentRole, CorpusIdentity, Forecast, StepKey, StepSpec, Termination
from pastcast.runlog import (
    AgentSpec,
    Grading,
    RunHeader,
    RunLogWriter,
    StepRecord,
    read_run_log,
)
from pastcast.runner._config import RunConfig
from pastcast.runner._version import code_version
from pastcast.scoring import score_forecast

__all__ = ["RunResult", "run_benchmark"]


@dataclass(frozen=True)
class RunResult:
    path: Path
    run_id: str
    written: int
    skipped: int
    failures: int


@dataclass(frozen=True)
class _Chain:
    spec: AgentSpec
    event_id: str
    rollout: int
    steps: tuple[StepSpec, ...]


def _chains(dataset: Dataset, config: RunConfig) -> list[_Chain]:
    event_ids = list(dataset.event_ids_with_steps())
    if config.split is not None:
        event_ids = [e for e in event_ids if dataset.splits.get(e) == config.split]
    if config.max_events is not None:
        event_ids = event_ids[: config.max_events]
    out: list[_Chain] = []
    for spec in config.agents:
        for event_id in event_ids:
            steps = dataset.steps_of(event_id)
            for rollout in range(config.rollouts):
                out.append(_Chain(spec, event_id, rollout, steps))
    return out


class NothingToRun(ValueError):
    """The dataset and the configuration leave no forecast step: refused before a log is
    written, so an empty selection never passes for a finished run."""


def _nothing_to_run(dataset: Dataset, config: RunConfig) -> NothingToRun:
    if config.split is not None:
        known = sorted({dataset.splits.get(e) or "" for e in dataset.event_ids_with_steps()} - {""})
        return NothingToRun(
            f"--split {config.split!r}: no event of dataset {dataset.id} with forecast steps is "
            f"in this split (splits: {', '.join(known) or 'none'})"
        )
    return NothingToRun(f"dataset {dataset.id}: no event has forecast steps")


def _grading(dataset: Dataset, step: StepSpec) -> Grading:
    event = dataset.event(step.event_id)
    resolution = dataset.resolutions.get(step.event_id)
    if resolution is None:
        raise ValueError(f"dataset {dataset.id}: event {step.event_id!r} has no resolution")
    market = dataset.market_at(step.event_id, step.cutoff)
    return Grading(
        truth=resolution.label,
        labels=event.labels,
        market_probs=dict(market.probs) if market else None,
    )


class _Runner:
    def __init__(
        self,
        dataset: Dataset,
        backend: CorpusBackend | None,
        config: RunConfig,
        writer: RunLogWriter,
        notebooks: dict[StepKey, str | None],
        python_runner: Callable[[str], dict[str, Any]] | None,
    ) -> None:
        self.dataset = dataset
        self.config = config
        self.writer = writer
        self.notebooks = notebooks
        self.lock = threading.Lock()
        self.written = 0
        self.skipped = 0
        self.failures = 0
        self.env = ForecastEnv(dataset, backend, config.env, python_runner)
        self.no_tools_env = ForecastEnv(
            dataset, None, config.env.model_copy(update={"python_tool": False})
        )

    def run_chain(self, chain: _Chain, advance: Callable[[], None]) -> None:
        info = agent_info(chain.spec)
        env = self.no_tools_env if chain.spec.setting == "no_tools" else self.env
        no_tools = chain.spec.setting == "no_tools"
        env_config = self.config.env.model_copy(
            update={
                "market_access": info.market_access and not no_tools,
                "python_tool": self.config.env.python_tool and not no_tools,
            }
        )
        agent: Agent | None = None
        notebook: str | None = None
        for step in chain.steps:
            key = (
                chain.spec.name,
                chain.spec.setting,
                chain.event_id,
                step.step_index,
                chain.rollout,
            )
            if key in self.writer.done:
                notebook = self.notebooks.get(key)
                with self.lock:
                    self.skipped += 1
                advance()
                continue
            if agent is None:
                agent = build_agent(chain.spec)
            carried = notebook if chain.spec.setting == "memory_on" else None
            record = self._run_step(agent, env, env_config, chain, step, carried, info.role)
            notebook = record.episode.notebook_out
            with self.lock:
                self.writer.write(record)
                self.written += 1
                self.failures += int(not record.forecast.usable)
            advance()

    def _run_step(
        self,
        agent: Agent,
        env: ForecastEnv,
        env_config: EnvConfig,
        chain: _Chain,
        step: StepSpec,
        notebook: str | None,
        role: AgentRole,
    ) -> StepRecord:
        episode = env.reset(step, notebook_in=notebook, config=env_config, rollout=chain.rollout)
        termination: Termination = "forecast"
        error: str | None = None
        try:
            forecast = agent.forecast(episode)
        except BudgetExceeded as exc:
            termination = "tool_budget" if exc.kind == "tool" else "model_budget"
            forecast = Forecast(usable=False, failure_reason="budget_exhausted", raw_text=str(exc))
        except Exception as exc:  # an agent bug must not stop the run; it is recorded
            termination, error = "error", f"{type(exc).__name__}: {exc}"
            forecast = Forecast(usable=False, failure_reason="agent_error", raw_text=error)
        grading = _grading(self.dataset, step)
        return StepRecord(
            run_id=self.writer.header.run_id,
            agent=chain.spec.name,
            role=role,
            setting=chain.spec.setting,
            event_id=step.event_id,
            step_index=step.step_index,
            cutoff=step.cutoff,
            rollout=chain.rollout,
            split=self.dataset.splits.get(step.event_id, ""),
            category=self.dataset.event(step.event_id).category,
            forecast=forecast,
            episode=episode.record(termination, error),
            grading=grading,
            scores=score_forecast(forecast, grading, fallback=self.config.fallback),
        )


@contextmanager
def _progress(enabled: bool, total: int) -> Iterator[Callable[[], None]]:
    if not enabled:
        yield lambda: None
        return
    columns = (
        TextColumn("[bold]forecast steps"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    # stderr: stdout carries the caller's result (a summary line, or JSON)
    with Progress(*columns, transient=False, console=Console(stderr=True)) as progress:
        task = progress.add_task("steps", total=total)
        lock = threading.Lock()

        def advance() -> None:
            with lock:
                progress.advance(task)

        yield advance


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
) -> RunResult:
    """Run every agent of ``config`` on the dataset's steps and write the run log to ``out``.

    ``out`` is the step file (``run.jsonl``); the header is written beside it
    (``pastcast.runlog.header_path``). Re-running with the same ``out`` and the same definition
    resumes: recorded steps are not redone; a different definition (the corpus included) raises
    ``RunLogError`` naming what differs. The prompt files the agents use are recorded in the
    header unless ``prompts`` is given; so is the corpus, ``corpus`` or else the backend's own
    identity (``pastcast.corpus.corpus_identity``).
    """
    path = Path(out)
    notebooks: dict[StepKey, str | None] = {}
    if path.exists() and path.stat().st_size > 0:
        for rec in read_run_log(path).steps:
            notebooks[rec.key] = rec.episode.notebook_out
    header = RunHeader(
        run_id=uuid.uuid4().hex[:12],
        created_at=datetime.now(UTC),
        dataset_id=dataset.id,
        config=config.model_dump(mode="json"),
        agents=config.agents,
        prompts=prompts if prompts is not None else prompts_for(config.agents),
        code_version=code_version(),
        corpus=corpus if corpus is not None else corpus_identity(backend),
    )
    chains = _chains(dataset, config)
    total = sum(len(c.steps) for c in chains)
    if total == 0:
        raise _nothing_to_run(dataset, config)
    with RunLogWriter(path, header) as writer:
        runner = _Runner(dataset, backend, config, writer, notebooks, python_runner)
        with _progress(progress, total) as advance:
            if config.workers == 1:
                for chain in chains:
                    runner.run_chain(chain, advance)
            else:
                with ThreadPoolExecutor(config.workers) as pool:
                    for fut in [pool.submit(runner.run_chain, c, advance) for c in chains]:
                        fut.result()
        return RunResult(
            path, writer.header.run_id, runner.written, runner.skipped, runner.failures
        )
