"""Run logs read for reporting (``Runs``): their step columns, the score table with the report's
extra columns, how many forecasts each group was scheduled to make, and the full records an
analysis needs, streamed by offset.

Run logs do not record when an event resolved, so the forecast horizon (``--by horizon``) and
the market's duration (``--by duration``, Hindcast's short / medium / long) need the dataset the
run used; everything else comes from the logs alone, the agent's own evidence label
(``--by evidence``: strong / weak / none from its tally, Hindcast Table 1), its research
loop's stop reason (``--by stop``) and the age of the market belief it was graded against
(``--by market_age``: ``_MARKET_AGE_EDGES``) included.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pastcast.dataset import Dataset
from pastcast.records import Notebook
from pastcast.runlog import RunHeader, RunLog, StepColumns, StepRecord
from pastcast.scoring import (
    EVIDENCE_INPUTS,
    NO_STOP,
    RESOURCES,
    TABLE_INPUTS,
    EvidenceRow,
    ScoreTable,
    concat_tables,
    duration_bucket,
    event_kind,
    evidence_index_of,
    horizon_bucket,
    market_days,
    notebook_rows,
    table_from_columns,
    with_coded_column,
    with_row_column,
)

__all__ = [
    "GROUP_COLUMNS",
    "NO_MODEL",
    "REPORT_COLUMNS",
    "RUN_COLUMNS",
    "Runs",
    "duration_of",
    "horizon_of",
]

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
"""The bins of ``--by market_age`` in days (``<1d``: the day before the cutoff, as fresh as a
daily belief gets; ``>=30d``: a price from another month); ``none`` for a step without a market
belief, ``unrecorded`` for one of a log written before the age was recorded."""


def _market_age_of(age: float | None, market: bool) -> str:
    """The ``--by market_age`` bin of a step's market age (``market``: it has a belief)."""
    if age is None:
        return "unrecorded" if market else "none"
    return horizon_bucket(age, _MARKET_AGE_EDGES)


_BY_DATASET = ("horizon", "duration")

_NEEDS_DATASET = (
    "--by horizon needs the dataset the run used (--dataset): run logs do not record when an "
    "event resolved"
)


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


def _check_dataset(by: Sequence[str], dataset: Dataset | None) -> None:
    needs = next((c for c in by if c in _BY_DATASET), None)
    if needs is not None and dataset is None:
        raise ValueError(_NEEDS_DATASET.replace("horizon", needs, 1))


def check_columns(by: Iterable[str]) -> None:
    bad = [c for c in by if c not in GROUP_COLUMNS]
    if bad:
        raise ValueError(f"unknown column {bad[0]!r} (expected some of {', '.join(GROUP_COLUMNS)})")


_ScheduleRow = tuple[str, str, str, str, str, str, Sequence[str], int, datetime, int]
"""What the schedule reads of a step: agent, setting, role, event, split, category, labels,
step, cutoff, rollout."""


def _schedule_of(
    header: RunHeader,
    steps: Iterable[_ScheduleRow],
    dataset: Dataset | None,
    outcome: Mapping[tuple[str, str, str, int, int], tuple[str, str, str]] | None = None,
) -> Iterable[dict[str, str]]:
    """The steps the run scheduled. ``outcome``: what each recorded step turned out to be (the
    agent's evidence label, its stop reason, its market age bin: a step never written is in no
    such group)."""
    outcome = outcome or {}
    models = _agent_models(header)
    agents: set[tuple[str, str, str]] = {(a.name, a.setting, a.role) for a in header.agents}
    attrs: dict[str, tuple[str, str, str]] = {}
    cutoffs: dict[tuple[str, int], datetime] = {}
    rollouts_seen = 0
    for agent, setting, role, event_id, split, category, labels, step, cutoff, rollout in steps:
        agents.add((agent, setting, role))
        attrs.setdefault(event_id, (split, category, event_kind(labels)))
        cutoffs.setdefault((event_id, step), cutoff)
        rollouts_seen = max(rollouts_seen, rollout + 1)
    if dataset is not None:  # every step of the events the run took up
        for spec in dataset.steps:
            if spec.event_id in attrs:
                cutoffs.setdefault((spec.event_id, spec.step_index), spec.cutoff)
    configured = header.config.get("rollouts")
    rollouts = configured if isinstance(configured, int) and configured > 0 else rollouts_seen
    run_id = header.run_id
    for (event_id, step), cutoff in cutoffs.items():
        split, category, kind = attrs[event_id]
        horizon = horizon_of(dataset, event_id, cutoff) if dataset is not None else ""
        duration = duration_of(dataset, event_id) if dataset is not None else ""
        for agent, setting, role in agents:
            for rollout in range(rollouts):
                evidence, stop, market_age = outcome.get(
                    (agent, setting, event_id, step, rollout), ("(missing)",) * 3
                )
                yield {
                    "agent": agent,
                    "model": models.get((agent, setting), NO_MODEL),
                    "setting": setting,
                    "role": role,
                    "run_id": run_id,
                    "event": event_id,
                    "split": split,
                    "category": category,
                    "kind": kind,
                    "horizon": horizon,
                    "duration": duration,
                    "evidence": evidence,
                    "stop": stop,
                    "market_age": market_age,
                    "step": str(step),
                    "rollout": str(rollout),
                }


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

