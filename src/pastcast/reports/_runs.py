"""Run logs loaded for reporting: their steps, the score table with the report's extra columns,
and how many forecasts each group was scheduled to make.

Run logs do not record when an event resolved, so the forecast horizon (``--by horizon``) needs
the dataset the run used; everything else comes from the logs alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path

from pastcast.dataset import Dataset
from pastcast.runlog import RunLog, StepRecord, read_run_log
from pastcast.scoring import (
    ScoreTable,
    event_kind,
    horizon_bucket,
    table_from_records,
    with_row_column,
)

__all__ = ["GROUP_COLUMNS", "NO_MODEL", "RunSet", "agent_models", "horizon_of", "load_runs"]

GROUP_COLUMNS = (
    "agent",
    "model",
    "setting",
    "role",
    "run_id",
    "event",
    "split",
    "category",
    "kind",
    "horizon",
    "step",
    "rollout",
)
"""Columns a report can group by (``--by``)."""

_NEEDS_DATASET = (
    "--by horizon needs the dataset the run used (--dataset): run logs do not record when an "
    "event resolved"
)


NO_MODEL = "-"
"""The "model" of an agent that calls none (a baseline, the heuristic agent)."""


def agent_models(log: RunLog) -> dict[tuple[str, str], str]:
    """The model of each agent and setting of a run: its spec's ``model`` argument."""
    return {(a.name, a.setting): str(a.args.get("model") or NO_MODEL) for a in log.header.agents}


def horizon_of(dataset: Dataset, event_id: str, cutoff: datetime) -> str:
    """The forecast horizon bucket (days from the cutoff to the resolution) of a step."""
    resolution = dataset.resolutions.get(event_id)
    if resolution is None:
        return "unknown"
    days = (resolution.resolved_at - cutoff).total_seconds() / 86400.0
    return horizon_bucket(days)


@dataclass(frozen=True)
class RunSet:
    """One or more run logs reported together, with the dataset they ran on when known."""

    logs: tuple[RunLog, ...]
    dataset: Dataset | None = None

    @cached_property
    def steps(self) -> tuple[StepRecord, ...]:
        return tuple(s for log in self.logs for s in log.steps)

    @cached_property
    def base_table(self) -> ScoreTable:
        return table_from_records(self.steps)

    @cached_property
    def _table(self) -> ScoreTable:
        models = []
        for log in self.logs:
            of = agent_models(log)
            models += [of.get((s.agent, s.setting), NO_MODEL) for s in log.steps]
        table = with_row_column(self.base_table, "model", models)
        if self.dataset is not None:
            ds = self.dataset
            labels = [horizon_of(ds, s.event_id, s.cutoff) for s in self.steps]
            table = with_row_column(table, "horizon", labels)
        return table

    def table(self, by: Sequence[str] = ()) -> ScoreTable:
        """The score table of every step with a "model" column, and a "horizon" column whenever
        the dataset is known (``by`` is checked: horizon needs the dataset)."""
        check_columns(by)
        if "horizon" in by and self.dataset is None:
            raise ValueError(_NEEDS_DATASET)
        return self._table

    def scheduled(self, by: Sequence[str]) -> dict[tuple[str, ...], int]:
        """Forecasts each group of ``by`` was scheduled to make.

        A run schedules every agent of its header (and any agent it recorded) at every event-step
        for each rollout. The event-steps are those of the events the run recorded: all of their
        steps in the dataset when it is known, otherwise the event-steps any agent recorded (a
        step no agent reached is then not counted).
        """
        check_columns(by)
        if "horizon" in by and self.dataset is None:
            raise ValueError(_NEEDS_DATASET)
        counts: Counter[tuple[str, ...]] = Counter()
        for log in self.logs:
            for key in _schedule(log, self.dataset):
                counts[tuple(key[c] for c in by)] += 1
        return dict(counts)


def check_columns(by: Iterable[str]) -> None:
    bad = [c for c in by if c not in GROUP_COLUMNS]
    if bad:
        raise ValueError(f"unknown column {bad[0]!r} (expected some of {', '.join(GROUP_COLUMNS)})")


def _schedule(log: RunLog, dataset: Dataset | None) -> Iterable[dict[str, str]]:
    models = agent_models(log)
    agents = {(a.name, a.setting, a.role) for a in log.header.agents}
    agents |= {(s.agent, s.setting, s.role) for s in log.steps}
    attrs: dict[str, tuple[str, str, str]] = {}
    cutoffs: dict[tuple[str, int], datetime] = {}
    rollouts_seen = 0
    for s in log.steps:
        attrs.setdefault(s.event_id, (s.split, s.category, event_kind(s.grading.labels)))
        cutoffs.setdefault((s.event_id, s.step_index), s.cutoff)
        rollouts_seen = max(rollouts_seen, s.rollout + 1)
    if dataset is not None:  # every step of the events the run took up
        for spec in dataset.steps:
            if spec.event_id in attrs:
                cutoffs.setdefault((spec.event_id, spec.step_index), spec.cutoff)
    configured = log.header.config.get("rollouts")
    rollouts = configured if isinstance(configured, int) and configured > 0 else rollouts_seen
    run_id = log.header.run_id
    for (event_id, step), cutoff in cutoffs.items():
        split, category, kind = attrs[event_id]
        horizon = horizon_of(dataset, event_id, cutoff) if dataset is not None else ""
        for agent, setting, role in agents:
            for rollout in range(rollouts):
                yield {
                    "agent": agent,
                    "model": models.get((agent, setting), NO_MODEL),
                    "setting": setting,
                    "role": role,
                    "run_id": run_id,
                    "event": event_id,
                    "split": split,
                    "category": category,
                    "kind": kind,
                    "horizon": horizon,
                    "step": str(step),
                    "rollout": str(rollout),
                }


def load_runs(paths: Sequence[str | Path], dataset: Dataset | None = None) -> RunSet:
    """Read run logs (``read_run_log``: a ``RunLogError`` names the file, line and field)."""
    return RunSet(tuple(read_run_log(p) for p in paths), dataset)
