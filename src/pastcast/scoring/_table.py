"""A columnar table of per-forecast scores, so aggregation over millions of rows is vectorised.

Rows keep the ingredients of every score (probability of the truth, number of offered labels,
the market's probabilities) rather than one fixed fallback, so each aggregation can choose how
unusable forecasts count (uniform, worst case, or excluded) without re-reading the logs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pastcast.records import BINARY_LABELS
from pastcast.runlog import StepRecord, column_probs
from pastcast.scoring._metrics import ScoreColumns, metric_list
from pastcast.scoring._multiclass import (
    _COLUMNWISE,
    LOG_FLOOR,
    TIE_TOLERANCE,
    accuracy,
    brier,
    brier_rows,
    normalize,
)

__all__ = [
    "KEY_COLUMNS",
    "TABLE_INPUTS",
    "Convention",
    "RowNames",
    "ScoreTable",
    "concat_tables",
    "event_kind",
    "score_matrix",
    "table_from_columns",
    "table_from_records",
]

Convention = Literal["uniform", "worst", "exclude"]
KEY_COLUMNS = ("agent", "setting", "role", "run_id", "event", "split", "category", "kind")

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]
Bools = NDArray[np.bool_]


@dataclass(frozen=True)
class ScoreTable:
    """Per-forecast scores of usable forecasts plus what is needed to score the unusable ones.

    ``keys`` maps a key column (agent, setting, role, run_id, event, split, category, kind) to
    integer codes and the names they stand for. Score columns of unusable rows hold NaN until a
    convention fills them.
    """

    keys: Mapping[str, tuple[Ints, Sequence[str]]]
    step: Ints
    rollout: Ints
    usable: Bools
    n_labels: Ints
    brier: Floats
    accuracy: Floats
    p_truth: Floats
    market_truth: Floats
    """The market's probability of the truth (NaN when unavailable)."""
    market_brier: Floats
    """The market vector's multiclass Brier score (NaN when unavailable)."""
    truth_first: Bools
    """The truth is the first offered label ("Yes" of a binary market): orients the binary
    metrics (calibration, Murphy) of two-outcome forecasts on one label."""
    floor: float = LOG_FLOOR
    meta: Mapping[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.step.size)

    def take(self, rows: ArrayLike) -> ScoreTable:
        """The table of ``rows`` (indices or a boolean mask); key names are kept, so codes mean
        the same in both tables."""
        r = np.asarray(rows)
        return replace(
            self,
            keys={c: (codes[r], names) for c, (codes, names) in self.keys.items()},
            **{name: getattr(self, name)[r] for name in _ROW_COLUMNS},
        )

    def codes(self, column: str) -> Ints:
        if column == "step":
            return self.step
        if column == "rollout":
            return self.rollout
        if column not in self.keys:
            raise KeyError(f"unknown column {column!r} (expected one of {sorted(self.keys)})")
        return self.keys[column][0]

    def name(self, column: str, code: int) -> str:
        if column in ("step", "rollout"):
            return str(code)
        return self.keys[column][1][code]

    def columns(self, convention: Convention = "uniform") -> ScoreColumns:
        """The metrics' inputs, unusable rows filled by ``convention`` (NaN where excluded)."""
        bad = ~self.usable
        k = self.n_labels.astype(np.float64)
        b, a, p = self.brier.copy(), self.accuracy.copy(), self.p_truth.copy()
        if convention == "uniform":
            b[bad], a[bad], p[bad] = 1.0 - 1.0 / k[bad], 1.0 / k[bad], 1.0 / k[bad]
        elif convention == "worst":
            b[bad], a[bad], p[bad] = 2.0, 0.0, 0.0
        elif convention == "exclude":
            b[bad] = a[bad] = p[bad] = np.nan
        else:
            raise ValueError(f"unknown convention {convention!r}")
        return ScoreColumns(
            b, a, p, self.market_truth, self.market_brier, self.n_labels, self.floor
        )

    def truth_prob(self, convention: Convention = "uniform") -> Floats:
        """The probability of the truth, unusable rows filled by ``convention``."""
        return self.columns(convention).p_truth

    def metrics(self, convention: Convention = "uniform") -> dict[str, Floats]:
        """Every registered metric's column, unusable rows filled by ``convention`` (NaN where
        excluded or undefined)."""
        cols = self.columns(convention)
        return {m.name: m.rows(cols) for m in metric_list()}


_ROW_COLUMNS = tuple(f.name for f in fields(ScoreTable) if f.name not in ("keys", "floor", "meta"))
"""The table's columns of one value per row."""


def event_kind(labels: Sequence[str]) -> str:
    """ "binary" for a Yes/No market's labels, "multi" otherwise (the "kind" column)."""
    return "binary" if tuple(labels) == BINARY_LABELS else "multi"


def _codes(values: Sequence[str]) -> tuple[Ints, tuple[str, ...]]:
    names, inv = np.unique(np.asarray(values, dtype=object).astype(str), return_inverse=True)
    return inv.astype(np.int64), tuple(str(n) for n in names)


