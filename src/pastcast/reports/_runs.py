"""Run logs read for reporting (``Runs``): their step columns, the score table with the report's
extra columns, how many forecasts each group was scheduled to make, and the full records an
analysis needs, streamed by offset. The columns a report groups by and the schedule:
docs/reports.md ("Grouping", "The schedule").
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, time
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from pastcast.dataset import Dataset
from pastcast.records import BINARY_LABELS, Notebook
from pastcast.runlog import RunHeader, RunLog, StepColumns, StepRecord, as_numpy, column_probs
from pastcast.scoring import TABLE_INPUTS, ScoreTable, coded, distinct_rows, table_from_columns
from pastcast.scoring.analyses import (
    EVIDENCE_INPUTS,
    NO_STOP,
    RESOURCES,
    EvidenceRow,
    duration_bucket,
    evidence_index_of,
    horizon_bucket,
    market_days,
    notebook_rows,
    with_coded_column,
)

if TYPE_CHECKING:
    import pyarrow as pa

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
    "market_age",
    "step",
    "rollout",
)
"""Columns a report can group by (``--by``)."""

_MARKET_AGE_EDGES = (1.0, 7.0, 30.0)
"""The bins of ``--by market_age`` in days (docs/reports.md, "Grouping")."""


def _market_age_bins(
    ages: NDArray[np.float64], has_market: NDArray[np.bool_]
) -> tuple[NDArray[np.int64], tuple[str, ...]]:
    """The ``--by market_age`` bin of each step, coded: the bins of ``horizon_bucket`` over
    ``_MARKET_AGE_EDGES``, then ``none`` and ``unrecorded``."""
    names = [horizon_bucket(low, _MARKET_AGE_EDGES) for low in (0.0, *_MARKET_AGE_EDGES)]
    code = np.searchsorted(np.asarray(_MARKET_AGE_EDGES), ages, side="right").astype(np.int64)
    missing = np.isnan(ages)
    code[missing & ~has_market] = len(names)
    code[missing & has_market] = len(names) + 1
    listed = (*names, "none", "unrecorded")
    order = sorted(range(len(listed)), key=listed.__getitem__)  # coded columns' names sorted
    rank = np.empty(len(listed), dtype=np.int64)
    rank[order] = np.arange(len(listed))
    return rank[code], tuple(listed[i] for i in order)


NO_MODEL = "-"
"""The "model" of an agent that calls none (a baseline, the heuristic agent)."""


def _agent_models(header: RunHeader) -> dict[tuple[str, str], str]:
    """The model of each agent and setting of a run: its spec's ``model`` argument."""
    return {(a.name, a.setting): str(a.args.get("model") or NO_MODEL) for a in header.agents}


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


_OF_EVENT = ("split", "category", "kind", "duration")
"""The columns an event decides (from the first step the run recorded of it)."""
_OF_AGENT = ("agent", "model", "setting", "role")
MISSING = "(missing)"
"""The outcome (evidence label, stop reason) of a step never written."""


