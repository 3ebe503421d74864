"""The columnar companion of a step file: a Parquet table of every step record's scalar fields
(key, forecast, grading, scores, usage, termination) with the byte offset and length of the full
record in the JSONL, so readers load only the columns they need and read a full record by offset.

The companion is a folder beside the step file (``run.jsonl`` -> ``run.columns/``) of part files,
each covering a contiguous byte range of the step file. A part's Parquet metadata says what it
covers: the header's hash, and per segment the start and end offsets, the number of records and
the BLAKE3 digest of those bytes. A reader trusts a part only when its segments continue the ones
before it from offset 0 and their bytes hash as recorded (``_columns.read_step_columns``), so a
stale, truncated, foreign or hand-edited companion is rebuilt from the JSONL, never trusted.

This module holds what the writer and the reader share: the columns, a step's row, the parts'
metadata, and writing a part. Of the run log's it imports only the schema and the scan.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from itertools import chain
from operator import attrgetter, countOf
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import blake3

from pastcast import safejson
from pastcast.atomic import atomic_path, fsync_dir, write_atomic
from pastcast.owned import made_kind, mark
from pastcast.records import Forecast, answer_attempts, evidence_label_of
from pastcast.runlog._scan import scan
from pastcast.runlog._schema import LOGGED_SCORES, StepRecord

if TYPE_CHECKING:
    import pyarrow as pa

COLUMNS_VERSION = 6
"""The companion's format; a part of another version is rebuilt (2: the evidence label and the
stop reason of each step; 3: the replies each forecast was read from, which ``score
--normalize-labels`` reads to stream only the forecasts it may read again; 4: when the market
reference was public and its age at the cutoff; 5: the search and read calls of each step; 6:
segments hashed with BLAKE3, not SHA-256)."""

COLUMNS_KIND = "run-log-columns"
"""The ``.pastcast-made`` kind of the companion folder: only such a folder is written into."""

PART_ROWS = 1000
"""Records per part the writer writes (at the first sync past this many); the tail not yet in a
part is read from the JSONL."""

_MERGE_AT = 32
"""Parts of ``PART_ROWS`` the writer merges into one, so a long run leaves few files."""

_META_KEY = b"pastcast.columns"
_PART_PREFIX = "part-"
_PART_SUFFIX = ".parquet"


def columns_path(log_path: str | Path) -> Path:
    """The columnar companion beside a step file: ``runs/x/run.jsonl`` -> ``runs/x/run.columns``."""
    return Path(log_path).with_suffix(".columns")


_NAME, _MODEL = attrgetter("name"), attrgetter("model")  # mapped in C: a rebuild takes millions

_Get = str | Callable[[Any], Any] | None
"""A column's value of a step: an attribute's path, a function, or None (its line's span)."""

_COLUMNS: tuple[tuple[str, str, _Get], ...] = (
    *((name, "str", name) for name in ("run_id", "agent", "role", "setting", "event_id")),
    ("step_index", "int", "step_index"),
    ("cutoff", "instant", "cutoff"),
    ("rollout", "int", "rollout"),
    ("split", "str", "split"),
    ("category", "str", "category"),
    ("attempt", "int", "attempt"),
    ("probs", "pairs", "forecast.probs"),
    ("usable", "bool", "forecast.usable"),
    ("failure_reason", "str", "forecast.failure_reason"),
    ("choice", "str", "forecast.choice"),
    ("confidence", "float", "forecast.confidence"),
    ("replies", "int", lambda s: len(answer_attempts(s.forecast.raw_text))),
    ("truth", "str", "grading.truth"),
    ("labels", "strs", "grading.labels"),
    ("market_probs", "pairs", "grading.market_probs"),
    ("market_at", "instant", "grading.market_at"),
    ("market_age_days", "float", "grading.market_age_days"),
    ("resolved_at", "instant", "grading.resolved_at"),
    *((name, "float", f"scores.{name}") for name in LOGGED_SCORES),
    ("fallback_used", "bool", "scores.fallback_used"),
    *((n, "int", f"episode.usage.{n}") for n in ("model_calls", "input_tokens", "output_tokens")),
    ("cost_usd", "float", "episode.usage.cost_usd"),
    ("tool_calls", "int", lambda s: len(s.episode.tool_calls)),
    *(
        (f"{n}_calls", "int", lambda s, n=n: countOf(map(_NAME, s.episode.tool_calls), n))
        for n in ("search", "read")
    ),
    ("models", "strs", lambda s: tuple(sorted(set(map(_MODEL, s.episode.model_calls))))),
    ("wall_s", "float", "episode.wall_s"),
    ("termination", "str", "episode.termination"),
    ("error", "str", "episode.error"),
    ("notebook_carried", "bool", "episode.notebook_carried"),
    ("evidence", "str", lambda s: evidence_label_of(s.episode.evidence_tally)),
    ("stop_reason", "str", "episode.stop_reason"),
    ("offset", "int", None),
    ("length", "int", None),
)
"""The companion's columns, one row per step record in file order: name, type, and the value
of a step (a record, or a line as ``scan`` reads it: the same attributes)."""

_EPOCH, _US = datetime(1970, 1, 1, tzinfo=UTC), timedelta(microseconds=1)


def columns_schema() -> pa.Schema:
    """The companion's columns (``_COLUMNS``): one row per step record, in file order."""
    import pyarrow as pa

    pairs = pa.list_(pa.struct([("label", pa.string()), ("p", pa.float64())]))
    types = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_(),
             "instant": pa.timestamp("us", tz="UTC"), "strs": pa.list_(pa.string()),
             "pairs": pairs}  # fmt: skip
    return pa.schema([(name, types[kind]) for name, kind, _ in _COLUMNS])


