"""``export_table``: one Parquet row per forecast of every split (the analysis of a run, not
training data), scored by ``pastcast.scoring`` as ``pastcast score`` scores it, so the table and
the leaderboard agree."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pastcast.dataset import Dataset
from pastcast.runlog import StepColumns, columns_schema, read_step_columns
from pastcast.scoring import TABLE_INPUTS, Convention, ScoreTable, metric_list, table_from_columns
from pastcast.train._guard import split_name
from pastcast.train._manifest import ExportManifest, write_export
from pastcast.train._source import select_steps

_LEADING = (
    "run_id",
    "dataset_id",
    "agent",
    "role",
    "setting",
    "event_id",
    "step_index",
    "rollout",
    "cutoff",
    "split",
    "category",
    "usable",
    "failure_reason",
    "termination",
    "probs",
    "truth",
    "labels",
    "market_probs",
    "market_at",
    "market_age_days",
    "p_truth",
    "market_p_truth",
)
_USAGE = ("model_calls", "input_tokens", "output_tokens", "cost_usd", "tool_calls", "wall_s")
_OWN = {
    c: pa.field(c, pa.string() if c == "dataset_id" else pa.float64())
    for c in ("dataset_id", "p_truth", "market_p_truth")
}
"""The table's columns that are not step columns (the others have the step columns' types)."""


def table_schema() -> pa.Schema:
    """The table's columns (docs/training.md, "pastcast export table"): keys, forecast and
    grading, a column per registered metric (in their order, null where undefined) and usage."""
    step = columns_schema()
    keys, usage = ([_OWN.get(c) or step.field(c) for c in names] for names in (_LEADING, _USAGE))
    scores = [pa.field(m.name, pa.float64()) for m in metric_list()]
    return pa.schema([*keys, *scores, *usage])


def _nulls(values: np.ndarray) -> list[float | None]:
    return [None if not np.isfinite(v) else float(v) for v in values]


def _forecasts(
    cols: dict[str, list[Any]], scores: ScoreTable, dataset_ids: list[str], fallback: Convention
) -> pa.Table:
    """The table of forecasts given by their step columns (``TABLE_COLUMNS_READ``) and their
    score table."""
    columns: dict[str, Sequence[object]] = {
        **cols,
        "dataset_id": dataset_ids,
        "split": [split_name(s) for s in cols["split"]],
        "usable": scores.usable.tolist(),
        "p_truth": _nulls(scores.p_truth),
        "market_p_truth": _nulls(scores.market_truth),
        **{name: _nulls(values) for name, values in scores.metrics(fallback).items()},
    }
    schema = table_schema()
    return pa.Table.from_pydict({c: columns[c] for c in schema.names}, schema=schema)


TABLE_COLUMNS_READ = (
    *TABLE_INPUTS,
    "cutoff",
    "market_at",
    "market_age_days",
    "failure_reason",
    "termination",
    *_USAGE,
)
"""The step columns ``export_table`` reads (``pastcast.runlog.columns_schema``)."""


def export_table(
    run_logs: Sequence[str | Path | StepColumns],
    out: str | Path,
    *,
    fallback: Convention = "uniform",
    datasets: Sequence[Dataset] = (),
) -> ExportManifest:
    """Write every forecast of ``run_logs`` to ``out`` (Parquet) and its manifest, from the
    logs' step columns (``TABLE_COLUMNS_READ``), never their full records."""
    logs = [
        log if isinstance(log, StepColumns) else read_step_columns(log, TABLE_COLUMNS_READ)
        for log in run_logs
    ]
    selected = select_steps(logs, None, datasets)
    both = pa.concat_tables([log.table.select(list(TABLE_COLUMNS_READ)) for log in logs])
    dataset_ids = [log.header.dataset_id for log in logs for _ in range(log.table.num_rows)]
    scores = table_from_columns(both.select(list(TABLE_INPUTS)))
    table = _forecasts(both.to_pydict(), scores, dataset_ids, fallback)

    def write(path: Path) -> int:
        pq.write_table(table, path)
        return int(table.num_rows)

    return write_export(
        out, write, kind="table", selected=selected, policy=None, options={"fallback": fallback}
    )
