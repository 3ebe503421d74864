"""Reading run logs once, for every command that reads them (score, report, view, export, stats,
audit run): each log validated, checked against the dataset given, and every forecast counted
once however often a log, a copy of it or one of its step lines was given."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from pastcast.dataset import Dataset
from pastcast.errors import FieldError, within
from pastcast.records import StepKey
from pastcast.reports import RUN_COLUMNS, Runs
from pastcast.runlog import PENDING_TRUTH, RunHeader, StepColumns, as_numpy, read_step_columns
from pastcast.scoring import coded, distinct_rows

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped]
    import polars as pl


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


def _distinct_files(paths: Sequence[Path], notes: list[str]) -> Iterator[Path]:
    """``paths`` less those naming a file given before (the same device and inode, else the
    same resolved path), each left out with a note."""
    by_file: dict[tuple[int, int] | Path, Path] = {}
    for path in paths:
        try:
            st = os.stat(path)
            ident: tuple[int, int] | Path = (st.st_dev, st.st_ino)
        except OSError:
            ident = path.resolve()
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


# Run logs as a data frame, from Python: the step columns of one or many logs (their columnar
# companions, checked and brought up to date first) as a lazy polars frame, or pandas on
# request, with one column per outcome's probability and the dataset's event metadata joinable.
FRAMES_EXTRA_HINT = "pip install 'pastcast[frames]'"

Backend = Literal["polars", "pandas"]


def _polars() -> Any:
    try:
        import polars
    except ImportError:
        raise FieldError(
            "backend", f"run-log frames need polars, which is missing: {FRAMES_EXTRA_HINT}"
        ) from None
    return polars


def _events(pl: Any, data: Dataset) -> Any:
    """One row per event of the dataset: what a frame of steps can join on ``event_id``."""
    rows = [
        {
            "event_id": e.id,
            "title": e.title,
            "event_kind": e.kind,
            "event_category": e.category,
            "source": e.source,
            "open_time": e.open_time,
            "close_time": e.close_time,
            "resolved_at_dataset": r.resolved_at if (r := data.resolutions.get(e.id)) else None,
        }
        for e in data.events
    ]
    return pl.DataFrame(rows).lazy() if rows else None


def _p_column(label: str) -> str:
    """The frame's column of an outcome's probability: ``p_yes`` for ``Yes``, ``p_deirel_vuani``
    for ``Deirel Vuani`` (lower case, runs of other characters as one ``_``)."""
    return "p_" + (re.sub(r"[^0-9a-z]+", "_", label.lower()).strip("_") or "_")


def _probability_columns(pl: Any, frame: Any) -> Any:
    """``frame`` with ``p_<label>`` (the forecast's) and ``market_p_<label>`` (the market's, as of
    the step) for every label of its steps, null where a step has no such outcome."""
    labels = frame.select(pl.col("labels").explode().drop_nulls().unique(maintain_order=True))
    names: dict[str, str] = {}
    for label in labels.collect().to_series().to_list():
        names.setdefault(_p_column(label), label)  # first label of a name wins

    def p_of(column: str, label: str) -> Any:
        found = pl.element().filter(pl.element().struct.field("label") == label)
        return pl.col(column).list.eval(found.struct.field("p")).list.first()

    return frame.with_columns(
        *(p_of("probs", label).alias(name) for name, label in names.items()),
        *(p_of("market_probs", label).alias(f"market_{name}") for name, label in names.items()),
    )


def runs_frame(
    run_logs: Sequence[str | Path] | str | Path,
    *,
    dataset: str | Path | Dataset | None = None,
    backend: Backend = "polars",
) -> pl.LazyFrame | pd.DataFrame:
    """The step columns of ``run_logs`` as a lazy polars frame (or pandas), one row per step line
    with a ``p_<label>``/``market_p_<label>`` column per outcome and, with ``dataset``, its
    event's metadata: the columns are in docs/runlog.md ("From Python"). The full record of a
    row is ``read_step_columns(log).record(offset, length)``. ``FieldError`` naming the field."""
    if backend not in ("polars", "pandas"):
        raise FieldError("backend", f"{backend!r}: expected polars or pandas")
    pl = _polars()
    paths = [Path(run_logs)] if isinstance(run_logs, str | Path) else [Path(p) for p in run_logs]
    if not paths:
        raise FieldError("run_logs", "no run logs given")
    from pastcast.app._open import open_dataset

    data = None if dataset is None else open_dataset(dataset)
    frames = []
    for path in paths:
        with within("run_logs"):
            cols = read_step_columns(path)
        if data is not None and cols.header.dataset_id != data.id:
            raise FieldError(
                "dataset", f"{path} ran on {cols.header.dataset_id!r}, not on {data.id!r}"
            )
        parts = [pl.scan_parquet([str(p) for p in cols.parts])] if cols.parts else []
        if cols.tail_rows:  # not yet in a part (a writer holds the log): from the JSONL
            tail = cols.table.slice(cols.table.num_rows - cols.tail_rows)
            parts.append(pl.from_arrow(tail).lazy())
        if not parts:
            parts = [pl.from_arrow(cols.table).lazy()]
        frames.append(pl.concat(parts).with_columns(log=pl.lit(str(path))))
    frame = _probability_columns(pl, pl.concat(frames))
    if data is not None:
        events = _events(pl, data)
        if events is not None:
            frame = frame.join(events, on="event_id", how="left", maintain_order="left")
    return frame.collect().to_pandas() if backend == "pandas" else frame
