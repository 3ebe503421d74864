"""Hindcast's analyses from run logs: accuracy by retrieval coverage (the document count, or
the agent's own S/W/N label from its evidence tally), the lookback-fraction sweep, and
recoveries minus regressions between two pipelines (section 7); docs/scoring.md ("Hindcast
analyses").
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from pastcast.records import evidence_label_of
from pastcast.runlog import StepRecord
from pastcast.scoring._aggregate import GroupSummary, _select, summarize
from pastcast.scoring._table import Convention, ScoreTable
from pastcast.scoring.analyses._breakdown import RecoveryCount, recoveries_regressions

EVIDENCE_ORDER = ("strong", "weak", "none", "untallied")
"""The agent's own coverage labels in Table 1's order; ``untallied``: no tally at the step (a
baseline, an agent without ``tally``, a tally that could not be read)."""

DURATION_EDGES: tuple[float, float] = (7.0, 30.0)
"""Days a market was open at the edges of Hindcast's short / medium / long buckets. The paper
names the buckets (36/129/51 markets, section 4.1) without printing their edges; pastcast
takes under a week as short and a month or more as long (``duration_bucket(edges=...)``)."""

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
    if len(labels) != len(table):
        raise ValueError(f"with_row_column: {len(labels)} labels for {len(table)} rows")
    names, inv = np.unique(np.asarray(labels, dtype=object).astype(str), return_inverse=True)
    return with_coded_column(
        table, name, inv.reshape(-1).astype(np.int64), tuple(str(n) for n in names)
    )


def with_coded_column(
    table: ScoreTable, name: str, codes: NDArray[np.int64], names: Sequence[str]
) -> ScoreTable:
    """``with_row_column`` of labels already coded: row ``i`` is ``names[codes[i]]``, the
    names sorted and distinct (as ``with_row_column`` codes them, so both give one table)."""
    if name in table.keys or name in ("step", "rollout"):
        raise ValueError(f"with_row_column: column {name!r} already exists")
    if codes.shape != (len(table),):
        raise ValueError(f"with_row_column: {codes.size} codes for {len(table)} rows")
    if list(names) != sorted(set(names)):
        raise ValueError("with_coded_column: the names must be sorted and distinct")
    if codes.size and (int(codes.min()) < 0 or int(codes.max()) >= len(names)):
        raise ValueError("with_coded_column: a code names no label")
    return replace(table, keys={**table.keys, name: (codes, tuple(names))})


def coverage_summary(
    table: ScoreTable,
    counts: Sequence[int],
    edges: Sequence[int] = (1, 5, 20),
    by: Sequence[str] = ("run_id", "agent", "setting"),
    fallback: Convention = "uniform",
    bootstrap: int = 4000,
    seed: int = 0,
) -> tuple[GroupSummary, ...]:
    """Scores (accuracy, Brier, ...) per run and coverage bin (Hindcast Table 1, S/W/N);
    ``counts``: each row's ``coverage(record, kind)``, so a reader streaming the records keeps
    one integer a step."""
    labels = [coverage_bin(n, edges) for n in counts]
    table = with_row_column(table, "coverage", labels)
    return summarize(table, by=(*by, "coverage"), fallback=fallback, bootstrap=bootstrap, seed=seed)


def lookback_summary(
    table: ScoreTable,
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
    event, events = table.keys["event"]
    n_steps = np.zeros(len(events), dtype=np.int64)
    np.maximum.at(n_steps, event, table.step + 1)
    seen = np.zeros(len(events), dtype=bool)
    seen[event] = True
    skipped = tuple(
        sorted(events[e] for e in np.flatnonzero(seen & (n_steps != len(fractions))).tolist())
    )
    kept = np.flatnonzero(n_steps[event] == len(fractions))
    if not kept.size:
        return (), skipped
    labels = [f"{100 * fractions[s]:g}%" for s in table.step[kept].tolist()]
    table = with_row_column(table.take(kept), "lookback", labels)
    out = summarize(table, by=(*by, "lookback"), fallback=fallback, bootstrap=bootstrap, seed=seed)
    order = {f"{100 * f:g}%": i for i, f in enumerate(fractions)}
    return tuple(sorted(out, key=lambda s: (s.group[:-1], order[s.group[-1]]))), skipped


def pipeline_recoveries(
    table: ScoreTable,
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
    ra, rb, correct = _pairs(table, a, b, pair_by, fallback)
    column = "event" if topic else "category"
    codes, names = table.keys[column]
    values = [names[c] for c in codes[ra].tolist()]
    topics = [topic.get(e, "unknown") for e in values] if topic else values
    return recoveries_regressions(correct[ra], correct[rb], topics)


def evidence_label(record: StepRecord) -> str:
    """The agent's own S/W/N label at the step (``pastcast.records.evidence_label_of`` of its
    tally; the step columns hold it as ``evidence``)."""
    return evidence_label_of(record.episode.evidence_tally)


NO_STOP = "-"
"""The stop reason of a step whose agent has no research loop."""


def stop_reason_of(record: StepRecord) -> str:
    """Why the step's research loop stopped (``NO_STOP``: the agent has no such loop)."""
    return record.episode.stop_reason or NO_STOP


