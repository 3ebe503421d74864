"""Reading run logs once, for every command that reads them (score, report, view, export, stats,
audit run): each log validated, checked against the dataset given, and every forecast counted
once however often a log, a copy of it or one of its step lines was given."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from pastcast.dataset import Dataset
from pastcast.errors import FieldError, within
from pastcast.records import StepKey
from pastcast.reports import RUN_COLUMNS, Runs
from pastcast.runlog import PENDING_TRUTH, RunHeader, StepColumns, as_numpy, read_step_columns
from pastcast.scoring import coded, distinct_rows

__all__ = ["RunsRead", "check_dataset", "read_runs"]


@dataclass(frozen=True)
class RunsRead:
    """The run logs as read through their step columns (``read_runs``): each run once, each
    step of a run once, with the dataset they ran on when it was given."""

    runs: Runs
    given: tuple[Path, ...]
    """The paths as given (the duplicates too)."""
    notes: tuple[str, ...] = ()
    """What was left out or merged, and why: the same log given twice, a copy of a log, a step
    line repeated, a last line cut off mid-write, a columnar companion rebuilt because it failed
    its check."""

    @property
    def logs(self) -> tuple[StepColumns, ...]:
        return self.runs.logs

    @property
    def dataset(self) -> Dataset | None:
        return self.runs.dataset


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _distinct_files(paths: Sequence[Path], notes: list[str]) -> Iterator[Path]:
    """``paths`` less those naming a file given before (the same device and inode, else the
    same resolved path), each left out with a note."""
    by_file: dict[tuple[int, int] | Path, Path] = {}
    for path in paths:
        ident: tuple[int, int] | Path = _file_id(path) or path.resolve()
        if ident in by_file:
            notes.append(f"{path}: the same run log as {by_file[ident]}; read once")
            continue
        by_file[ident] = path
        yield path


_PENDING_NOTE = (
    "{path}: {n} step(s) of questions not resolved yet (a live round's, graded again when they "
    "resolve) are left out"
)


def _graded_columns(log: StepColumns, notes: list[str]) -> StepColumns:
    """``log`` without the steps graded before their question resolved (``PENDING_TRUTH``):
    they have no outcome to score against, so no reader counts them."""
    import pyarrow as pa

    codes, truths = coded(log.table.column("truth"))  # Arrow's comparison with a Python string
    if PENDING_TRUTH not in truths:  # would import pandas
        return log
    pending = codes == truths.index(PENDING_TRUTH)
    notes.append(_PENDING_NOTE.format(path=log.path, n=int(pending.sum())))
    return replace(log, table=log.table.filter(pa.array(~pending)))


_KEY = ("agent", "setting", "event_id", "step_index", "rollout")


def _keys(log: StepColumns) -> list[StepKey]:
    cols = log.table.select(list(_KEY)).to_pydict()
    return list(zip(*(cols[c] for c in _KEY), strict=True))


def _distinct_keys(log: StepColumns) -> bool:
    """No two rows of ``log`` have the same step key (counted by numpy, not in Python)."""
    n = log.table.num_rows
    if n < 2:
        return True
    codes = [coded(log.table.column(c))[0] for c in ("agent", "setting", "event_id")]
    codes += [as_numpy(log.table.column(c), np.int64) for c in ("step_index", "rollout")]
    return bool(distinct_rows(codes)[1].shape[0] == n)


class _LazyKeys:
    """The step keys read of a run, made only when another log of the run needs them (a copy
    of it), so a run read once never builds a Python key per step."""

    def __init__(self, log: StepColumns | None, keys: set[StepKey] | None = None) -> None:
        self._log = log
        self._keys = keys

    def _set(self) -> set[StepKey]:
        if self._keys is None:
            self._keys = set(_keys(self._log)) if self._log is not None else set()
        return self._keys

    def __contains__(self, key: object) -> bool:
        return key in self._set()

    def update(self, keys: Iterable[StepKey]) -> None:
        self._set().update(keys)


def _keep(log: StepColumns, mask: list[bool]) -> StepColumns:
    import pyarrow as pa

    return replace(log, table=log.table.filter(pa.array(mask, type=pa.bool_())))


def _columns_once(
    paths: Sequence[Path], columns: Sequence[str], notes: list[str]
) -> list[StepColumns]:
    """Each log read once: a path naming a file already read is skipped; a repeated step line
    counts once; a log with the header of one read before (the same run: a copy, or a copy that
    ran further) keeps only the steps not read yet, and is left out when none are left."""
    logs: list[StepColumns] = []
    known: dict[int, tuple[RunHeader, Path, _LazyKeys]] = {}
    for path in _distinct_files(paths, notes):
        with within("run_logs"):
            log = read_step_columns(path, columns)
        notes.extend(log.notes)
        if log.truncated_tail:
            notes.append(f"{path}: the last line is incomplete (cut off mid-write); left out")
        same = next((v for v in known.values() if v[0] == log.header), None)
        if same is None and _distinct_keys(log):  # the common case: no Python key per step
            known[len(known)] = (log.header, path, _LazyKeys(log))
            logs.append(log)
            continue
        keys = _keys(log)
        seen: set[StepKey] = set()
        first = [not (k in seen or seen.add(k)) for k in keys]  # type: ignore[func-returns-value]
        repeated = first.count(False)
        if repeated:
            notes.append(
                f"{path}: {repeated} step line(s) repeat a step already in the log (same agent, "
                "setting, event, step and rollout); each step is counted once"
            )
        if same is not None:
            fresh = [f and k not in same[2] for f, k in zip(first, keys, strict=True)]
            n_fresh, n_kept = fresh.count(True), first.count(True)
            if n_fresh < n_kept:
                notes.append(
                    f"{path}: a copy of run {log.header.run_id} ({same[1]}); its "
                    f"{n_kept - n_fresh} step(s) read already are counted once"
                    + (f", its {n_fresh} other step(s) added" if n_fresh else "")
                )
                if not n_fresh:
                    continue
            first = fresh
            same[2].update(k for k, f in zip(keys, first, strict=True) if f)
        else:
            known[len(known)] = (
                log.header,
                path,
                _LazyKeys(None, {k for k, f in zip(keys, first, strict=True) if f}),
            )
        logs.append(_keep(log, first) if not all(first) else log)
    return logs


def check_dataset(logs: Sequence[StepColumns], data: Dataset, named: str | Path | Dataset) -> None:
    """``FieldError`` naming ``dataset`` unless every log ran on ``data`` (``named`` so)."""
    named = data.id if isinstance(named, Dataset) else named
    for log in logs:
        if log.header.dataset_id != data.id:
            raise FieldError(
                "dataset",
                f"{str(named)!r} is dataset {data.id!r}, but {log.path} ran on "
                f"{log.header.dataset_id!r}",
            )


def read_runs(
    run_logs: Sequence[str | Path],
    dataset: str | Path | Dataset | None = None,
    *,
    columns: Sequence[str] = RUN_COLUMNS,
    require_steps: bool = True,
) -> RunsRead:
    """The run logs ``run_logs`` (step files) through their columnar companions, each forecast
    once (docs/reports.md, "Each forecast once"); each companion rebuilt because it failed its
    check against the step file is said in ``notes`` too. Only ``columns`` of each step are read
    (the key columns are added); full records are streamed by offset (``Runs.records``).

    ``FieldError`` naming ``run_logs`` for an unreadable log (or, with ``require_steps``, when no
    log holds a forecast step), ``dataset`` for a dataset that cannot be opened or is not the
    one a log ran on."""
    paths = tuple(Path(p) for p in run_logs)
    if not paths:
        raise FieldError("run_logs", "no run logs given")
    wanted = list(dict.fromkeys([*columns, *_KEY, "truth", "offset", "length"]))
    notes: list[str] = []
    logs = [_graded_columns(log, notes) for log in _columns_once(paths, wanted, notes)]
    if require_steps and not any(log.table.num_rows for log in logs):
        raise FieldError("run_logs", "no forecast steps in " + ", ".join(str(p) for p in paths))
    data = None
    if dataset is not None:  # the dataset readers load only when a dataset is named
        from pastcast.app._open import open_dataset

        data = open_dataset(dataset)
        check_dataset(logs, data, dataset)
    return RunsRead(Runs(tuple(logs), data), paths, tuple(notes))
