"""The companion's rows of a block of step lines, read by Arrow's JSON reader: only the fields the
companion holds are typed (the messages, the largest part of a record, are skipped unparsed in
C++), so a companion is rebuilt at about the speed of reading the file.

The block is vouched for only where reading every record (``StepRecord.model_validate`` and
``step_row``) would give the same rows: each line one JSON object; every field the companion
holds present with its type, not null unless it may be; the values inside their bounds and
vocabularies; no probability that the record would change (scaled, or made unusable); no label
twice; the market reference before the cutoff with its age. Anything else (an older log's
missing field, a hand edit, a line that is not a record) returns None and the caller reads the
block record by record, which rebuilds it as before or names the line that is wrong. The fields
the companion does not hold, and a field no record has (skipped here), are checked when a record
is read in full (by offset)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any, get_args

import numpy as np

from pastcast.records import (
    RETRY_MARKERS,
    AgentRole,
    EvidenceQuality,
    FailureReason,
    Setting,
    StopReason,
    Termination,
)
from pastcast.runlog._arrow import as_numpy, step_schema
from pastcast.runlog._companion import columns_schema
from pastcast.runlog._schema import LOGGED_SCORES

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["scanned_rows"]

_READ: dict[str, Any] = {
    "run_id": None, "agent": None, "role": None, "setting": None, "event_id": None,
    "step_index": None, "cutoff": None, "rollout": None, "split": None, "category": None,
    "attempt": None,
    "forecast": {"probs": None, "raw_text": None, "usable": None, "failure_reason": None,
                 "choice": None, "confidence": None},
    "episode": {"model_calls": {"model": None}, "tool_calls": {"name": None}, "usage": None,
                "notebook_carried": None, "wall_s": None, "termination": None, "error": None,
                "evidence_tally": {"documents": None, "quality": None}, "stop_reason": None},
    "grading": {"truth": None, "labels": None, "market_probs": None, "market_at": None,
                "market_age_days": None, "resolved_at": None},
    "scores": {**dict.fromkeys(LOGGED_SCORES), "fallback_used": None},
}  # fmt: skip
"""The fields read (a struct's or a list of structs' children by name; None: all of it)."""

_NULLABLE = {
    "forecast.failure_reason", "forecast.choice", "forecast.confidence", "grading.market_probs",
    "grading.market_at", "grading.market_age_days", "grading.resolved_at", "scores.info_alpha",
    "episode.error", "episode.evidence_tally", "episode.evidence_tally.quality",
    "episode.stop_reason",
}  # fmt: skip
"""The fields read that may be null (the record's optional fields): any other null (a field an
older log lacks, whose default the record fills in) sends the block to the record path."""

_VOCABULARY = {
    "role": AgentRole, "setting": Setting, "forecast.failure_reason": FailureReason,
    "episode.termination": Termination, "episode.stop_reason": StopReason,
    "episode.evidence_tally.quality": EvidenceQuality,
}  # fmt: skip

_INSTANTS = ("cutoff", "grading.market_at", "grading.resolved_at")
_MARKERS = r"\n\n(?:" + "|".join(m.replace("[", r"\[").replace("]", r"\]") for m in
                                  RETRY_MARKERS.values()) + r")\n"  # fmt: skip
"""``answer_attempts``' separator, in Arrow's regular expressions."""


def _pruned(dtype: pa.DataType, keep: dict[str, Any] | None, path: str) -> pa.DataType:
    import pyarrow as pa

    if path in _INSTANTS:  # ISO text in the log, parsed by the reader as the companion holds it
        return pa.timestamp("us", tz="UTC")
    if keep is None:
        return dtype
    if pa.types.is_list(dtype):
        return pa.list_(_pruned(dtype.value_type, keep, path))
    return pa.struct(
        [
            (name, _pruned(dtype.field(name).type, sub, f"{path}.{name}"))
            for name, sub in keep.items()
        ]
    )


def _read_schema() -> pa.Schema:
    import pyarrow as pa

    full = step_schema()
    return pa.schema([(n, _pruned(full.field(n).type, keep, n)) for n, keep in _READ.items()])


def _column(table: pa.Table, path: str) -> pa.Array:
    """A (nested) column by its dotted path, as one array; a child of a null struct reads as
    null."""
    import pyarrow.compute as pc

    head, *rest = path.split(".")
    column = table.column(head).combine_chunks()
    for name in rest:
        column = pc.struct_field(column, name)
    return column


def _nulls_ok(array: pa.Array, path: str) -> bool:
    """No null where the record has no optional field, through structs and lists."""
    import pyarrow as pa

    if array.null_count and path not in _NULLABLE:
        return False
    kind = array.type
    if pa.types.is_struct(kind):
        valid = array.is_valid()
        return all(
            _nulls_ok(array.field(i).filter(valid), f"{path}.{kind.field(i).name}")
            for i in range(kind.num_fields)
        )
    if pa.types.is_list(kind):
        return _nulls_ok(array.flatten(), path)
    return True


def _pairs_ok(values: pa.Array, usable: Any | None) -> bool:
    """Probabilities the record keeps as they are: finite in [0, 1], no label twice, and a
    usable forecast with positive mass."""
    import pyarrow as pa
    import pyarrow.compute as pc

    pairs = values.flatten()
    p = as_numpy(pairs.field("p"))
    if not np.all(np.isfinite(p) & (p >= 0.0) & (p <= 1.0)):
        return False
    parents = np.asarray(pc.list_parent_indices(values))
    labels = pairs.field("label")
    keys = pc.binary_join_element_wise(pa.array(parents).cast(pa.string()), labels, "\x00")
    if pc.count_distinct(keys).as_py() != len(keys):
        return False
    if usable is None:
        return True
    positive = np.bincount(parents, weights=p > 0.0, minlength=len(values)) > 0
    return bool(np.all(positive | ~usable))


def _checked(table: pa.Table) -> bool:
    import pyarrow as pa
    import pyarrow.compute as pc

    for name in table.column_names:
        chunks = table.column(name).chunks
        if not all(_nulls_ok(c, name) for c in chunks):
            return False
    for path, vocabulary in _VOCABULARY.items():
        column = _column(table, path).drop_null()
        if pc.any(pc.invert(pc.is_in(column, pa.array(get_args(vocabulary))))).as_py():
            return False
    usable = as_numpy(_column(table, "forecast.usable"), np.bool_)
    if not _pairs_ok(_column(table, "forecast.probs"), usable):
        return False
    if not _pairs_ok(_column(table, "grading.market_probs").drop_null(), None):
        return False
    for path, low, high in (
        ("forecast.confidence", 0.0, 1.0),
        ("grading.market_age_days", 0.0, np.inf),
        ("attempt", 1, np.inf),
        ("episode.evidence_tally.documents", 0, np.inf),
    ):
        values = as_numpy(_column(table, path).drop_null())
        if not np.all((values >= low) & (values <= high)):
            return False
    cutoff = as_numpy(_column(table, "cutoff").cast(pa.int64()), np.int64)
    at_column = _column(table, "grading.market_at")
    at = as_numpy(at_column.cast(pa.int64()).fill_null(0), np.int64)
    has_at = as_numpy(at_column.is_valid(), np.bool_)
    age_column = _column(table, "grading.market_age_days")
    if not np.array_equal(has_at, as_numpy(age_column.is_valid(), np.bool_)):
        return False
    age = as_numpy(age_column.fill_null(0.0))
    expected = np.round((cutoff - at) / 86_400e6, 5)
    return bool(np.all(~has_at | ((at < cutoff) & (np.abs(age - expected) <= 1e-4))))


def _line_spans(data: bytes) -> tuple[np.ndarray, np.ndarray] | None:
    """The (offset, length) of each line of ``data`` (whole lines) that holds a record; None
    when a line is neither blank nor an object's."""
    raw = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(raw == ord("\n"))
    starts = np.concatenate(([0], ends[:-1] + 1)).astype(np.int64)
    lengths = ends - starts
    opens = np.zeros(len(starts), bool)
    inside = lengths > 0
    opens[inside] = raw[starts[inside]] == ord("{")
    for i in np.flatnonzero(~opens):  # rare: a blank line, or one to read record by record
        if data[starts[i] : ends[i]].strip():
            return None
    return starts[opens], lengths[opens]


