"""Run logs split by agent: one group per run, agent and setting, for exports that write one
file per agent (Inspect's eval logs)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pastcast.app._errors import AppError
from pastcast.app._reading import RunsRead, read_runs
from pastcast.dataset import Dataset
from pastcast.owned import check_replaceable
from pastcast.runlog import AgentSpec, RunLog, StepRecord

__all__ = ["AgentRun", "RunsByAgent", "runs_by_agent"]


@dataclass(frozen=True)
class AgentRun:
    """The forecasts of one agent and setting in one run, in log order."""

    log: RunLog
    spec: AgentSpec
    steps: tuple[StepRecord, ...]


@dataclass(frozen=True)
class RunsByAgent:
    read: RunsRead
    groups: tuple[AgentRun, ...]
    out: Path
    """The folder to write, checked: absent, empty, or one pastcast made as ``kind``."""


def _spec(log: RunLog, step: StepRecord) -> AgentSpec:
    for spec in log.header.agents:
        if spec.name == step.agent and spec.setting == step.setting:
            return spec
    # a log written before headers named every agent: the spec its steps imply
    return AgentSpec(name=step.agent, factory=step.agent, role=step.role, setting=step.setting)


def runs_by_agent(
    run_logs: Sequence[str | Path],
    out: str | Path,
    *,
    kind: str,
    dataset: str | Path | Dataset | None = None,
) -> RunsByAgent:
    """The forecasts of ``run_logs`` (each once, see ``read_runs``) per run, agent and setting,
    and ``out`` checked as a folder of ``kind`` pastcast may write (``AppError`` naming
    ``out`` otherwise, nothing written)."""
    target = Path(out)
    try:
        check_replaceable(target, kind)
    except FileExistsError as exc:
        raise AppError("out", str(exc)) from None
    read = read_runs(run_logs, dataset)
    groups: list[AgentRun] = []
    for log in read.logs:
        by: dict[tuple[str, str], list[StepRecord]] = {}
        for step in log.steps:
            by.setdefault((step.agent, step.setting), []).append(step)
        for steps in by.values():
            groups.append(AgentRun(log, _spec(log, steps[0]), tuple(steps)))
    return RunsByAgent(read, tuple(groups), target)