def evidence_summary(
    table: ScoreTable,
    labels: Sequence[str],
    by: Sequence[str] = ("run_id", "agent", "setting"),
    fallback: Convention = "uniform",
    bootstrap: int = 4000,
    seed: int = 0,
) -> tuple[GroupSummary, ...]:
    """Scores per group and the agent's own evidence label, each row's ``evidence_label``
    (Table 1's accuracy by S/W/N; the ``n`` of each group is Table 6's bin size)."""
    table = with_row_column(table, "evidence", labels)
    out = summarize(table, by=(*by, "evidence"), fallback=fallback, bootstrap=bootstrap, seed=seed)
    order = {label: i for i, label in enumerate(EVIDENCE_ORDER)}
    return tuple(sorted(out, key=lambda g: (g.group[:-1], order.get(g.group[-1], 99))))


def stop_counts(table: ScoreTable, stops: Sequence[str]) -> dict[tuple[str, str], dict[str, int]]:
    """Steps per (agent, setting) and stop reason, ``stops`` each row's ``stop_reason_of``
    (``-`` where the agent has no loop)."""
    agents, settings = (
        [table.name(c, x) for x in table.codes(c).tolist()] for c in ("agent", "setting")
    )
    out: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for agent, setting, reason in zip(agents, settings, stops, strict=True):
        out[(agent, setting)][reason] += 1
    return {k: dict(sorted(v.items())) for k, v in sorted(out.items())}


def market_days(open_time: datetime, close_time: datetime, resolved_at: datetime | None) -> float:
    """How long a market was open, in days: open to close, or to its resolution when earlier."""
    end = close_time if resolved_at is None else min(close_time, resolved_at)
    return max(0.0, (end - open_time).total_seconds() / 86400.0)


def duration_bucket(days: float, edges: tuple[float, float] = DURATION_EDGES) -> str:
    """``short`` below ``edges[0]`` days, ``long`` from ``edges[1]``, ``medium`` between."""
    if not edges[0] < edges[1]:
        raise ValueError(f"duration_bucket: edges must increase, not {edges}")
    if days < edges[0]:
        return "short"
    return "long" if days >= edges[1] else "medium"


def paired_recoveries(
    table: ScoreTable,
    a: Mapping[str, str],
    b: Mapping[str, str],
    key: Sequence[str],
    pair_by: Sequence[str] = ("agent",),
    min_markets: int = 0,
    fallback: Convention = "uniform",
) -> tuple[RecoveryCount, ...]:
    """Recoveries (A right, B wrong) and regressions of pipeline A against B per ``key`` of
    A's row (a topic, a duration bucket, A's stop reason; ``key``: each row's group), pooled
    over everything else.

    Pairs as ``pipeline_recoveries``. A group needs ``min_markets`` distinct markets among the
    pairs (Figure 6 shows topics with at least four); ``RecoveryCount.markets`` counts them.
    """
    ra, rb, correct = _pairs(table, a, b, pair_by, fallback)
    groups = [key[i] for i in ra.tolist()]  # A's rows only
    counts = recoveries_regressions(correct[ra], correct[rb], groups)
    event = table.codes("event")
    markets: dict[str, set[int]] = {}
    for i, g in zip(ra.tolist(), groups, strict=True):
        markets.setdefault(g, set()).add(int(event[i]))
    out = [replace(c, markets=len(markets.get(c.topic, ()))) for c in counts]
    return tuple(c for c in out if c.markets >= min_markets)


def model_recoveries(
    table: ScoreTable,
    pipelines: Mapping[str, tuple[Mapping[str, str], Mapping[str, str]]],
    fallback: Convention = "uniform",
) -> tuple[RecoveryCount, ...]:
    """Per-model nets (section 7.3): for each model its (A, B) selections (the Retrieval agent
    and the zero-shot baseline of that model), paired on (event, step, rollout); one
    ``RecoveryCount`` a model, ``topic`` its name."""
    event = table.codes("event")
    out = []
    for model, (a, b) in pipelines.items():
        ra, rb, correct = _pairs(table, a, b, (), fallback)
        (count,) = recoveries_regressions(correct[ra], correct[rb], [model] * len(ra)) or (
            RecoveryCount(model, 0, 0, 0),
        )
        out.append(replace(count, markets=len(np.unique(event[ra]))))
    return tuple(sorted(out, key=lambda r: (-r.net, r.topic)))


def _pairs(
    table: ScoreTable,
    a: Mapping[str, str],
    b: Mapping[str, str],
    pair_by: Sequence[str],
    fallback: Convention,
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.bool_]]:
    """Rows of A and of B paired on (event, step, rollout, *pair_by), and who was right."""
    correct: NDArray[np.bool_] = np.asarray(table.metrics(fallback)["accuracy"] == 1.0)
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
    return ra, rb, correct