def scanned_rows(data: bytes, offset: int) -> pa.Table | None:
    """The companion's rows (``columns_schema``) of ``data``, whole step lines at byte
    ``offset`` of the step file (schema 3), or None when reading every record is needed (see
    the module's note)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    spans = _line_spans(data)
    if spans is None:
        return None
    starts, lengths = spans
    if not len(starts):
        return columns_schema().empty_table()
    block = max(1 << 20, int(lengths.max()) + 2)
    try:
        table = pj.read_json(
            io.BytesIO(data),
            read_options=pj.ReadOptions(block_size=block),
            parse_options=pj.ParseOptions(
                explicit_schema=_read_schema(), unexpected_field_behavior="ignore"
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows != len(starts) or not _checked(table):
        return None
    calls = _column(table, "episode.tool_calls")
    names = calls.flatten().field("name")
    parents = np.asarray(pc.list_parent_indices(calls))
    n = table.num_rows

    def counted(tool: str) -> np.ndarray:
        hits = as_numpy(pc.equal(names, tool), np.bool_) if len(names) else np.zeros(0, bool)
        return np.bincount(parents, weights=hits, minlength=n).astype(np.int64)

    models = [
        sorted({c["model"] for c in calls})
        for calls in _column(table, "episode.model_calls").to_pylist()
    ]
    tally = _column(table, "episode.evidence_tally")
    quality = _column(table, "episode.evidence_tally.quality")
    documents = _column(table, "episode.evidence_tally.documents").fill_null(0)
    evidence = pc.if_else(
        tally.is_null(),
        "untallied",
        pc.coalesce(quality, pc.if_else(pc.equal(documents, 0), "none", "untallied")),
    )
    usage = "episode.usage"
    columns = {
        **{name: table.column(name) for name in list(_READ)[:11]},
        "probs": _column(table, "forecast.probs"),
        **{c: _column(table, f"forecast.{c}") for c in ("usable", "failure_reason", "choice")},
        "confidence": _column(table, "forecast.confidence"),
        "replies": pc.add(
            pc.count_substring_regex(_column(table, "forecast.raw_text"), _MARKERS), 1
        ),
        **{c: _column(table, f"grading.{c}") for c in _READ["grading"]},
        **{c: _column(table, f"scores.{c}") for c in _READ["scores"]},
        **{
            c: _column(table, f"{usage}.{c}")
            for c in ("model_calls", "input_tokens", "output_tokens", "cost_usd")
        },
        "tool_calls": pc.list_value_length(calls),
        "search_calls": counted("search"),
        "read_calls": counted("read"),
        "models": pa.array(models, pa.list_(pa.string())),
        **{
            c: _column(table, f"episode.{c}")
            for c in ("wall_s", "termination", "error", "notebook_carried")
        },
        "evidence": evidence,
        "stop_reason": _column(table, "episode.stop_reason"),
        "offset": starts + offset,
        "length": lengths,
    }
    schema = columns_schema()
    return pa.table([_typed(columns[f.name], f.type) for f in schema], schema=schema)


def _typed(values: Any, dtype: pa.DataType) -> pa.ChunkedArray:
    import pyarrow as pa

    if isinstance(values, np.ndarray):
        values = pa.array(values)
    if isinstance(values, pa.Array):
        values = pa.chunked_array([values])
    return values.cast(dtype)