_Row = tuple[
    tuple[str, ...],  # the key columns' values, in KEY_COLUMNS order
    int,  # step
    int,  # rollout
    bool,  # usable
    Mapping[str, float],  # the forecast's probabilities
    str,  # truth
    Sequence[str],  # labels
    Mapping[str, float] | None,  # the market's probabilities
]


def _table_of_rows(rows: Iterable[_Row]) -> ScoreTable:
    """The score table of forecasts given by their ingredients: one rule for every reader, so a
    log scored from its records and from its columns gives the same table to the last bit."""
    cols: dict[str, list[str]] = {c: [] for c in KEY_COLUMNS}
    step: list[int] = []
    rollout: list[int] = []
    usable: list[bool] = []
    n_labels: list[int] = []
    br: list[float] = []
    acc: list[float] = []
    pt: list[float] = []
    mt: list[float] = []
    mb: list[float] = []
    first: list[bool] = []
    for keys, step_index, rollout_index, ok, probs, truth, labels, market in rows:
        for c, v in zip(KEY_COLUMNS, keys, strict=True):
            cols[c].append(v)
        first.append(bool(labels) and labels[0] == truth)
        step.append(step_index)
        rollout.append(rollout_index)
        n_labels.append(len(set(labels) | {truth}))
        p = normalize(dict(probs)) if ok else None
        usable.append(p is not None)
        br.append(brier(p, truth) if p else math.nan)
        acc.append(accuracy(p, truth) if p else math.nan)
        pt.append(p.get(truth, 0.0) if p else math.nan)
        q = normalize(dict(market)) if market is not None else None
        mt.append(q.get(truth, math.nan) if q else math.nan)
        mb.append(brier(q, truth) if q else math.nan)
    f = np.asarray
    return ScoreTable(
        keys={c: _codes(v) for c, v in cols.items()},
        step=f(step, dtype=np.int64),
        rollout=f(rollout, dtype=np.int64),
        usable=f(usable, dtype=bool),
        n_labels=f(n_labels, dtype=np.int64),
        brier=f(br, dtype=np.float64),
        accuracy=f(acc, dtype=np.float64),
        p_truth=f(pt, dtype=np.float64),
        market_truth=f(mt, dtype=np.float64),
        market_brier=f(mb, dtype=np.float64),
        truth_first=f(first, dtype=bool),
    )


def table_from_records(records: Iterable[StepRecord]) -> ScoreTable:
    """Re-score logged steps from their forecast and grading (stored scores are ignored)."""
    return _table_of_rows(
        (
            (
                r.agent,
                r.setting,
                r.role,
                r.run_id,
                r.event_id,
                r.split,
                r.category,
                event_kind(r.grading.labels),
            ),
            r.step_index,
            r.rollout,
            r.forecast.usable,
            r.forecast.probs,
            r.grading.truth,
            r.grading.labels,
            r.grading.market_probs,
        )
        for r in records
    )


TABLE_INPUTS = (
    "agent",
    "setting",
    "role",
    "run_id",
    "event_id",
    "split",
    "category",
    "step_index",
    "rollout",
    "usable",
    "probs",
    "truth",
    "labels",
    "market_probs",
)
"""The step columns ``table_from_columns`` reads (``pastcast.runlog.columns_schema``)."""


def concat_tables(parts: Sequence[ScoreTable]) -> ScoreTable:
    """The rows of ``parts`` one after another, as one table of all the rows would hold them:
    each key column's names are the sorted union of the parts' and its codes renumbered to
    them. Lets a reader score a long log a batch of rows at a time."""
    if not parts:
        return table_from_columns({c: [] for c in TABLE_INPUTS})
    if len(parts) == 1:
        return parts[0]
    keys: dict[str, tuple[Ints, tuple[str, ...]]] = {}
    for column in parts[0].keys:
        names = sorted(set().union(*(t.keys[column][1] for t in parts)))
        number = {n: i for i, n in enumerate(names)}
        codes = [
            np.asarray([number[n] for n in t.keys[column][1]], dtype=np.int64)[t.keys[column][0]]
            if len(t)
            else np.zeros(0, dtype=np.int64)
            for t in parts
        ]
        keys[column] = (np.concatenate(codes), tuple(names))

    rows: dict[str, Any] = {n: np.concatenate([getattr(t, n) for t in parts]) for n in _ROW_COLUMNS}
    return replace(parts[0], keys=keys, **rows)


