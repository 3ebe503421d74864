"""The steps an export reads: run logs, the split guard, and the datasets behind them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pastcast.dataset import Dataset
from pastcast.runlog import RunLog, StepRecord, read_run_log
from pastcast.train._guard import ExportError, SplitPolicy
from pastcast.train._manifest import DatasetRef, check_splits, dataset_refs

__all__ = ["Selected", "select_steps"]


@dataclass(frozen=True)
class Selected:
    steps: list[tuple[RunLog, StepRecord]]
    """The admitted steps with their log, in log order."""
    left_out: dict[str, int]
    datasets: tuple[DatasetRef, ...]


def _logs(run_logs: Sequence[str | Path | RunLog]) -> list[RunLog]:
    logs = [log if isinstance(log, RunLog) else read_run_log(log) for log in run_logs]
    if not logs:
        raise ExportError("no run logs given")
    return logs


def select_steps(
    run_logs: Sequence[str | Path | RunLog],
    policy: SplitPolicy | None,
    datasets: Sequence[Dataset] = (),
) -> Selected:
    """The steps of ``run_logs`` that ``policy`` admits (all of them without a policy). A
    recorded split is checked against the dataset where it is at hand (``datasets``, or the
    embedded world rebuilt from its id). Raises ``RunLogError`` for an unreadable log and
    ``ExportError`` when no step is left."""
    logs = _logs(run_logs)
    pairs = [(log, step) for log in logs for step in log.steps]
    where = ", ".join(str(log.path) for log in logs)
    if not pairs:
        raise ExportError(f"{where}: no forecast steps")
    refs, found = dataset_refs((log.header.dataset_id for log in logs), datasets)
    check_splits(pairs, found)
    if policy is None:
        return Selected(pairs, {}, refs)
    kept, left_out = policy.select(pairs, lambda p: p[1].split, where)
    return Selected(kept, left_out, refs)
