"""A columnar table of per-forecast scores, so aggregation over millions of rows is vectorised.

Rows keep the ingredients of every score (probability of the truth, number of offered labels,
the market's probabilities) rather than one fixed fallback, so each aggregation can choose how
unusable forecasts count (uniform, worst case, or excluded) without re-reading the logs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from pastcast.records import BINARY_LABELS
from pastcast.runlog import StepRecord, as_numpy, records_table
from pastcast.scoring._metrics import ScoreColumns, metric_list
from pastcast.scoring._multiclass import LOG_FLOOR, TIE_TOLERANCE

if TYPE_CHECKING:
    import pyarrow as pa

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
        return str(code) if column in ("step", "rollout") else self.keys[column][1][code]

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