def column_probs(value: Sequence[Mapping[str, Any]] | None) -> dict[str, float] | None:
    """The probabilities a pairs column (``probs``, ``market_probs``) holds, in their order, as
    the record's field (``None`` for none)."""
    return None if value is None else {d["label"]: d["p"] for d in value}


FORECAST_COLUMNS = ("probs", "usable", "failure_reason", "choice", "confidence", "replies")
"""The columns a step's forecast fills (``forecast_row``)."""


def _array(values: Sequence[Any], type: pa.DataType) -> pa.Array:
    """``values`` (None: null; pairs: maps of label to p) as an Arrow array of ``type``, built
    from buffers: Arrow's conversion of Python objects imports pandas (half a second of a run)."""
    import numpy as np
    import pyarrow as pa

    n, nulls = len(values), None in values
    present = np.packbits([v is not None for v in values], bitorder="little") if nulls else b""
    valid = pa.py_buffer(present) if nulls else None
    if pa.types.is_list(type):
        lists, kind = [v or {} for v in values] if nulls else values, type.value_type
        ends = pa.py_buffer(np.cumsum([0, *map(len, lists)], dtype=np.int32))
        items = [*chain.from_iterable(lists)]  # of pairs: their labels
        if pa.types.is_struct(kind):  # label/p pairs, held as maps
            p = [*chain.from_iterable(map(dict.values, lists))]
            kids = [_array(items, pa.string()), _array(p, pa.float64())]
            child = pa.Array.from_buffers(kind, len(p), [None], children=kids)
        else:
            child = _array(items, kind)
        return pa.Array.from_buffers(type, n, [valid, ends], children=[child])
    if pa.types.is_string(type):
        texts = [v or "" for v in values] if nulls else values
        utf8 = "".join(texts).encode()
        sizes = map(len, texts) if utf8.isascii() else (len(t.encode()) for t in texts)
        ends = pa.py_buffer(np.cumsum([0, *sizes], dtype=np.int32))
        return pa.Array.from_buffers(type, n, [valid, ends, pa.py_buffer(utf8)])
    if pa.types.is_timestamp(type):
        values = [0 if v is None else (v - _EPOCH) // _US for v in values]
    elif nulls:
        values = [0 if v is None else v for v in values]
    data = np.array(values, "int64" if pa.types.is_timestamp(type) else str(type))
    if pa.types.is_boolean(type):
        data = np.packbits(data, bitorder="little")
    return pa.Array.from_buffers(type, n, [valid, pa.py_buffer(data)])


def segment_hasher() -> blake3.blake3:
    """A new digest of a segment's bytes: BLAKE3, a cryptographic hash that takes a quarter of
    SHA-256's CPU here. On one thread: its multithreaded mode's pool does not survive a fork,
    so a forked child that hashed with it would wait forever."""
    return blake3.blake3()


@dataclass(frozen=True)
class Segment:
    """A contiguous byte range of the step file a part covers, with its records' count and the
    BLAKE3 digest of its bytes (``segment_hasher``)."""

    start: int
    end: int
    rows: int
    lines: int
    """Lines of the range (its records and any blank lines): a later line's number."""
    blake3: str


@dataclass(frozen=True)
class PartInfo:
    """What a part file says it covers."""

    path: Path
    header_sha256: str
    segments: tuple[Segment, ...]
    rows: int
    """Rows the Parquet file holds (must equal its segments' records)."""

    @property
    def start(self) -> int:
        return self.segments[0].start

    @property
    def end(self) -> int:
        return self.segments[-1].end


def part_info(path: Path) -> PartInfo | str:
    """The part's metadata, or why it cannot be used (unreadable, another version, no segments)."""
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(path)
        raw = (meta.metadata or {}).get(_META_KEY)
        info = json.loads(raw) if raw is not None else None
    except (OSError, ValueError) as exc:  # pyarrow's errors are both (ArrowInvalid: ValueError)
        return f"{path.name} is unreadable ({exc})"
    if not isinstance(info, dict) or info.get("version") != COLUMNS_VERSION:
        return f"{path.name} is not a part of companion version {COLUMNS_VERSION}"
    try:
        segments = tuple(
            Segment(
                int(s["start"]), int(s["end"]), int(s["rows"]), int(s["lines"]), str(s["blake3"])
            )
            for s in info["segments"]
        )
        header = str(info["header_sha256"])
    except (KeyError, TypeError, ValueError):
        return f"{path.name} has malformed metadata"
    if not segments:
        return f"{path.name} covers nothing"
    return PartInfo(path, header, segments, meta.num_rows)


def part_files(folder: Path) -> list[Path]:
    """The part files of a companion folder, in offset order (their names sort so)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(
        folder / n for n in names if n.startswith(_PART_PREFIX) and n.endswith(_PART_SUFFIX)
    )


def claim_columns_dir(folder: Path) -> bool:
    """Make the companion folder (marked as pastcast's) or confirm it is one; False for a folder
    of someone else's, which is never written into."""
    if folder.is_dir():
        return made_kind(folder) == COLUMNS_KIND
    try:
        folder.mkdir()
    except FileExistsError:
        return made_kind(folder) == COLUMNS_KIND
    except OSError:
        return False
    mark(folder, COLUMNS_KIND)
    fsync_dir(folder.parent)
    return True


def write_part(
    folder: Path, table: pa.Table, header_sha256: str, segments: Sequence[Segment]
) -> Path:
    """Write ``table`` as the part covering ``segments`` (atomically: a crash leaves no half
    part); its path."""
    import pyarrow.parquet as pq

    meta = {
        "version": COLUMNS_VERSION,
        "header_sha256": header_sha256,
        "segments": [asdict(s) for s in segments],
    }
    table = table.replace_schema_metadata({_META_KEY: json.dumps(meta).encode()})
    target = folder / f"{_PART_PREFIX}{segments[0].start:015d}{_PART_SUFFIX}"
    with atomic_path(target, suffix=_PART_SUFFIX) as tmp:
        pq.write_table(table, tmp, compression="zstd")
    return target


def merge_parts(folder: Path, parts: Sequence[PartInfo], header_sha256: str) -> Path:
    """Merge contiguous ``parts`` into one part (the first's name) and remove the others."""
    import pyarrow as pa

    table = pa.concat_tables([read_part(p.path) for p in parts])
    segments = [s for p in parts for s in p.segments]
    target = write_part(folder, table, header_sha256, segments)
    for p in parts:
        if p.path != target:
            p.path.unlink(missing_ok=True)
    fsync_dir(folder)
    return target


def read_part(path: Path, columns: Sequence[str] | None = None) -> pa.Table:
    """A part's columns (all, or ``columns``) with the companion's types. Read as one Parquet
    file, not through Arrow's dataset layer, whose import (pandas with it) cost more than the
    reading."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = columns_schema()
    names = schema.names if columns is None else list(columns)
    table = pq.ParquetFile(path).read(columns=names)
    return table.cast(pa.schema([schema.field(c) for c in names]))


@cache
def _getters(names: tuple[str, ...] = ()) -> tuple[Callable[[Any], Any], ...]:
    return tuple(
        attrgetter(get) if isinstance(get, str) else get
        for name, _, get in _COLUMNS
        if get is not None and (not names or name in names)
    )


def step_row(step: Any, offset: int, length: int) -> tuple[Any, ...]:
    """The companion's row of a step, a record or a line as ``scan`` reads it (the same
    attributes), whose line is ``length`` bytes at ``offset``, for ``rows_table``: the one rule
    of the writer and of a rebuild from the step file. Taken as each step is read, which then
    goes (a step held costs more to decode than its row to make)."""
    return (*[get(step) for get in _getters()], offset, length)


def forecast_row(forecast: Forecast, names: tuple[str, ...]) -> tuple[Any, ...]:
    """The companion's ``names`` of a forecast (of ``FORECAST_COLUMNS``), for ``rows_table``."""
    step = SimpleNamespace(forecast=forecast)
    return tuple(get(step) for get in _getters(names))


def rows_table(rows: Sequence[Sequence[Any]], names: Sequence[str] = ()) -> pa.Table:
    """The companion's rows (``step_row``, or ``forecast_row`` of ``names``) as one table."""
    import pyarrow as pa

    fields = [f for f in columns_schema() if not names or f.name in names]
    columns = [*zip(*rows, strict=True)] or [()] * len(fields)
    arrays = [_array(c, f.type) for c, f in zip(columns, fields, strict=True)]
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def records_table(records: Iterable[StepRecord]) -> pa.Table:
    """The companion's rows of records held in memory, each row's ``offset`` its record's index
    (``length`` -1)."""
    return rows_table([step_row(r, i, -1) for i, r in enumerate(records)])


STAMP = "verified.json"
"""The companion's record of itself: each part file as written (inode, size, modification and
change times) and the step file as last checked against the parts."""


def file_stamp(path: Path) -> list[int]:
    """A file's identity and state; an edit changes the change time, which no user sets back."""
    st = os.stat(path)
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def read_stamp(folder: Path) -> dict[str, Any]:
    """The companion's stamp (empty when absent or unreadable: every part is then rebuilt)."""
    try:
        data = json.loads((folder / STAMP).read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_stamp(
    folder: Path, header_sha256: str, parts: Sequence[Path], step_file: list[int] | None
) -> None:
    """Record ``parts`` as written now and, when given, the step file as checked (``None``: it
    changed since, so the next reader hashes it)."""
    stamp = {
        "header_sha256": header_sha256,
        "parts": {p.name: file_stamp(p) for p in parts},
        "step_file": step_file,
    }
    write_atomic(folder / STAMP, json.dumps(stamp))


class CompanionWriter:
    """The run-log writer's side of the companion: the rows of the records it appends, written
    as a part once fsynced (every ``PART_ROWS`` records and at close), every ``_MERGE_AT``
    small parts merged into one (not at close, which would wait for the rewrite: a reader takes
    a few parts as fast as one). A part covers only bytes already fsynced in the step file, so a
    crash loses nothing the JSONL kept: the reader rebuilds the tail past the last part. A
    companion that cannot be written (a full disk, someone else's folder) is given up, never
    failing the run."""

    def __init__(self, log: Path, header_sha256: str, end: int, *, fresh: bool) -> None:
        self.log = log
        self.folder = columns_path(log)
        self.header_sha256 = header_sha256
        self.end = end
        self.enabled = claim_columns_dir(self.folder)
        if self.enabled and fresh:  # a new log: parts of an earlier one of this name go
            for path in part_files(self.folder):
                path.unlink(missing_ok=True)
            (self.folder / STAMP).unlink(missing_ok=True)
        self._rows: list[tuple[Any, ...]] = []
        self._start = end
        self._hash = segment_hasher()
        self._lines = 0
        self._small: list[PartInfo] = []

    def add(self, data: bytes) -> None:
        """A record was appended as ``data`` (its line with the newline) at the end: its row is
        made from the line as written, as a rebuild from the step file makes it."""
        if self.enabled:
            step = scan(data) or StepRecord.model_validate(safejson.loads(data))
            self._rows.append(step_row(step, self.end, len(data) - 1))
            self._hash.update(data)
            self._lines += 1
        self.end += len(data)

    def synced(self, *, final: bool = False) -> None:
        """The step file was fsynced: write a part when enough rows wait (or ``final``)."""
        if not self.enabled:
            return
        due = bool(self._rows) and (len(self._rows) >= PART_ROWS or final)
        if not due and not final:
            return
        try:
            if due:
                self._write_part()
            # The parts as written; the step file as checked once the writer is done with it.
            write_stamp(
                self.folder,
                self.header_sha256,
                part_files(self.folder),
                file_stamp(self.log) if final else None,
            )
        except OSError:
            self.enabled = False  # the reader rebuilds what is missing from the JSONL

    def _write_part(self) -> None:
        segment = Segment(
            self._start, self.end, len(self._rows), self._lines, self._hash.hexdigest()
        )
        path = write_part(self.folder, rows_table(self._rows), self.header_sha256, [segment])
        self._rows, self._start, self._hash, self._lines = [], self.end, segment_hasher(), 0
        self._small.append(PartInfo(path, self.header_sha256, (segment,), segment.rows))
        if len(self._small) >= _MERGE_AT:
            merge_parts(self.folder, self._small, self.header_sha256)
            self._small = []  # the merged part is left as it is from now on
