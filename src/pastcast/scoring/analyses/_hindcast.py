"""Hindcast's analyses from run logs: accuracy by retrieval coverage, the lookback-fraction
sweep, and per-topic recoveries minus regressions between two pipelines.

Hindcast bins markets per run by how much evidence the agent's own retrieval found; the logs
record which documents every tool call exposed (``ToolCall.doc_ids``), so coverage here is the
number of distinct documents an agent was shown (or read in full) at the step.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Literal

import numpy as np

from pastcast.runlog import StepRecord
from pastcast.scoring._aggregate import GroupSummary, _select, summarize
from pastcast.scoring._table import Convention, ScoreTable, table_from_records
from pastcast.scoring.analyses._breakdown import RecoveryCount, recoveries_regressions

__all__ = [
    "CoverageKind",
    "coverage",
    "coverage_bin",
    "coverage_summary",
    "lookback_summary",
    "pipeline_recoveries",
    "with_row_column",
]

CoverageKind = Literal["shown", "read"]


def coverage(record: StepRecord, kind: CoverageKind = "shown") -> int:
    """Distinct documents the step's tool calls exposed ("shown": any search hit or read;
    "read": full texts read)."""
    ids: set[str] = set()
    for call in record.episode.tool_calls:
        if kind == "shown" or call.name == "read":
            ids.update(call.doc_ids)
    return len(ids)


def coverage_bin(n: int, edges: Sequence[int] = (1, 5, 20)) -> str:
    """Label a document count: with edges (1, 5, 20): '0', '1-4', '5-19', '>=20'."""
    prev = 0
    for edge in edges:
        if n < edge:
            return str(prev) if edge - prev == 1 else f"{prev}-{edge - 1}"
        prev = edge
    return f">={edges[-1]}"


def with_row_column(table: ScoreTable, name: str, labels: Sequence[str]) -> ScoreTable:
    """A table with an extra key column given per row (e.g. a coverage bin), for ``by``."""
    if name in table.keys or name in ("step", "rollout"):
        raise ValueError(f"with_row_column: column {name!r} already exists")
    if len(labels) != len(table):
        raise ValueError(f"with_row_column: {len(labels)} labels for {len(table)} rows")
    names, inv = np.unique(np.asarray(labels, dtype=object).astype(str), return_inverse=True)
    col = (inv.reshape(-1).astype(np.int64), tuple(str(n) for n in names))
    return replace(table, keys={**table.keys, name: col})


def coverage_summary(
    records: Iterable[StepRecord],
    edges: Sequence[int] = (1, 5, 20),
    kind: CoverageKind = "shown",
    by: Sequence[str] = ("run_id", "agent", "setting"),
    fallback: Convention = "uniform",
    bootstrap: int = 4000,
    seed: int = 0,
) -> tuple[GroupSummary, ...]:
    """Scores (accuracy, Brier, ...) per run and coverage bin (Hindcast Table 1, S/W/N)."""
    recs = list(records)
    labels = [coverage_bin(coverage(r, kind), edges) for r in recs]
    table = with_row_column(table_from_records(recs), "coverage", labels)
    return summarize(table, by=(*by, "coverage"), fallback=fallback, bootstrap=bootstrap, seed=seed)


def lookback_summary(
    records: Iterable[StepRecord],
    fractions: Sequence[float] = (0.25, 0.5, 0.75, 1.0),
    by: Sequence[str] = ("agent", "setting"),
    fallback: Convention = "uniform",
    bootstrap: int = 4000,
    seed: int = 0,
) -> tuple[tuple[GroupSummary, ...], tuple[str, ...]]:
    """Scores per lookback fraction (Hindcast Figure 5, Table 7) for steps made by the lookback
    schedule, whose step i is fraction i. An event whose schedule has another number of steps
    (fractions that fell on the same day were merged) cannot be mapped and is left out; the
    second value lists those events. ``rollout_std`` is the spread across consistency runs.
    """
    recs = list(records)
    n_steps: dict[str, int] = {}
    for r in recs:
        n_steps[r.event_id] = max(n_steps.get(r.event_id, 0), r.step_index + 1)
    skipped = tuple(sorted(e for e, n in n_steps.items() if n != len(fractions)))
    kept = [r for r in recs if n_steps[r.event_id] == len(fractions)]
    if not kept:
        return (), skipped
    labels = [f"{100 * fractions[r.step_index]:g}%" for r in kept]
    table = with_row_column(table_from_records(kept), "lookback", labels)
    out = summarize(table, by=(*by, "lookback"), fallback=fallback, bootstrap=bootstrap, seed=seed)
    order = {f"{100 * f:g}%": i for i, f in enumerate(fractions)}
    return tuple(sorted(out, key=lambda s: (s.group[:-1], order[s.group[-1]]))), skipped


def pipeline_recoveries(
    records: Iterable[StepRecord],
    a: Mapping[str, str],
    b: Mapping[str, str],
    pair_by: Sequence[str] = ("agent",),
    topic: Mapping[str, str] | None = None,
    fallback: Convention = "uniform",
) -> tuple[RecoveryCount, ...]:
    """Per-topic recoveries (A right, B wrong) and regressions of pipeline A against B, pooled
    over everything else (Hindcast Figure 6).

    Forecasts are paired on (event, step, rollout) plus ``pair_by`` (e.g. the model, when the
    pipelines are two settings of one agent; pass () when they are two agent names). Right
    means the truth is the only top label. Topics are the events' categories unless ``topic``
    maps event ids to topics.
    """
    recs = list(records)
    table = table_from_records(recs)
    correct = table.metrics(fallback)["accuracy"] == 1.0
    cols = [table.codes(c) for c in ("event", *pair_by)] + [table.step, table.rollout]
    key = np.stack(cols, axis=1)
    found = []
    for where in (a, b):
        rows = np.flatnonzero(_select(table, where))
        index = {tuple(k): int(r) for k, r in zip(key[rows].tolist(), rows, strict=True)}
        if len(index) != rows.size:
            raise ValueError(
                f"pipeline_recoveries: selection {dict(where)} has several records for one "
                f"(event, step, rollout, {', '.join(pair_by)}); narrow it or extend pair_by"
            )
        found.append(index)
    shared = sorted(found[0].keys() & found[1].keys())
    ra = np.array([found[0][k] for k in shared], dtype=np.int64)
    rb = np.array([found[1][k] for k in shared], dtype=np.int64)
    events = [recs[i].event_id for i in ra]
    topics = [topic.get(e, "unknown") for e in events] if topic else [recs[i].category for i in ra]
    return recoveries_regressions(correct[ra], correct[rb], topics)