def _schedule(
    table: ScoreTable,
    rows: slice,
    header: RunHeader,
    dataset: Dataset | None,
    by: Sequence[str],
) -> Counter[tuple[str, ...]]:
    """The forecasts one run (``rows`` of ``table``, with its ``header``) scheduled, counted per
    group of ``by``: every agent of the header (and any it recorded) at every event-step it
    recorded (all the dataset's steps of those events when it is known) for each rollout. The
    schedule is the product of those three lists, held as arrays of its items' positions."""
    event, step = table.codes("event")[rows], table.step[rows]
    if event.size == 0:
        return Counter()
    # the event-steps recorded (a list per column), each with its event's columns
    low = int(step.min())
    width = int(step.max()) - low + 1
    keys, row_es = np.unique(event * width + (step - low), return_inverse=True)
    found = np.stack([keys // width, keys % width + low], axis=1)
    row_es = row_es.reshape(-1)
    events, first = np.unique(event, return_index=True)
    of_event = {c: table.codes(c)[rows][first] for c in _OF_EVENT if c in by}
    es_event = np.searchsorted(events, found[:, 0])
    factors: dict[str, list[str]] = {
        "event": [table.name("event", e) for e in found[:, 0].tolist()],
        "step": [str(x) for x in found[:, 1].tolist()],
        **{c: [table.name(c, int(x)) for x in codes[es_event]] for c, codes in of_event.items()},
    }
    if "horizon" in by:  # a recorded event-step's horizon is its first row's
        factors["horizon"] = [
            table.name("horizon", int(x))
            for x in table.codes("horizon")[rows][np.unique(row_es, return_index=True)[1]]
        ]
    if dataset is not None:  # the dataset's other steps of the events the run took up
        known = set(map(tuple, found.tolist()))
        index = {table.name("event", e): i for i, e in enumerate(events.tolist())}
        for spec in dataset.steps:
            i = index.get(spec.event_id)
            if i is None or (int(events[i]), spec.step_index) in known:
                continue
            known.add((int(events[i]), spec.step_index))
            factors["event"].append(spec.event_id)
            factors["step"].append(str(spec.step_index))
            for c, codes in of_event.items():
                factors[c].append(table.name(c, int(codes[i])))
            if "horizon" in factors:
                factors["horizon"].append(horizon_of(dataset, spec.event_id, spec.cutoff))
    # the agents the run scheduled (its header's and any it recorded), a list per column of
    # ``_OF_AGENT``, sorted by name, setting and role
    triples: set[tuple[str, str, str]] = {(a.name, a.setting, a.role) for a in header.agents}
    _, seen = distinct_rows([table.codes(c)[rows] for c in ("agent", "setting", "role")])
    triples |= {
        (table.name("agent", a), table.name("setting", s), table.name("role", r))
        for a, s, r in seen.tolist()
    }
    listed = sorted(triples)
    models = _agent_models(header)
    agents = {
        "agent": [a for a, _, _ in listed],
        "model": [models.get((a, s), NO_MODEL) for a, s, _ in listed],
        "setting": [s for _, s, _ in listed],
        "role": [r for _, _, r in listed],
    }
    configured = header.config.get("rollouts")
    rollout = table.rollout[rows]
    n_r = configured if isinstance(configured, int) and configured > 0 else int(rollout.max()) + 1
    n_e, n_a = len(factors["event"]), len(agents["agent"])
    # item i of the product is (event-step e, agent a, rollout r) at (e * n_a + a) * n_r + r
    items = np.arange(n_e * n_a * n_r)
    columns: list[tuple[NDArray[np.int64], Sequence[str]]] = []
    for c in by:
        if c in factors or c in agents:
            values, at = (
                (factors[c], items // (n_a * n_r))
                if c in factors
                else (agents[c], items // n_r % n_a)
            )
            names, code = np.unique(np.asarray(values, dtype=object), return_inverse=True)
            columns.append((code.reshape(-1)[at], [str(x) for x in names]))
        elif c == "rollout":
            columns.append((items % n_r, [str(r) for r in range(n_r)]))
        elif c == "run_id":
            columns.append((np.zeros(items.size, np.int64), [header.run_id]))
        else:  # the evidence label or stop reason: the recorded step's
            columns.append(_outcomes(table, rows, c, row_es, agents, n_r, items.size))
    if not columns:
        return Counter({(): int(items.size)})
    dims = tuple(len(n) for _, n in columns)
    flat = np.ravel_multi_index([code for code, _ in columns], dims)
    groups, counts = np.unique(flat, return_counts=True)
    out: Counter[tuple[str, ...]] = Counter()
    named = np.stack(np.unravel_index(groups, dims), axis=1).tolist()
    for g, k in zip(named, counts.tolist(), strict=True):
        out[tuple(n[i] for (_, n), i in zip(columns, g, strict=True))] = k
    return out


def _outcomes(
    table: ScoreTable,
    rows: slice,
    column: str,
    row_es: NDArray[np.int64],
    agents: dict[str, list[str]],
    n_r: int,
    size: int,
) -> tuple[NDArray[np.int64], Sequence[str]]:
    """Per item of the schedule, the outcome ``column`` of the step recording it (the last one
    of a step recorded twice), ``MISSING`` for a step never recorded."""
    codes, names = table.keys[column]
    out = np.full(size, len(names), dtype=np.int64)
    n_a = len(agents["agent"])
    entries: dict[tuple[str, str], list[int]] = {}
    for i, key in enumerate(zip(agents["agent"], agents["setting"], strict=True)):
        entries.setdefault(key, []).append(i)
    agent, setting = table.codes("agent")[rows], table.codes("setting")[rows]
    width = len(table.keys["setting"][1])
    pair, where = np.unique(agent * width + setting, return_inverse=True)
    lists = [
        entries[(table.name("agent", p // width), table.name("setting", p % width))]
        for p in pair.tolist()
    ]
    rollout, value = table.rollout[rows], codes[rows]
    for k in range(max(map(len, lists))):  # an agent listed under two roles: both entries
        a_idx = np.array([x[k] if k < len(x) else -1 for x in lists])[where.reshape(-1)]
        ok = (a_idx >= 0) & (rollout < n_r)
        item = ((row_es * n_a + a_idx) * n_r + rollout)[ok]
        last = item.size - 1 - np.unique(item[::-1], return_index=True)[1]
        out[item[last]] = value[ok][last]
    return out, [*names, MISSING]


@dataclass(frozen=True)
class _Forecast:
    probs: dict[str, float]
    usable: bool
    failure_reason: str | None


@dataclass(frozen=True)
class _Grading:
    truth: str
    labels: tuple[str, ...]
    market_probs: dict[str, float] | None
    market_age_days: float | None


@dataclass(frozen=True)
class StepRow:
    """A step from its columns (``step_row``), with the names of a ``StepRecord``'s, so the
    dashboard's pages and ``event_curves`` take either."""

    run_id: str
    agent: str
    role: str
    setting: str
    event_id: str
    step_index: int
    cutoff: datetime
    rollout: int
    split: str
    category: str
    forecast: _Forecast
    grading: _Grading


def step_row(c: Mapping[str, Any]) -> StepRow:
    """The ``StepRow`` of a step's columns (``TABLE_INPUTS``, ``cutoff``, ``failure_reason`` and
    ``market_age_days``, as Python values)."""
    keys = ("run_id", "agent", "role", "setting", "event_id", "step_index", "cutoff", "rollout")
    return StepRow(
        **{k: c[k] for k in (*keys, "split", "category")},
        forecast=_Forecast(column_probs(c["probs"]) or {}, c["usable"], c["failure_reason"]),
        grading=_Grading(
            c["truth"], tuple(c["labels"]), column_probs(c["market_probs"]), c["market_age_days"]
        ),
    )


Curve = dict[datetime, float]


def event_curves(
    steps: Sequence[StepRecord | StepRow], dataset: Dataset | None
) -> tuple[str, Curve, dict[str, Curve]]:
    """What an event's chart draws of its ``steps``: the label charted ("Yes" of a Yes/No market,
    else the realised outcome), the market's belief in it over time (the dataset's daily
    beliefs, else the belief each step was graded against at its cutoff) and, per agent and
    setting, the mean forecast of it at each cutoff (usable forecasts of forecasting agents)."""
    g = steps[0].grading
    label = "Yes" if tuple(g.labels) == BINARY_LABELS else g.truth
    market: Curve = {}
    if dataset is not None and steps[0].event_id in dataset.beliefs:
        for b in dataset.beliefs[steps[0].event_id]:
            if label in b.probs:
                market[datetime.combine(b.day, time(), UTC)] = b.probs[label]
    else:
        for s in steps:
            mp = s.grading.market_probs
            if mp and label in mp:
                market.setdefault(s.cutoff, mp[label] / (math.fsum(mp.values()) or 1.0))
    forecasts: dict[str, dict[datetime, list[float]]] = defaultdict(lambda: defaultdict(list))
    for s in steps:
        if s.role == "reference" or not s.forecast.usable:
            continue
        total = math.fsum(v for v in s.forecast.probs.values() if v > 0) or 1.0
        p = max(s.forecast.probs.get(label, 0.0), 0.0) / total
        forecasts[f"{s.agent} / {s.setting}"][s.cutoff].append(p)
    means = {k: {t: sum(v) / len(v) for t, v in pts.items()} for k, pts in forecasts.items()}
    return label, market, means


RUN_COLUMNS = (
    *TABLE_INPUTS,
    "cutoff",
    "evidence",
    "stop_reason",
    "market_age_days",
    "cost_usd",
    "input_tokens",
    "output_tokens",
    "model_calls",
    "tool_calls",
    "models",
)
"""The step columns a scorecard reads (``pastcast.runlog.columns_schema``)."""

REPORT_COLUMNS = tuple(
    dict.fromkeys((*RUN_COLUMNS, *EVIDENCE_INPUTS, "failure_reason", "search_calls", "read_calls"))
)
"""The step columns the HTML report reads (its scorecard, tables and figures); the notebooks of
the evidence figures are read from full records, streamed by offset."""

BATCH_ROWS = 65_536
"""Rows of step columns turned into Python objects at once."""


@dataclass(frozen=True)
class RowModels:
    """Per step, the models its episode called: ``codes[i]`` indexes ``sets`` (each distinct
    sorted set once, so a million steps hold a million small integers, not a million lists)."""

    codes: NDArray[np.int64]
    sets: tuple[tuple[str, ...], ...]

    def of(self, rows: NDArray[np.int64]) -> list[str]:
        """The sorted models called by any of ``rows``."""
        return sorted({m for c in np.unique(self.codes[rows]) for m in self.sets[int(c)]})


@dataclass(frozen=True)
class Runs:
    """One or more run logs read together, with the dataset they ran on when known: every
    reader's view of them. Their step columns (``StepColumns``: the logs' columnar companions,
    or a log held in memory, ``from_logs``) give the score table, the schedule, the resources
    and the models in memory bounded by the columns read; the full records an analysis needs
    are streamed by offset, one at a time (``records``)."""

    logs: tuple[StepColumns, ...]
    dataset: Dataset | None = None

    @classmethod
    def from_logs(cls, logs: Iterable[RunLog], dataset: Dataset | None = None) -> Runs:
        """Run logs held in memory (a run in the tests, one just made), as the same type."""
        return cls(tuple(StepColumns.held(log) for log in logs), dataset)

    def where(self, keep: NDArray[np.bool_]) -> Runs:
        """Only the steps of ``keep`` (a flag per step of every log, in log order)."""
        import pyarrow as pa

        logs: list[StepColumns] = []
        start = 0
        for log in self.logs:
            n = log.table.num_rows
            mine = keep[start : start + n]
            logs.append(log if mine.all() else replace(log, table=log.table.filter(pa.array(mine))))
            start += n
        return Runs(tuple(logs), self.dataset)

    def records(self) -> Iterator[StepRecord]:
        """The full record of every step in log order, read by offset one at a time: a reader
        holds one record however long the logs."""
        for log in self.logs:
            yield from log.stream()

    def batches(self, columns: Sequence[str]) -> Iterator[dict[str, list[Any]]]:
        """``columns`` of every log, in log order, as Python lists a batch of rows
        (``BATCH_ROWS``) at a time: memory bounded by a batch, whatever the logs' length."""
        for log in self.logs:
            yield from self.batches_of(log, columns)

    def __len__(self) -> int:
        return sum(log.table.num_rows for log in self.logs)

    def columns(self, names: Sequence[str]) -> pa.Table:
        """``names`` of every log's step columns, one table in log order (Arrow's chunks, no
        copy)."""
        import pyarrow as pa

        tables = [log.table.select(list(names)) for log in self.logs]
        if tables:
            return pa.concat_tables(tables)
        from pastcast.runlog import columns_schema

        return columns_schema().empty_table().select(list(names))

    @cached_property
    def base_table(self) -> ScoreTable:
        """The score table of every step (``table_from_columns``), every row at once."""
        return table_from_columns(self.columns(TABLE_INPUTS))

    @cached_property
    def _table(self) -> ScoreTable:
        table = with_coded_column(self.base_table, "model", *self.models())
        table = with_coded_column(table, "evidence", *self.coded("evidence", "untallied"))
        table = with_coded_column(table, "stop", *self.coded("stop_reason", NO_STOP))
        ages = self.columns(("market_age_days", "market_probs"))
        table = with_coded_column(
            table,
            "market_age",
            *_market_age_bins(
                as_numpy(ages.column("market_age_days")),
                as_numpy(ages.column("market_probs").is_valid(), np.bool_),
            ),
        )
        if self.dataset is not None:
            table = self._with_dataset(table, self.dataset)
        return table

    def models(self) -> tuple[NDArray[np.int64], tuple[str, ...]]:
        """Each step's agent's model (its run header's), coded over the models some step used
        (sorted): looked up once per run, agent and setting."""
        table = self.base_table
        width = len(table.keys["setting"][1])
        span = len(table.keys["agent"][1]) * width
        run = np.repeat(np.arange(len(self.logs)), self.log_sizes())
        pair = table.codes("agent") * width + table.codes("setting")
        keys, at = np.unique(run * span + pair, return_inverse=True)
        of = [_agent_models(log.header) for log in self.logs]
        models = [
            of[k // span].get(
                (table.name("agent", k % span // width), table.name("setting", k % width)),
                NO_MODEL,
            )
            for k in keys.tolist()
        ]
        names, code = np.unique(np.asarray(models, dtype=object), return_inverse=True)
        return code.reshape(-1)[at.reshape(-1)].astype(np.int64), tuple(str(n) for n in names)

    def _with_dataset(self, table: ScoreTable, dataset: Dataset) -> ScoreTable:
        """``table`` with each step's horizon and its market's duration (from the dataset:
        once per event-step and event, not per row)."""
        import pyarrow.compute as pc

        event = table.codes("event")
        cutoff = as_numpy(pc.cast(self.columns(("cutoff",)).column("cutoff"), "int64"), np.int64)
        steps, first, at = np.unique(
            np.stack([event, cutoff], axis=1), axis=0, return_index=True, return_inverse=True
        )
        cutoffs = self.columns(("cutoff",)).column("cutoff").take(first).to_pylist()
        horizons = [
            horizon_of(dataset, table.name("event", int(e)), c)
            for e, c in zip(steps[:, 0].tolist(), cutoffs, strict=True)
        ]
        names, code = np.unique(np.asarray(horizons, dtype=object), return_inverse=True)
        table = with_coded_column(
            table, "horizon", code.reshape(-1)[at.reshape(-1)].astype(np.int64), tuple(names)
        )
        events = table.keys["event"][1]
        durations = [duration_of(dataset, e) for e in events]
        names, code = np.unique(np.asarray(durations, dtype=object), return_inverse=True)
        return with_coded_column(table, "duration", code.reshape(-1)[event], tuple(names))

    def coded(self, column: str, missing: str) -> tuple[NDArray[np.int64], tuple[str, ...]]:
        """A string column of every log as sorted names and a code per row (``missing`` for
        null), coded by Arrow: no Python string per row."""
        return coded(self.columns((column,)).column(column), missing)

    @staticmethod
    def batches_of(log: StepColumns, columns: Sequence[str]) -> Iterator[dict[str, list[Any]]]:
        """As ``batches``, for one log."""
        for batch in log.table.select(list(columns)).to_batches(max_chunksize=BATCH_ROWS):
            yield batch.to_pydict()

    def table(self) -> ScoreTable:
        """The score table of every step with a "model" column (each agent's model, from the
        run headers), the agent's own evidence label and its stop reason, and "horizon" and
        "duration" columns whenever the dataset is known (the application layer checks that a
        grouping by them has the dataset: ``pastcast.app.group_columns``)."""
        return self._table

    def scheduled(self, by: Sequence[str]) -> dict[tuple[str, ...], int]:
        """Forecasts each group of ``by`` was scheduled to make (``_schedule``; docs/reports.md,
        "The schedule")."""
        table = self._table
        counts: Counter[tuple[str, ...]] = Counter()
        start = 0
        for log in self.logs:
            n = log.table.num_rows
            counts += _schedule(table, slice(start, start + n), log.header, self.dataset, by)
            start += n
        return dict(counts)

    def market_ages(self) -> NDArray[np.float64]:
        """Per step, the age in days of its market belief at the cutoff (NaN: none, or not
        recorded)."""
        ages = as_numpy(self.columns(("market_age_days",)).column("market_age_days"))
        return np.asarray(ages, dtype=np.float64)

    def resources(self) -> NDArray[np.float64]:
        """Per step, the resources of ``RESOURCES`` (as ``resource_rows``)."""
        # a missing value (null) reads as NaN, as it does through ``resource_rows``
        table = self.columns(RESOURCES)
        return np.stack([as_numpy(table.column(r)) for r in RESOURCES], axis=1)

    def row_models(self) -> RowModels:
        """Per step, the models its episode called (each step's list is sorted): its models'
        codes in a row, the distinct rows coded by numpy, no Python list per step."""
        import pyarrow.compute as pc

        column = self.columns(("models",)).column("models").combine_chunks()
        model, names = coded(pc.list_flatten(column))
        row = as_numpy(pc.list_parent_indices(column), np.int64)
        count = np.bincount(row, minlength=len(self))
        matrix = np.full((len(self), int(count.max(initial=0))), -1, dtype=np.int64)
        matrix[row, np.arange(row.size) - (np.cumsum(count) - count)[row]] = model
        codes, sets = (
            distinct_rows(list(matrix.T))
            if matrix.shape[1]
            else (np.zeros(len(self), np.int64), np.zeros((1, 0), np.int64))
        )
        return RowModels(codes, tuple(tuple(names[m] for m in s if m >= 0) for s in sets.tolist()))

    def event_ids(self) -> set[str]:
        return set(coded(self.columns(("event_id",)).column("event_id"))[1])

    def take(self, rows: NDArray[np.int64], columns: Sequence[str]) -> dict[str, list[Any]]:
        """``columns`` of ``rows`` (indices into the steps of every log, in log order), as
        Python lists: for the few rows a figure draws."""
        out: dict[str, list[Any]] = {c: [] for c in columns}
        start = 0
        for log in self.logs:
            n = log.table.num_rows
            mine = rows[(rows >= start) & (rows < start + n)] - start
            if mine.size:
                part = log.table.select(list(columns)).take(mine).to_pydict()
                for c in columns:
                    out[c] += part[c]
            start += n
        return out

    def tool_counts(self) -> NDArray[np.float64]:
        """Per step, its search and read calls (two columns), from the step columns."""
        table = self.columns(("search_calls", "read_calls"))
        return np.stack([as_numpy(table.column(c)) for c in table.column_names], axis=1)

    def evidence_index(self) -> tuple[EvidenceRow, ...]:
        """The new-evidence index of the steps' notebooks (``evidence_index``): the steps from
        their columns, and only the notebooks the index counts (``notebook_rows``) from full
        records, streamed by offset one at a time (``StepColumns.stream``)."""

        def notebooks() -> Iterator[Notebook | None]:
            for log in self.logs:
                rows: list[int] = []
                start = 0
                for b in self.batches_of(log, EVIDENCE_INPUTS):
                    rows += [start + i for i in notebook_rows(b)]
                    start += len(b["agent"])
                for record in log.stream(rows):
                    yield record.episode.notebook_out

        return evidence_index_of(self.batches(EVIDENCE_INPUTS), notebooks())

    def log_sizes(self) -> tuple[int, ...]:
        """Steps of each log."""
        return tuple(log.table.num_rows for log in self.logs)
