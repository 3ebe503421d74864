"""The steps an export reads: run logs (their step columns, with the records streamed by
offset), the split guard, and the datasets behind them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from pastcast.dataset import Dataset, content_hash
from pastcast.errors import FieldError
from pastcast.records import Record
from pastcast.reports import Runs
from pastcast.runlog import StepColumns, StepRecord, read_step_columns
from pastcast.train._guard import SplitPolicy, split_name
from pastcast.world import world_named_by

SOURCE_COLUMNS = ("run_id", "event_id", "step_index", "split", "cutoff")
"""The step columns the guard and the manifest read of a step (``StepRow``)."""
_READ = (*SOURCE_COLUMNS, "offset", "length")
"""What is read of a log given by its path: those, and where each full record is."""
_KEYS = (*SOURCE_COLUMNS, "agent", "role", "setting", "rollout", "category")


def step_keys(step: StepRecord, record: type[Record]) -> dict[str, Any]:
    """The fields naming ``step`` (run, agent, setting, event, step, rollout, ...) that an
    export's ``record`` keeps."""
    return {k: getattr(step, k) for k in _KEYS if k in record.model_fields}


@dataclass(frozen=True, slots=True)
class StepRow:
    """What the guard and the manifest read of one step, from its columns."""

    run_id: str
    event_id: str
    step_index: int
    split: str
    cutoff: datetime


class DatasetRef(Record):
    dataset_id: str
    content_hash: str | None
    """sha256 of the dataset's records (``pastcast.dataset.content_hash``); None when the
    dataset was not at hand (pass it to the export)."""


def _world(dataset_id: str) -> Dataset | None:
    """The embedded world a dataset id names, rebuilt from its seed (None for anything else,
    including worlds built with a changed configuration)."""
    world = world_named_by(dataset_id)
    return world.dataset if world is not None and world.dataset.id == dataset_id else None


def dataset_refs(
    dataset_ids: Iterable[str], given: Sequence[Dataset] = ()
) -> tuple[tuple[DatasetRef, ...], dict[str, Dataset]]:
    """A reference for each dataset id, with its content hash when the dataset is at hand:
    given, or the embedded world rebuilt from the seed in its id. Also the datasets found."""
    by_id = {d.id: d for d in given}
    refs: list[DatasetRef] = []
    found: dict[str, Dataset] = {}
    for dataset_id in dict.fromkeys(dataset_ids):
        ds = by_id.get(dataset_id) or _world(dataset_id)
        if ds is not None:
            found[dataset_id] = ds
        digest = content_hash(ds) if ds is not None else None
        refs.append(DatasetRef(dataset_id=dataset_id, content_hash=digest))
    return tuple(refs), found


def check_splits(
    steps: Iterable[tuple[StepColumns, StepRow]], datasets: Mapping[str, Dataset]
) -> None:
    """Every step's recorded split must be the one its dataset gives the event: the guard
    trusts the log only where the dataset is not at hand."""
    for log, step in steps:
        ds = datasets.get(log.header.dataset_id)
        if ds is None:
            continue
        truth = ds.splits.get(step.event_id, "")
        if truth != step.split:
            raise FieldError(
                "",
                f"{log.path}: step {step.event_id}#{step.step_index} is recorded in split "
                f"{split_name(step.split)!r} but dataset {ds.id} puts the event in "
                f"{split_name(truth)!r}",
            )


@dataclass(frozen=True)
class Selected:
    steps: list[tuple[StepColumns, StepRow]]
    """The admitted steps with their log, in log order: a ``StepRow`` of a log's step columns
    (``runs.records`` reads their full records)."""
    left_out: dict[str, int]
    datasets: tuple[DatasetRef, ...]
    runs: Runs
    """The admitted steps' columns: their full records are streamed by offset, one at a time
    (``Runs.records``; ``Runs.where`` picks some of them)."""


def _logs(run_logs: Sequence[str | Path | StepColumns]) -> list[StepColumns]:
    logs = [
        log if isinstance(log, StepColumns) else read_step_columns(log, _READ) for log in run_logs
    ]
    if not logs:
        raise FieldError("", "no run logs given")
    return logs


def _light(log: StepColumns) -> list[StepRow]:
    cols = log.table.select(list(SOURCE_COLUMNS)).to_pydict()
    return [StepRow(*row) for row in zip(*(cols[c] for c in SOURCE_COLUMNS), strict=True)]


def select_steps(
    run_logs: Sequence[str | Path | StepColumns],
    policy: SplitPolicy | None,
    datasets: Sequence[Dataset] = (),
) -> Selected:
    """The steps of ``run_logs`` that ``policy`` admits (all of them without a policy). A
    recorded split is checked against the dataset where it is at hand (``datasets``, or the
    embedded world rebuilt from its id). Step columns (``SOURCE_COLUMNS`` at least) are read
    for the guard and the manifest alone, no full record. Raises ``FieldError`` for an
    unreadable log and ``FieldError`` when no step is left."""
    logs = _logs(run_logs)
    items = [(log, step, k, i) for k, log in enumerate(logs) for i, step in enumerate(_light(log))]
    where = ", ".join(str(log.path) for log in logs)
    if not items:
        raise FieldError("", f"{where}: no forecast steps")
    refs, found = dataset_refs((log.header.dataset_id for log in logs), datasets)
    check_splits(((log, step) for log, step, _, _ in items), found)
    left_out: dict[str, int] = {}
    if policy is not None:
        items, left_out = policy.select(items, lambda p: p[1].split, where)
    starts = np.cumsum([0, *(log.table.num_rows for log in logs)])
    keep = np.zeros(starts[-1], dtype=bool)
    keep[[starts[k] + i for _, _, k, i in items]] = True
    runs = Runs(tuple(logs)).where(keep)
    return Selected([(log, step) for log, step, _, _ in items], left_out, refs, runs)