def table_from_columns(columns: Mapping[str, Sequence[Any]]) -> ScoreTable:
    """Re-score logged steps from their step columns (``TABLE_INPUTS``, as Python lists, e.g.
    ``pastcast.runlog.read_step_columns(...).table.to_pydict()``): the same table as
    ``table_from_records`` over the same records, to the last bit."""
    c = columns
    labels: Sequence[Sequence[str]] = c["labels"]
    return _table_of_rows(
        (
            (
                c["agent"][i],
                c["setting"][i],
                c["role"][i],
                c["run_id"][i],
                c["event_id"][i],
                c["split"][i],
                c["category"][i],
                event_kind(labels[i]),
            ),
            c["step_index"][i],
            c["rollout"][i],
            c["usable"][i],
            column_probs(c["probs"][i]) or {},
            c["truth"][i],
            labels[i],
            column_probs(c["market_probs"][i]),
        )
        for i in range(len(c["agent"]))
    )


def score_matrix(
    probs: ArrayLike,
    truth: ArrayLike,
    market: ArrayLike | None = None,
    keys: Mapping[str, tuple[Ints, Sequence[str]]] | None = None,
    step: ArrayLike | None = None,
    rollout: ArrayLike | None = None,
) -> ScoreTable:
    """Vectorised scoring of N forecasts over K labels (columns), truth given as column index.

    Same rules as the per-forecast functions: negatives and non-finite entries clipped to 0,
    rows renormalised, rows without positive mass unusable. ``market`` is an (N, K) matrix of
    market probabilities (rows of NaN where unavailable). Without ``keys``, every row is its own
    event, named by its row number (names made only when one is asked for).

    Whole-array operations in place, one gather of the truth column, no per-row Python objects:
    about 2x plain numpy's Brier, log loss and accuracy (``benchmarks/scoring.py``).
    """
    p = np.array(probs, dtype=np.float64)
    n, k = p.shape
    t = np.asarray(truth, dtype=np.int64)
    ok = _normalise_rows(p)
    pt = np.take_along_axis(p, t[:, None], axis=1)[:, 0]
    b = brier_rows(p, t)
    top = _row_reduce(p, np.maximum)
    top -= TIE_TOLERANCE
    # fractional ties: 1 / |argmax set| when the truth is in it (within the tolerance)
    tied = np.zeros(n, dtype=np.int64)
    for j in range(k):
        tied += p[:, j] >= top
    acc = (pt >= top) / tied
    bad = ~ok
    b[bad] = acc[bad] = pt[bad] = np.nan
    if market is None:
        mt, mb = np.full(n, np.nan), np.full(n, np.nan)
    else:
        m = np.array(market, dtype=np.float64)
        mbad = ~_normalise_rows(m)
        mt = np.take_along_axis(m, t[:, None], axis=1)[:, 0]
        mb = brier_rows(m, t)
        mt[mbad] = mb[mbad] = np.nan
    zeros = np.zeros(n, dtype=np.int64)
    return ScoreTable(
        keys=dict(keys)
        if keys is not None
        else {"agent": (zeros, ("agent",)), "event": (np.arange(n), RowNames(n))},
        step=np.asarray(step, dtype=np.int64) if step is not None else zeros,
        rollout=np.asarray(rollout, dtype=np.int64) if rollout is not None else zeros,
        usable=ok,
        n_labels=np.full(n, k, dtype=np.int64),
        brier=b,
        accuracy=acc,
        p_truth=pt,
        market_truth=mt,
        market_brier=mb,
        truth_first=t == 0,
    )


def _normalise_rows(m: Floats) -> Bools:
    """Clip negative and non-finite entries of ``m`` to 0 and divide each row by its sum, in
    place; the rows with positive mass (the others stay zero)."""
    m[~((m >= 0.0) & (m < np.inf))] = 0.0  # NaN fails both comparisons
    tot = _row_reduce(m, np.add)
    ok: Bools = tot > 0
    tot[~ok] = 1.0
    m /= tot[:, None]
    return ok


def _row_reduce(m: Floats, op: np.ufunc) -> Floats:
    """``op`` reduced over each row, column by column for few columns (see ``brier_rows``)."""
    if m.shape[1] > _COLUMNWISE:
        out: Floats = op.reduce(m, axis=1)
        return out
    out = m[:, 0].copy()
    for j in range(1, m.shape[1]):
        op(out, m[:, j], out=out)
    return out


class RowNames(Sequence[str]):
    """The names ``"0" .. "n-1"`` of ``n`` rows, made one at a time when asked for (building a
    million strings up front took ~130 ms, more than scoring them)."""

    def __init__(self, n: int) -> None:
        self._n = n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> tuple[str, ...]: ...

    def __getitem__(self, i: int | slice) -> str | tuple[str, ...]:
        if isinstance(i, slice):
            return tuple(map(str, range(self._n)[i]))
        return str(range(self._n)[i])

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        i = int(value) if isinstance(value, str) and value.isdigit() else -1
        stop = self._n if stop is None else stop
        if str(i) != value or not max(start, 0) <= i < min(stop, self._n):
            raise ValueError(f"{value!r} is not a row name")
        return i

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RowNames):
            return self._n == other._n
        return isinstance(other, tuple) and tuple(self) == other

    def __hash__(self) -> int:
        return hash(("RowNames", self._n))

    def __repr__(self) -> str:
        return f"RowNames({self._n})"
