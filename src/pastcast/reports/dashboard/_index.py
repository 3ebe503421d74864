"""The dashboard's index of run logs: read once at start-up, then every page is a lookup.

Run logs are read with ``read_run_log``; the index keeps the step records (a trajectory page
shows one whole), the score table, per-step resources and the model of each agent, the steps of
each event and of each chain (one agent, setting, event and rollout of a run), so no page scans
the logs. Leaderboards are computed per filter on first request and kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from pastcast.dataset import Dataset
from pastcast.reports._runs import NO_MODEL, agent_models
from pastcast.runlog import RunLog, StepRecord, header_path, read_run_log
from pastcast.scoring import (
    RESOURCES,
    GroupSummary,
    ScoreTable,
    group_rows,
    resource_use,
    summarize,
    table_from_records,
)

__all__ = ["FILTERS", "Filters", "LeaderRow", "RunIndex", "find_run_logs"]

Ints = NDArray[np.int64]
FILTERS = ("split", "setting", "model", "category")
"""Leaderboard and event-list filters (query parameters)."""
_CACHE = 64


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
    """Everything the dashboard shows, indexed once."""

    def __init__(self, logs: Sequence[RunLog], dataset: Dataset | None = None) -> None:
        self.logs = tuple(logs)
        self.dataset = dataset
        steps: list[StepRecord] = []
        run_of: list[int] = []
        for i, log in enumerate(self.logs):
            steps.extend(log.steps)
            run_of.extend([i] * len(log.steps))
        self.steps: tuple[StepRecord, ...] = tuple(steps)
        self.run_of = np.asarray(run_of, dtype=np.int64)
        self.table: ScoreTable = table_from_records(self.steps)
        self.metrics = self.table.metrics("uniform")
        models = [agent_models(log) for log in self.logs]
        model_names = [
            models[run_of[j]].get((s.agent, s.setting), NO_MODEL) for j, s in enumerate(steps)
        ]
        names, inv = np.unique(
            np.asarray(model_names or [NO_MODEL], dtype=object), return_inverse=True
        )
        self.model_names: tuple[str, ...] = tuple(str(n) for n in names)
        self.model_codes: Ints = inv.reshape(-1).astype(np.int64)[: len(steps)]
        use = [resource_use(s) for s in steps]
        self.resources = {
            r: np.asarray([u[r] for u in use], dtype=np.float64).reshape(len(steps))
            for r in RESOURCES
        }
        event_codes = self.table.codes("event")
        order = np.argsort(event_codes, kind="stable")
        bounds = np.searchsorted(event_codes[order], np.arange(len(self.event_names) + 1))
        self._event_rows = {
            name: order[bounds[k] : bounds[k + 1]] for k, name in enumerate(self.event_names)
        }
        chains: dict[tuple[int, str, str, str, int], list[int]] = {}
        for j, s in enumerate(steps):
            chains.setdefault((run_of[j], s.agent, s.setting, s.event_id, s.rollout), []).append(j)
        self._chain_of: dict[int, list[int]] = {}
        for ids in chains.values():
            ids.sort(key=lambda j: steps[j].step_index)
            for j in ids:
                self._chain_of[j] = ids
        self._lock = threading.Lock()
        self._boards: OrderedDict[Filters, tuple[LeaderRow, ...]] = OrderedDict()

    @classmethod
    def load(cls, paths: Sequence[str | Path], dataset: Dataset | None = None) -> RunIndex:
        return cls([read_run_log(p) for p in find_run_logs(paths)], dataset)

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def event_names(self) -> tuple[str, ...]:
        return tuple(self.table.keys["event"][1])

    def choices(self, column: str) -> tuple[str, ...]:
        """The values a filter can take."""
        if column == "model":
            return tuple(n for n in self.model_names if n != NO_MODEL)
        return tuple(n for n in self.table.keys[column][1] if n)

    def mask(self, f: Filters) -> NDArray[np.bool_]:
        m = np.ones(len(self), dtype=bool)
        for column in ("split", "setting", "category"):
            value = getattr(f, column)
            if value:
                names = self.table.keys[column][1]
                m &= (self.table.codes(column) == names.index(value)) if value in names else False
        if f.model:
            m &= (
                (self.model_codes == self.model_names.index(f.model))
                if f.model in self.model_names
                else False
            )
        return m

    def leaderboard(self, f: Filters, bootstrap: int = 1000) -> tuple[LeaderRow, ...]:
        """Agents and settings ranked by mean Brier (references last) over the filtered steps;
        computed once per filter."""
        with self._lock:
            if f in self._boards:
                self._boards.move_to_end(f)
                return self._boards[f]
        rows = np.flatnonzero(self.mask(f))
        out: list[LeaderRow] = []
        if rows.size:
            sub = self.table.take(rows)
            by = ("agent", "setting")
            summaries = {s.group: s for s in summarize(sub, by, bootstrap=bootstrap)}
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
            agents = sorted(
                (r for r in out if r.summary.role != "reference"),
                key=lambda r: r.summary.metrics["brier"].mean,
            )
            out = [*agents, *(r for r in out if r.summary.role == "reference")]
        board = tuple(out)
        with self._lock:
            self._boards[f] = board
            while len(self._boards) > _CACHE:
                self._boards.popitem(last=False)
        return board

    def events(self, f: Filters) -> tuple[str, ...]:
        """Events with a step passing the filter, in name order."""
        codes = np.unique(self.table.codes("event")[self.mask(f)])
        return tuple(self.event_names[c] for c in codes)

    def event_rows(self, event_id: str) -> Ints | None:
        """The steps of an event (None: no such event)."""
        return self._event_rows.get(event_id)

    def group_rows(self, agent: str, setting: str, f: Filters) -> Ints:
        """The steps of one agent and setting passing the filter."""
        m = self.mask(f)
        for column, value in (("agent", agent), ("setting", setting)):
            names = self.table.keys[column][1]
            m &= (self.table.codes(column) == names.index(value)) if value in names else False
        return np.flatnonzero(m)

    def chain(self, step_id: int) -> list[int]:
        """The steps of the same run, agent, setting, event and rollout, by step index."""
        return self._chain_of.get(step_id, [step_id])

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
