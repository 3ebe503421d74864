"""Run logs loaded for reporting: their steps, the score table with the report's extra columns,
and how many forecasts each group was scheduled to make.

Run logs do not record when an event resolved, so the forecast horizon (``--by horizon``) and
the market's duration (``--by duration``, Hindcast's short / medium / long) need the dataset the
run used; everything else comes from the logs alone, the agent's own evidence label
(``--by evidence``: strong / weak / none from its tally, Hindcast Table 1) and its research
loop's stop reason (``--by stop``) included.
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
    duration_bucket,
    event_kind,
    evidence_label,
    horizon_bucket,
    market_days,
    stop_reason_of,
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
    "duration",
    "evidence",
    "stop",
    "step",
    "rollout",
)
"""Columns a report can group by (``--by``)."""

_BY_DATASET = ("horizon", "duration")

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


def duration_of(dataset: Dataset, event_id: str) -> str:
    """The market's duration bucket (Hindcast: short, medium, long; ``unknown`` when the event
    is not in the dataset)."""
    try:
        event = dataset.event(event_id)
    except KeyError:
        return "unknown"
    resolution = dataset.resolutions.get(event_id)
    resolved = None if resolution is None else resolution.resolved_at
    return duration_bucket(market_days(event.open_time, event.close_time, resolved))


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
        table = with_row_column(table, "evidence", [evidence_label(s) for s in self.steps])
        table = with_row_column(table, "stop", [stop_reason_of(s) for s in self.steps])
        if self.dataset is not None:
            ds = self.dataset
            labels = [horizon_of(ds, s.event_id, s.cutoff) for s in self.steps]
            table = with_row_column(table, "horizon", labels)
            table = with_row_column(
                table, "duration", [duration_of(ds, s.event_id) for s in self.steps]
            )
        return table

    def table(self, by: Sequence[str] = ()) -> ScoreTable:
        """The score table of every step with a "model" column, and a "horizon" column whenever
        the dataset is known (``by`` is checked: horizon needs the dataset)."""
        check_columns(by)
        _check_dataset(by, self.dataset)
        return self._table

    def scheduled(self, by: Sequence[str]) -> dict[tuple[str, ...], int]:
        """Forecasts each group of ``by`` was scheduled to make.

        A run schedules every agent of its header (and any agent it recorded) at every event-step
        for each rollout. The event-steps are those of the events the run recorded: all of their
        steps in the dataset when it is known, otherwise the event-steps any agent recorded (a
        step no agent reached is then not counted).
        """
        check_columns(by)
        _check_dataset(by, self.dataset)
        counts: Counter[tuple[str, ...]] = Counter()
        for log in self.logs:
            for key in _schedule(log, self.dataset):
                counts[tuple(key[c] for c in by)] += 1
        return dict(counts)


def _check_dataset(by: Sequence[str], dataset: Dataset | None) -> None:
    needs = next((c for c in by if c in _BY_DATASET), None)
    if needs is not None and dataset is None:
        raise ValueError(_NEEDS_DATASET.replace("horizon", needs, 1))


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
    # What a step turned out to be (the agent's evidence label, its stop reason) is known only
    # for recorded steps; a step never written is in no such group.
    outcome = {
        (s.agent, s.setting, s.event_id, s.step_index, s.rollout): (
            evidence_label(s),
            stop_reason_of(s),
        )
        for s in log.steps
    }
    configured = log.header.config.get("rollouts")
    rollouts = configured if isinstance(configured, int) and configured > 0 else rollouts_seen
    run_id = log.header.run_id
    for (event_id, step), cutoff in cutoffs.items():
        split, category, kind = attrs[event_id]
        horizon = horizon_of(dataset, event_id, cutoff) if dataset is not None else ""
        duration = duration_of(dataset, event_id) if dataset is not None else ""
        for agent, setting, role in agents:
            for rollout in range(rollouts):
                evidence, stop = outcome.get(
                    (agent, setting, event_id, step, rollout), ("(missing)", "(missing)")
                )
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
                    "duration": duration,
                    "evidence": evidence,
                    "stop": stop,
                    "step": str(step),
                    "rollout": str(rollout),
                }


def load_runs(paths: Sequence[str | Path], dataset: Dataset | None = None) -> RunSet:
    """Read run logs (``read_run_log``: a ``RunLogError`` names the file, line and field)."""
    return RunSet(tuple(read_run_log(p) for p in paths), dataset)
