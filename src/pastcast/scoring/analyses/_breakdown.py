"""Breakdowns by event attributes (topic, category, coverage bin, horizon) and Hindcast's
per-topic recoveries and regressions between two pipelines."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from pastcast.scoring._table import ScoreTable


def with_event_column(
    table: ScoreTable, name: str, by_event: Mapping[str, str], missing: str = "unknown"
) -> ScoreTable:
    """A table with an extra key column derived from the event (e.g. topic, coverage bin), so
    ``summarize(table, by=("agent", name))`` gives the breakdown."""
    if name in table.keys or name in ("step", "rollout"):
        raise ValueError(f"with_event_column: column {name!r} already exists")
    codes, events = table.keys["event"]
    labels = [by_event.get(e, missing) for e in events]
    names, inv = np.unique(np.asarray(labels, dtype=object).astype(str), return_inverse=True)
    col = inv.astype(np.int64)[codes] if codes.size else codes
    keys = {**table.keys, name: (col, tuple(str(n) for n in names))}
    return replace(table, keys=keys)


def horizon_bucket(days: float, edges: Sequence[float] = (7, 30, 90)) -> str:
    """Label a forecast horizon in days: e.g. '<7d', '7-30d', '30-90d', '>=90d'."""
    prev: float | None = None
    for edge in edges:
        if days < edge:
            return f"<{edge:g}d" if prev is None else f"{prev:g}-{edge:g}d"
        prev = edge
    return f">={edges[-1]:g}d"


@dataclass(frozen=True)
class RecoveryCount:
    topic: str
    n: int
    recoveries: int
    """Pipeline A right where B was wrong."""
    regressions: int
    """Pipeline A wrong where B was right."""
    markets: int = 0
    """Distinct markets among the pairs (where the analysis counts them)."""

    @property
    def net(self) -> int:
        return self.recoveries - self.regressions


def recoveries_regressions(
    correct_a: ArrayLike, correct_b: ArrayLike, topic: Sequence[str]
) -> tuple[RecoveryCount, ...]:
    """Per-topic recoveries minus regressions of pipeline A against B on paired markets."""
    a = np.asarray(correct_a, dtype=bool)
    b = np.asarray(correct_b, dtype=bool)
    t = np.asarray(topic, dtype=object).astype(str)
    if not (a.shape == b.shape == t.shape) or a.ndim != 1:
        raise ValueError("recoveries_regressions: inputs must be 1-D and of equal length")
    names, inv = np.unique(t, return_inverse=True)
    rec = np.bincount(inv, a & ~b, names.size).astype(int)
    reg = np.bincount(inv, ~a & b, names.size).astype(int)
    n = np.bincount(inv, minlength=names.size)
    out = [
        RecoveryCount(str(names[i]), int(n[i]), int(rec[i]), int(reg[i])) for i in range(names.size)
    ]
    return tuple(sorted(out, key=lambda r: (-r.net, r.topic)))
