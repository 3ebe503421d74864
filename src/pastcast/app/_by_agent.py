"""Run logs split by agent: one group per run, agent and setting, for exports that write one
file per agent (Inspect's eval logs)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pastcast.app._fields import as_field
from pastcast.app._reading import RunsRead, read_runs
from pastcast.dataset import Dataset
from pastcast.owned import check_replaceable
from pastcast.runlog import AgentSpec, StepColumns, StepRecord

__all__ = ["AgentRun", "RunsByAgent", "runs_by_agent"]


@dataclass(frozen=True)
class AgentRun:
    """The forecasts of one agent and setting in one run, in log order."""

    log: StepColumns
    spec: AgentSpec
    rows: tuple[int, ...]
    """The group's rows of the log's step columns."""

    def steps(self) -> Iterator[StepRecord]:
        """The group's full records, read by offset one at a time."""
        return self.log.stream(self.rows)


@dataclass(frozen=True)
class RunsByAgent:
    read: RunsRead
    groups: tuple[AgentRun, ...]
    out: Path
    """The folder to write, checked: absent, empty, or one pastcast made as ``kind``."""


def _spec(log: StepColumns, agent: str, setting: str, role: str) -> AgentSpec:
    for spec in log.header.agents:
        if spec.name == agent and spec.setting == setting:
            return spec
    # a log written before headers named every agent: the spec its steps imply
    return AgentSpec.model_validate(
        {"name": agent, "factory": agent, "role": role, "setting": setting}
    )


def runs_by_agent(
    run_logs: Sequence[str | Path],
    out: str | Path,
    *,
    kind: str,
    dataset: str | Path | Dataset | None = None,
) -> RunsByAgent:
    """The forecasts of ``run_logs`` (each once, see ``read_runs``) per run, agent and setting,
    and ``out`` checked as a folder of ``kind`` pastcast may write (``FieldError`` naming
    ``out`` otherwise, nothing written)."""
    target = Path(out)
    with as_field("out", FileExistsError):
        check_replaceable(target, kind)
    read = read_runs(run_logs, dataset, columns=("role",))
    groups: list[AgentRun] = []
    for log in read.logs:
        cols = log.table.select(["agent", "setting", "role"]).to_pydict()
        by: dict[tuple[str, str], list[int]] = {}
        roles: dict[tuple[str, str], str] = {}
        for i, (agent, setting, role) in enumerate(
            zip(cols["agent"], cols["setting"], cols["role"], strict=True)
        ):
            by.setdefault((agent, setting), []).append(i)
            roles.setdefault((agent, setting), role)
        for (agent, setting), rows in by.items():
            spec = _spec(log, agent, setting, roles[agent, setting])
            groups.append(AgentRun(log, spec, tuple(rows)))
    return RunsByAgent(read, tuple(groups), target)
