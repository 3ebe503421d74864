"""The dashboard's index of run logs: built once at start-up, then every page is a lookup.

Run logs are read through their columnar companions (``read_step_columns``: the scalar columns of
each step, never its messages), and a full record is read by its byte offset only when a
trajectory page shows it. The index keeps the columns a page shows (an Arrow table), the score
table (every log's steps scored at once from their columns), per-step resources
and the model of each agent, the steps of each event and of each chain (one agent, setting,
event and rollout of a run) as sorted arrays, so no page scans the logs. Leaderboards are
computed per filter on first request and kept.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from pastcast.dataset import Dataset
from pastcast.reports._leaderboard import ranked
from pastcast.reports._runs import NO_MODEL, Runs, StepRow, step_row
from pastcast.reports._scorecard import BOOTSTRAP_DRAWS, BOOTSTRAP_SEED, market_age_text
from pastcast.reports.dashboard._store import BOARD_VERSION, board_path, load_board, save_board
from pastcast.runlog import StepRecord, header_path, read_step_columns
from pastcast.scoring import TABLE_INPUTS, GroupSummary, ScoreTable, metric_list, summarize
from pastcast.scoring.analyses import RESOURCES, group_rows

if TYPE_CHECKING:
    import pyarrow as pa

Ints = NDArray[np.int64]
FILTERS = ("split", "setting", "model", "category")
"""Leaderboard and event-list filters (query parameters)."""
_CACHE = 64
INDEX_COLUMNS = (
    *TABLE_INPUTS,
    "cutoff",
    "failure_reason",
    "market_age_days",
    *RESOURCES,
    "offset",
    "length",
)
"""The step columns the dashboard reads (``pastcast.runlog.columns_schema``)."""


def find_run_logs(paths: Sequence[str | Path]) -> list[Path]:
    """The run logs named by ``paths``: a step file itself, or every step file with its header
    beside it under a directory (recursively). Raises ``ValueError`` naming a path without one."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_file():
            out.append(p)
            continue
        if not p.is_dir():
            raise ValueError(f"{p}: no such run directory or run log")
        found = sorted(
            h.with_name(h.name.removesuffix(".header.json") + ".jsonl")
            for h in p.rglob("*.header.json")
        )
        found = [f for f in found if f.is_file() and header_path(f).is_file()]
        if not found:
            raise ValueError(f"{p}: no run log (a .jsonl step file with its .header.json) in it")
        out.extend(found)
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class Filters:
    split: str = ""
    setting: str = ""
    model: str = ""
    category: str = ""

    def query(self) -> dict[str, str]:
        return {k: v for k, v in vars(self).items() if v}


@dataclass(frozen=True)
class LeaderRow:
    summary: GroupSummary
    model: str
    cost: float
    """Mean cost (USD) per recorded forecast."""
    tool_calls: float
    tokens: float


