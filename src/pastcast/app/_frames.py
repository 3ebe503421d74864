"""Run logs as a data frame, from Python: the step columns of one or many logs (their columnar
companions, checked and brought up to date first) as a lazy polars frame, or pandas on request,
with the dataset's event metadata joinable."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pastcast.app._datasets import open_dataset
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


def runs_frame(
    run_logs: Sequence[str | Path] | str | Path,
    *,
    dataset: str | Path | Dataset | None = None,
    backend: Backend = "polars",
) -> pl.LazyFrame | pd.DataFrame:
    """The step columns of ``run_logs`` (step files; ``pastcast.runlog.columns_schema``), one
    row per step line of each log in file order, with ``log`` (the step file's path): a lazy
    polars frame (``backend="polars"``, scanning the companions' Parquet parts) or a pandas
    frame (``"pandas"``). With ``dataset`` (a spec ``open_dataset`` reads, or a dataset) each
    row is joined with its event's metadata (``title``, ``event_kind``, ``event_category``,
    ``source``, ``open_time``, ``close_time``, ``resolved_at_dataset``), and every log must have
    run on it. The full record of a row is ``read_step_columns(log).record(offset, length)``.

    ``FieldError`` naming ``run_logs`` for an unreadable log, ``dataset`` for the wrong dataset,
    ``backend`` without polars (the ``frames`` extra) or for an unknown backend."""
    if backend not in ("polars", "pandas"):
        raise FieldError("backend", f"{backend!r}: expected polars or pandas")
    pl = _polars()
    paths = [Path(run_logs)] if isinstance(run_logs, str | Path) else [Path(p) for p in run_logs]
    if not paths:
        raise FieldError("run_logs", "no run logs given")
    data = dataset if isinstance(dataset, Dataset) or dataset is None else open_dataset(dataset)
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
    frame = pl.concat(frames)
    if data is not None:
        events = _events(pl, data)
        if events is not None:
            frame = frame.join(events, on="event_id", how="left", maintain_order="left")
    if backend == "pandas":
        return frame.collect().to_pandas()
    return frame