REPORT_COLUMNS = tuple(dict.fromkeys((*RUN_COLUMNS, *EVIDENCE_INPUTS, "failure_reason")))
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


def row_models_of(per_step: Iterable[Sequence[str]]) -> RowModels:
    number: dict[tuple[str, ...], int] = {}
    codes = array("q", (number.setdefault(tuple(m), len(number)) for m in per_step))
    return RowModels(
        np.frombuffer(codes, dtype=np.int64) if codes else np.zeros(0, np.int64), tuple(number)
    )


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

    @cached_property
    def base_table(self) -> ScoreTable:
        """The score table of every step (``table_from_columns``), scored a batch at a time
        (``concat_tables``)."""
        return concat_tables([table_from_columns(b) for b in self.batches(TABLE_INPUTS)])

    @cached_property
    def _table(self) -> ScoreTable:
        table = self.base_table
        models: list[str] = []
        for log in self.logs:
            of = _agent_models(log.header)
            for b in self.batches_of(log, ("agent", "setting")):
                models += [of.get(k, NO_MODEL) for k in zip(b["agent"], b["setting"], strict=True)]
        table = with_row_column(table, "model", models)
        table = with_coded_column(table, "evidence", *self.coded("evidence", "untallied"))
        table = with_coded_column(table, "stop", *self.coded("stop_reason", NO_STOP))
        ages: list[str] = []
        for b in self.batches(("market_age_days", "market_probs")):
            ages += [
                _market_age_of(a, m is not None)
                for a, m in zip(b["market_age_days"], b["market_probs"], strict=True)
            ]
        table = with_row_column(table, "market_age", ages)
        if self.dataset is not None:
            ds = self.dataset
            horizons: list[str] = []
            durations: list[str] = []
            for b in self.batches(("event_id", "cutoff")):
                horizons += [
                    horizon_of(ds, e, c) for e, c in zip(b["event_id"], b["cutoff"], strict=True)
                ]
                durations += [duration_of(ds, e) for e in b["event_id"]]
            table = with_row_column(table, "horizon", horizons)
            table = with_row_column(table, "duration", durations)
        return table

    def coded(self, column: str, missing: str) -> tuple[NDArray[np.int64], tuple[str, ...]]:
        """A string column of every log as sorted names and a code per row (``missing`` for
        null), coded by Arrow: no Python string per row."""
        import pyarrow as pa
        import pyarrow.compute as pc

        chunks = [c for log in self.logs for c in log.table.column(column).chunks]
        values = pc.fill_null(pa.chunked_array(chunks, pa.string()), missing)
        encoded = values.combine_chunks().dictionary_encode()
        found = encoded.dictionary.to_pylist()
        names = tuple(sorted(found))
        order = np.array([names.index(n) for n in found], dtype=np.int64)
        indices = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        return order[indices] if indices.size else indices, names

    @staticmethod
    def batches_of(log: StepColumns, columns: Sequence[str]) -> Iterator[dict[str, list[Any]]]:
        """As ``batches``, for one log."""
        for batch in log.table.select(list(columns)).to_batches(max_chunksize=BATCH_ROWS):
            yield batch.to_pydict()

    def table(self, by: Sequence[str] = ()) -> ScoreTable:
        """The score table of every step with a "model" column (each agent's model, from the
        run headers), the agent's own evidence label and its stop reason, and "horizon" and
        "duration" columns whenever the dataset is known (``by`` is checked: horizon needs the
        dataset)."""
        check_columns(by)
        _check_dataset(by, self.dataset)
        return self._table

    def scheduled(self, by: Sequence[str]) -> dict[tuple[str, ...], int]:
        """Forecasts each group of ``by`` was scheduled to make.

        A run schedules every agent of its header (and any agent it recorded) at every event-step
        for each rollout. The event-steps are those of the events the run recorded: all of their
        steps in the dataset when it is known, otherwise the event-steps any agent recorded (a
        step no agent reached is then not counted).
        """
        check_columns(by)
        _check_dataset(by, self.dataset)
        counts: Counter[tuple[str, ...]] = Counter()
        for log in self.logs:
            asks = bool({"evidence", "stop", "market_age"} & set(by))
            outcomes = _OUTCOME_COLUMNS if asks else ()
            c = log.table.select([*_SCHEDULE_COLUMNS, *outcomes]).to_pydict()
            rows = zip(*(c[k] for k in _SCHEDULE_COLUMNS), strict=True)
            # what each recorded step turned out to be, only when a grouping asks
            outcome: dict[tuple[str, str, str, int, int], tuple[str, str, str]] = {}
            if outcomes:
                keys = zip(*(c[k] for k in _KEY_COLUMNS), strict=True)
                stops = (stop or NO_STOP for stop in c["stop_reason"])
                ages = (
                    _market_age_of(a, m is not None)
                    for a, m in zip(c["market_age_days"], c["market_probs"], strict=True)
                )
                outcome = dict(zip(keys, zip(c["evidence"], stops, ages, strict=True), strict=True))
            for key in _schedule_of(log.header, rows, self.dataset, outcome):
                counts[tuple(key[c] for c in by)] += 1
        return dict(counts)

    def resources(self) -> NDArray[np.float64]:
        """Per step, the resources of ``pastcast.scoring.RESOURCES`` (as ``resource_use``)."""
        use = np.empty((len(self), len(RESOURCES)), dtype=np.float64)
        start = 0
        for log in self.logs:
            n = log.table.num_rows
            for j, r in enumerate(RESOURCES):
                # a missing value (null) reads as NaN, as it does through ``resource_use``
                column = log.table.column(r).to_numpy(zero_copy_only=False)
                use[start : start + n, j] = np.asarray(column, dtype=np.float64)
            start += n
        return use

    def market_ages(self) -> NDArray[np.float64]:
        """Per step, the age in days of its market belief at the cutoff (NaN: none, or not
        recorded)."""
        parts = [
            np.asarray(log.table.column("market_age_days").to_numpy(zero_copy_only=False), float)
            for log in self.logs
        ]
        return np.concatenate(parts) if parts else np.zeros(0)

    def row_models(self) -> RowModels:
        """Per step, the models its episode called."""
        return row_models_of(m for b in self.batches(("models",)) for m in b["models"])

    def event_ids(self) -> set[str]:
        return {e for b in self.batches(("event_id",)) for e in b["event_id"]}

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

    def memory_on_tool_calls(self) -> Iterator[tuple[str, list[str]]]:
        """Each memory-on agent forecast's agent and the names of the tools it called, from the
        full records of those rows only, streamed by offset (``capture_gain``'s tool counts)."""
        for log in self.logs:
            rows: list[int] = []
            start = 0
            for b in self.batches_of(log, ("setting", "role")):
                pairs = zip(b["setting"], b["role"], strict=True)
                rows += [start + i for i, (s, r) in enumerate(pairs) if (s, r) == _ON_AGENT]
                start += len(b["role"])
            for record in log.stream(rows):
                yield record.agent, [c.name for c in record.episode.tool_calls]

    def log_sizes(self) -> tuple[int, ...]:
        """Steps of each log."""
        return tuple(log.table.num_rows for log in self.logs)


_ON_AGENT = ("memory_on", "agent")

_KEY_COLUMNS = ("agent", "setting", "event_id", "step_index", "rollout")
"""The step key's columns (``pastcast.records.StepKey``)."""

_OUTCOME_COLUMNS = ("evidence", "stop_reason", "market_age_days", "market_probs")
"""The step columns of what a recorded step turned out to be (``scheduled``)."""

_SCHEDULE_COLUMNS = (
    "agent",
    "setting",
    "role",
    "event_id",
    "split",
    "category",
    "labels",
    "step_index",
    "cutoff",
    "rollout",
)
