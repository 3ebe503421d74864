"""A columnar table of per-forecast scores, so aggregation over millions of rows is vectorised.

Rows keep the ingredients of every score (probability of the truth, number of offered labels,
the market's probabilities) rather than one fixed fallback, so each aggregation can choose how
unusable forecasts count (uniform, worst case, or excluded) without re-reading the logs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pastcast.records import BINARY_LABELS
from pastcast.runlog import StepRecord, as_numpy, records_table
from pastcast.scoring._metrics import ScoreColumns, metric_list
from pastcast.scoring._multiclass import _COLUMNWISE, LOG_FLOOR, TIE_TOLERANCE, brier_rows

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "KEY_COLUMNS",
    "TABLE_INPUTS",
    "Convention",
    "RowNames",
    "ScoreTable",
    "coded",
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


def coded(values: pa.Array | pa.ChunkedArray, missing: str = "") -> tuple[Ints, tuple[str, ...]]:
    """A string column as its sorted distinct names and a code per row (``missing`` for null),
    coded by Arrow: no Python string per row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], pa.string())
    # nulls coded as a name of their own, then named ``missing`` (Arrow's fill_null makes a
    # Python scalar of ``missing``, which imports pandas)
    encoded = pc.dictionary_encode(values.cast(pa.string()), null_encoding="encode")
    found = [missing if v is None else v for v in encoded.dictionary.to_pylist()]
    names = tuple(sorted(set(found)))
    position = {name: i for i, name in enumerate(names)}
    rank = np.array([position[v] for v in found], dtype=np.int64)
    return rank[as_numpy(encoded.indices, np.int64)], names


@dataclass(frozen=True)
class _Pairs:
    """A pairs column (``probs``, ``market_probs``) flattened: each pair's row, outcome (coded
    as every outcome name of the table is) and probability."""

    row: Ints
    label: Ints
    p: Floats


def _flat(column: pa.ChunkedArray) -> tuple[Ints, pa.Array]:
    """Each element's row and the elements of a list column."""
    import pyarrow.compute as pc

    whole = column.combine_chunks()
    return as_numpy(pc.list_parent_indices(whole), np.int64), pc.list_flatten(whole)


def _row_sum(rows: Ints, values: Floats | Bools, n: int) -> Floats:
    """The sum of each row's values (floats, also when there are none)."""
    return np.bincount(rows, values, minlength=n).astype(np.float64, copy=False)


def _row_max(rows: Ints, values: Floats, n: int) -> Floats:
    """The largest value of each row (0 for a row without values); a row's values are
    consecutive, as a list column's are."""
    out = np.zeros(n)
    if values.size:
        starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
        out[rows[starts]] = np.maximum.reduceat(values, starts)
    return out


@dataclass(frozen=True)
class _Scored:
    """Per row, a distribution's scores against the truth (NaN where it has no positive mass)."""

    ok: Bools
    brier: Floats
    accuracy: Floats
    p_truth: Floats
    """The truth's probability: 0 when the distribution does not name it."""
    names_truth: Bools


def _score_pairs(pairs: _Pairs, truth: Ints, n: int) -> _Scored:
    """The rule of ``normalize``, ``brier`` and ``accuracy`` on every row at once: negative and
    non-finite probabilities count 0, a row whose largest is above 1 is divided by it first
    (``pastcast.probabilities.scaled``), then by its sum; a row without positive mass is not
    scored."""
    rows = pairs.row
    v = np.where((pairs.p >= 0.0) & (pairs.p < np.inf), pairs.p, 0.0)  # NaN fails both
    top = _row_max(rows, v, n)
    ok: Bools = top > 0.0
    big = top > 1.0
    v = np.divide(v, top[rows], out=v, where=big[rows])
    total = _row_sum(rows, v, n)
    total[~ok] = 1.0
    v /= total[rows]
    is_truth = pairs.label == truth[rows]
    names_truth = _row_sum(rows, is_truth, n) > 0
    p_truth = _row_sum(rows, np.where(is_truth, v, 0.0), n)
    missed = np.subtract(v, is_truth, dtype=np.float64)
    brier = _row_sum(rows, missed * missed, n)
    brier += ~names_truth  # the truth's own (0 - 1)^2 when it is not named
    # fractional ties: 1 / |argmax set| when the truth is in it (within the tolerance)
    high = (_row_max(rows, v, n) - TIE_TOLERANCE)[rows]
    tied = _row_sum(rows, v >= high, n)
    truth_tied = _row_sum(rows, is_truth & (v >= high), n) > 0
    accuracy = np.where(truth_tied, 1.0 / np.maximum(tied, 1.0), 0.0)
    for column in (brier, accuracy, p_truth):
        column[~ok] = np.nan
    return _Scored(ok, brier, accuracy, p_truth, names_truth)


