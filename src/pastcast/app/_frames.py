"""Run logs as a data frame, from Python: the step columns of one or many logs (their columnar
companions, checked and brought up to date first) as a lazy polars frame, or pandas on request,
with one column per outcome's probability and the dataset's event metadata joinable."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pastcast.app._open import open_dataset
from pastcast.dataset import Dataset
from pastcast.errors import FieldError, within
from pastcast.runlog import read_step_columns

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped]
    import polars as pl

__all__ = ["FRAMES_EXTRA_HINT", "runs_frame"]

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
    if backend == "pandas":
        return frame.collect().to_pandas()
    return frame