class RunIndex:
    """Everything the dashboard shows, indexed once: ``runs`` read with ``INDEX_COLUMNS`` at
    least; the unfiltered leaderboard is kept beside the first log (``_store``)."""

    def __init__(self, runs: Runs) -> None:
        self.logs = runs.logs
        self.dataset = runs.dataset
        prints = [log.fingerprint() for log in self.logs]
        # the unfiltered leaderboard is stored while every log and the metrics are as they were
        metric_names = [m.name for m in metric_list()]
        self._board_key = (
            hashlib.sha256(json.dumps([BOARD_VERSION, metric_names, prints]).encode()).hexdigest()
            if prints and None not in prints
            else None
        )
        self.notes: tuple[str, ...] = ()
        self.sizes = sizes = runs.log_sizes()
        self.columns: pa.Table = runs.columns(INDEX_COLUMNS)
        self.run_of: Ints = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
        self.table: ScoreTable = runs.base_table
        self.metrics = self.table.metrics("uniform")
        self.offsets: Ints = self.columns.column("offset").to_numpy().astype(np.int64)
        self.lengths: Ints = self.columns.column("length").to_numpy().astype(np.int64)
        self.resources = dict(zip(RESOURCES, runs.resources().T, strict=True))
        self.ages = runs.market_ages()
        self.model_codes, self.model_names = runs.models()
        event_codes = self.table.codes("event")
        order = np.argsort(event_codes, kind="stable")
        self._event_order = order
        self._event_bounds = np.searchsorted(
            event_codes[order], np.arange(len(self.event_names) + 1)
        )
        self._event_code = {name: k for k, name in enumerate(self.event_names)}
        self._chains()
        self._lock = threading.Lock()
        self._boards: OrderedDict[Filters, tuple[LeaderRow, ...]] = OrderedDict()

    def _chains(self) -> None:
        """Each chain's steps by step index, as one sorted array and each row's place in it."""
        t = self.table
        order = np.lexsort(
            (
                np.arange(len(t)),
                t.step,
                t.rollout,
                t.codes("event"),
                t.codes("setting"),
                t.codes("agent"),
                self.run_of,
            )
        )
        keys = np.stack(
            [self.run_of, t.codes("agent"), t.codes("setting"), t.codes("event"), t.rollout]
        )[:, order]
        new = np.ones(len(t), dtype=bool)
        if len(t) > 1:
            new[1:] = (keys[:, 1:] != keys[:, :-1]).any(axis=0)
        starts = np.flatnonzero(new)
        group = np.cumsum(new) - 1
        ends = np.append(starts[1:], len(t))
        self._chain_order = order
        self._chain_start = np.empty(len(t), dtype=np.int64)
        self._chain_end = np.empty(len(t), dtype=np.int64)
        self._chain_start[order] = starts[group]
        self._chain_end[order] = ends[group]

    @classmethod
    def load(cls, paths: Sequence[str | Path], dataset: Dataset | None = None) -> RunIndex:
        logs = tuple(read_step_columns(p, list(INDEX_COLUMNS)) for p in find_run_logs(paths))
        return cls(Runs(logs, dataset))

    def record(self, step_id: int) -> StepRecord:
        """The full record of a step: read by its byte offset (one line of the step file)."""
        log = self.logs[int(self.run_of[step_id])]
        return log.record(int(self.offsets[step_id]), int(self.lengths[step_id]))

    def records(self, step_ids: Sequence[int] | range) -> Iterator[StepRecord]:
        """Full records, one at a time."""
        for i in step_ids:
            yield self.record(int(i))

    def rows(self, step_ids: Sequence[int] | Ints) -> list[StepRow]:
        """The steps as the lists show them, from the columns."""
        import pyarrow as pa

        taken = self.columns.take(pa.array(np.asarray(step_ids, dtype=np.int64)))
        return [step_row(c) for c in taken.to_pylist()]

    def event_sorted(self, event_id: str) -> Ints | None:
        """The steps of an event by step index, agent, setting and rollout (None: no such
        event)."""
        rows = self.event_rows(event_id)
        if rows is None:
            return None
        t = self.table
        return rows[
            np.lexsort(
                (
                    rows,
                    t.rollout[rows],
                    t.codes("setting")[rows],
                    t.codes("agent")[rows],
                    t.step[rows],
                )
            )
        ]

    def __len__(self) -> int:
        return len(self.table)

    @property
    def event_names(self) -> tuple[str, ...]:
        return tuple(self.table.keys["event"][1])

    def choices(self, column: str) -> tuple[str, ...]:
        """The values a filter can take."""
        if column == "model":
            return tuple(n for n in self.model_names if n != NO_MODEL)
        return tuple(n for n in self.table.keys[column][1] if n)

    def _is(self, column: str, value: str) -> NDArray[np.bool_]:
        """The steps whose ``column`` (a key column, or the agent's ``model``) is ``value``."""
        codes, names = (
            (self.model_codes, self.model_names) if column == "model" else self.table.keys[column]
        )
        return codes == names.index(value) if value in names else np.zeros(len(self), bool)

    def mask(self, f: Filters) -> NDArray[np.bool_]:
        m = np.ones(len(self), dtype=bool)
        for column, value in f.query().items():
            m &= self._is(column, value)
        return m

    def leaderboard(self, f: Filters, bootstrap: int = BOOTSTRAP_DRAWS) -> tuple[LeaderRow, ...]:
        """Agents and settings ranked by mean Brier (references last) over the filtered steps,
        with the intervals ``pastcast score`` gives (the same draws and seed); computed once per
        filter."""
        with self._lock:
            if f in self._boards:
                self._boards.move_to_end(f)
                return self._boards[f]
        stored = self._stored_board(f, bootstrap)
        if stored is not None:
            with self._lock:
                self._boards[f] = stored
            return stored
        rows = np.flatnonzero(self.mask(f))
        out: list[LeaderRow] = []
        if rows.size:
            sub = self.table.take(rows)
            by = ("agent", "setting")
            summaries = {
                s.group: s for s in summarize(sub, by, bootstrap=bootstrap, seed=BOOTSTRAP_SEED)
            }
            for names, local in group_rows(sub, by):
                g = rows[local]
                codes = np.unique(self.model_codes[g])
                out.append(
                    LeaderRow(
                        summary=summaries[names],
                        model=", ".join(self.model_names[c] for c in codes),
                        cost=float(self.resources["cost_usd"][g].mean()),
                        tool_calls=float(self.resources["tool_calls"][g].mean()),
                        tokens=float(
                            (
                                self.resources["input_tokens"][g]
                                + self.resources["output_tokens"][g]
                            ).mean()
                        ),
                    )
                )
            out = ranked(out, lambda r: r.summary)
        board = tuple(out)
        if self._board_key is not None and f == Filters():
            rest = [{k: v for k, v in vars(r).items() if k != "summary"} for r in board]
            save_board(
                board_path(self.logs[0].path),
                f"{self._board_key}:{bootstrap}",
                [(r.summary, x) for r, x in zip(board, rest, strict=True)],
            )
        with self._lock:
            self._boards[f] = board
            while len(self._boards) > _CACHE:
                self._boards.popitem(last=False)
        return board

    def _stored_board(self, f: Filters, bootstrap: int) -> tuple[LeaderRow, ...] | None:
        """The unfiltered leaderboard as stored beside the first log for these very logs."""
        if self._board_key is None or f != Filters():
            return None
        rows = load_board(board_path(self.logs[0].path), f"{self._board_key}:{bootstrap}")
        return None if rows is None else tuple(LeaderRow(s, **x) for s, x in rows)

    def market_age(self, f: Filters) -> str:
        """How old the market beliefs of the filtered steps were at their cutoffs, in words."""
        ages = self.ages[self.mask(f)]
        return market_age_text(ages[np.isfinite(ages)].tolist())

    def events(self, f: Filters) -> tuple[str, ...]:
        """Events with a step passing the filter, in name order."""
        codes = np.unique(self.table.codes("event")[self.mask(f)])
        return tuple(self.event_names[c] for c in codes)

    def event_rows(self, event_id: str) -> Ints | None:
        """The steps of an event in row order (None: no such event)."""
        k = self._event_code.get(event_id)
        if k is None:
            return None
        return self._event_order[self._event_bounds[k] : self._event_bounds[k + 1]]

    def group_rows(self, agent: str, setting: str, f: Filters) -> Ints:
        """The steps of one agent and setting passing the filter."""
        return np.flatnonzero(
            self.mask(f) & self._is("agent", agent) & self._is("setting", setting)
        )

    def chain(self, step_id: int) -> list[int]:
        """The steps of the same run, agent, setting, event and rollout, by step index."""
        a, b = int(self._chain_start[step_id]), int(self._chain_end[step_id])
        return [int(i) for i in self._chain_order[a:b]]

    def model_of(self, step_id: int) -> str:
        return self.model_names[int(self.model_codes[step_id])]

    def title_of(self, event_id: str) -> str:
        """The event's title from the dataset ("" without one)."""
        if self.dataset is None:
            return ""
        try:
            return self.dataset.event(event_id).title
        except KeyError:
            return ""