def table_from_columns(columns: pa.Table) -> ScoreTable:
    """Re-score logged steps from their step columns (``TABLE_INPUTS`` of an Arrow table with
    the companion's types, ``pastcast.runlog.columns_schema``: ``read_step_columns(...).table``):
    every row at once, by the rules of the per-forecast functions (``normalize``, ``brier``,
    ``accuracy``; tested equal), with no Python object per row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = columns.num_rows
    probs_row, probs = _flat(columns.column("probs"))
    market_row, market = _flat(columns.column("market_probs"))
    label_row, labels = _flat(columns.column("labels"))
    # every outcome name of the table coded once, so that names compare as integers
    parts = (
        columns.column("truth"),
        labels,
        pc.struct_field(probs, "label"),
        pc.struct_field(market, "label"),
    )
    code, names = coded(pa.chunked_array([*parts[0].chunks, *parts[1:]], pa.string()))
    ends = np.cumsum([len(p) for p in parts])
    truth, label, probs_label, market_label = np.split(code, ends[:-1])

    def pairs(row: Ints, label: Ints, flat: pa.Array) -> _Pairs:
        return _Pairs(row, label, as_numpy(pc.struct_field(flat, "p")))

    forecast = _score_pairs(pairs(probs_row, probs_label, probs), truth, n)
    usable = as_numpy(columns.column("usable"), np.bool_) & forecast.ok
    for column in (forecast.brier, forecast.accuracy, forecast.p_truth):
        column[~usable] = np.nan
    belief = _score_pairs(pairs(market_row, market_label, market), truth, n)

    # the outcomes of a row: its distinct offered labels and the truth
    pair = np.sort(label_row * max(1, len(names)) + label)  # rows stay in order, as they were
    repeated = np.bincount(label_row[1:][pair[1:] == pair[:-1]], minlength=n)
    offered = _row_sum(label_row, label == truth[label_row], n) > 0
    # the first two offered labels: "binary" is exactly ("Yes", "No")
    count = np.bincount(label_row, minlength=n)
    first, second = np.full(n, -1), np.full(n, -1)
    starts = np.flatnonzero(np.r_[True, label_row[1:] != label_row[:-1]])[: label.size]
    first[label_row[starts]] = label[starts]
    two = starts[count[label_row[starts]] >= 2]
    second[label_row[two]] = label[two + 1]
    yes, no = (names.index(x) if x in names else -2 for x in BINARY_LABELS)
    multi = (count != 2) | (first != yes) | (second != no)
    kinds = tuple(k for k, has in (("binary", not multi.all()), ("multi", multi.any())) if has)

    sources = {"event": "event_id"}
    keys = {c: coded(columns.column(sources.get(c, c))) for c in KEY_COLUMNS if c != "kind"}
    keys["kind"] = (multi.astype(np.int64) if len(kinds) == 2 else np.zeros(n, np.int64), kinds)
    return ScoreTable(
        keys=keys,
        step=as_numpy(columns.column("step_index"), np.int64),
        rollout=as_numpy(columns.column("rollout"), np.int64),
        usable=usable,
        n_labels=count - repeated + ~offered,
        brier=forecast.brier,
        accuracy=forecast.accuracy,
        p_truth=forecast.p_truth,
        market_truth=np.where(belief.names_truth, belief.p_truth, np.nan),
        market_brier=belief.brier,
        truth_first=(count > 0) & (first == truth),
    )


def table_from_records(records: Iterable[StepRecord]) -> ScoreTable:
    """Re-score logged steps from their forecast and grading (stored scores are ignored): their
    step columns (``pastcast.runlog.records_table``) scored as ``table_from_columns``."""
    return table_from_columns(records_table(records))


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
    them."""
    if not parts:
        from pastcast.runlog import columns_schema

        return table_from_columns(columns_schema().empty_table())
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
