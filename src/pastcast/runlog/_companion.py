"""The columnar companion of a step file: a Parquet table of every step record's scalar fields
(key, forecast, grading, scores, usage, termination) with the byte offset and length of the full
record in the JSONL, so readers load only the columns they need and read a full record by offset.

The companion is a folder beside the step file (``run.jsonl`` -> ``run.columns/``) of part files,
each covering a contiguous byte range of the step file. A part's Parquet metadata says what it
covers: the header's hash, and per segment the start and end offsets, the number of records and
the SHA-256 of those bytes. A reader trusts a part only when its segments continue the ones
before it from offset 0 and their bytes hash as recorded (``_columns.read_step_columns``), so a
stale, truncated, foreign or hand-edited companion is rebuilt from the JSONL, never trusted.

This module holds what the writer and the reader share: the columns, a record's row, the parts'
metadata, and writing a part. It imports nothing else of the run log's.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_core import from_json

from pastcast.atomic import atomic_path, fsync_dir, write_atomic
from pastcast.owned import made_kind, mark
from pastcast.records import EvidenceTally, answer_attempts, evidence_label_of
from pastcast.runlog._schema import LOGGED_SCORES

if TYPE_CHECKING:
    import pyarrow as pa

    from pastcast.runlog._schema import StepRecord

COLUMNS_VERSION = 5
"""The companion's format; a part of another version is rebuilt (2: the evidence label and the
stop reason of each step; 3: the replies each forecast was read from, which ``score
--normalize-labels`` reads to stream only the forecasts it may read again; 4: when the market
reference was public and its age at the cutoff; 5: the search and read calls of each step)."""

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


def columns_schema() -> pa.Schema:
    """The companion's columns: one row per step record, in file order."""
    import pyarrow as pa

    pairs = pa.list_(pa.struct([("label", pa.string()), ("p", pa.float64())]))
    instant = pa.timestamp("us", tz="UTC")
    return pa.schema(
        [
            ("run_id", pa.string()),
            ("agent", pa.string()),
            ("role", pa.string()),
            ("setting", pa.string()),
            ("event_id", pa.string()),
            ("step_index", pa.int64()),
            ("cutoff", instant),
            ("rollout", pa.int64()),
            ("split", pa.string()),
            ("category", pa.string()),
            ("attempt", pa.int64()),
            ("probs", pairs),
            ("usable", pa.bool_()),
            ("failure_reason", pa.string()),
            ("choice", pa.string()),
            ("confidence", pa.float64()),
            ("replies", pa.int64()),
            ("truth", pa.string()),
            ("labels", pa.list_(pa.string())),
            ("market_probs", pairs),
            ("market_at", instant),
            ("market_age_days", pa.float64()),
            ("resolved_at", instant),
            *((name, pa.float64()) for name in LOGGED_SCORES),
            ("fallback_used", pa.bool_()),
            ("model_calls", pa.int64()),
            ("input_tokens", pa.int64()),
            ("output_tokens", pa.int64()),
            ("cost_usd", pa.float64()),
            ("tool_calls", pa.int64()),
            ("search_calls", pa.int64()),
            ("read_calls", pa.int64()),
            ("models", pa.list_(pa.string())),
            ("wall_s", pa.float64()),
            ("termination", pa.string()),
            ("error", pa.string()),
            ("notebook_carried", pa.bool_()),
            ("evidence", pa.string()),
            ("stop_reason", pa.string()),
            ("offset", pa.int64()),
            ("length", pa.int64()),
        ]
    )


def column_probs(value: Sequence[Mapping[str, Any]] | None) -> dict[str, float] | None:
    """The probabilities a pairs column (``probs``, ``market_probs``) holds, in their order, as
    the record's field (``None`` for none)."""
    return None if value is None else {d["label"]: d["p"] for d in value}


FORECAST_COLUMNS = ("probs", "usable", "failure_reason", "choice", "confidence", "replies")
"""The columns a step's forecast fills (``forecast_row``)."""


def _float(value: Any) -> Any:
    # a record's JSON writes a float that is not finite as text ("NaN", "Infinity")
    return float(value) if isinstance(value, str) else value


def _instant(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def forecast_row(forecast: Mapping[str, Any]) -> dict[str, Any]:
    """The companion's columns of a forecast as a step record's JSON holds it
    (``FORECAST_COLUMNS``): ``replies`` counts the replies its raw text holds (more than one:
    read only after a retry, ``answer_attempts``)."""
    return {
        "probs": forecast["probs"],
        "usable": forecast["usable"],
        "failure_reason": forecast["failure_reason"],
        "choice": forecast["choice"],
        "confidence": _float(forecast["confidence"]),
        "replies": len(answer_attempts(forecast["raw_text"])),
    }


def step_row(record: Mapping[str, Any], offset: int, length: int) -> dict[str, Any]:
    """The companion's row of a step record given as its JSON object (its line in the step file,
    parsed), whose line is ``length`` bytes at ``offset``: the one rule of the writer and of a
    rebuild from the step file. Raises ``KeyError`` or ``TypeError`` where a field is absent or
    not of its JSON type."""
    g, s, e = record["grading"], record["scores"], record["episode"]
    usage, calls, tally = e["usage"], e["tool_calls"], e["evidence_tally"]
    return {
        "run_id": record["run_id"],
        "agent": record["agent"],
        "role": record["role"],
        "setting": record["setting"],
        "event_id": record["event_id"],
        "step_index": record["step_index"],
        "cutoff": _instant(record["cutoff"]),
        "rollout": record["rollout"],
        "split": record["split"],
        "category": record["category"],
        "attempt": record["attempt"],
        **forecast_row(record["forecast"]),
        "truth": g["truth"],
        "labels": g["labels"],
        "market_probs": g["market_probs"],
        "market_at": _instant(g["market_at"]),
        "market_age_days": _float(g["market_age_days"]),
        "resolved_at": _instant(g["resolved_at"]),
        **{name: _float(s[name]) for name in LOGGED_SCORES},
        "fallback_used": s["fallback_used"],
        "model_calls": usage["model_calls"],
        "input_tokens": usage["input_tokens"],
        "output_tokens": usage["output_tokens"],
        "cost_usd": _float(usage["cost_usd"]),
        "tool_calls": len(calls),
        "search_calls": sum(c["name"] == "search" for c in calls),
        "read_calls": sum(c["name"] == "read" for c in calls),
        "models": sorted({c["model"] for c in e["model_calls"]}),
        "wall_s": _float(e["wall_s"]),
        "termination": e["termination"],
        "error": e["error"],
        "notebook_carried": e["notebook_carried"],
        "evidence": evidence_label_of(
            None if tally is None else EvidenceTally.model_validate(tally)
        ),
        "stop_reason": e["stop_reason"],
        "offset": offset,
        "length": length,
    }


@dataclass(frozen=True)
class Segment:
    """A contiguous byte range of the step file a part covers, with its records' count and the
    SHA-256 of its bytes."""

    start: int
    end: int
    rows: int
    lines: int
    """Lines of the range (its records and any blank lines): a later line's number."""
    sha256: str


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
                int(s["start"]), int(s["end"]), int(s["rows"]), int(s["lines"]), str(s["sha256"])
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


def rows_table(rows: Sequence[dict[str, Any]], schema: pa.Schema | None = None) -> pa.Table:
    """The companion's rows (of ``schema``'s columns, else all) as one Arrow table, by Arrow's
    JSON reader: its conversion of Python objects imports pandas (half a second of a run)."""
    import pyarrow as pa
    import pyarrow.json as pj
    from pydantic_core import to_json

    schema = schema or columns_schema()
    if not rows:  # ``schema.empty_table()`` imports pandas too
        return pa.Table.from_batches([], schema=schema)
    data = b"\n".join([to_json(row, inf_nan_mode="constants") for row in rows])
    return pj.read_json(
        pa.BufferReader(data),
        read_options=pj.ReadOptions(use_threads=False, block_size=len(data) + 1),
        parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore"),
    )


def records_table(records: Iterable[StepRecord]) -> pa.Table:
    """The companion's rows of records held in memory, each row's ``offset`` its record's index
    (``length`` -1)."""
    return rows_table([step_row(r.model_dump(mode="json"), i, -1) for i, r in enumerate(records)])


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
        self._rows: list[dict[str, Any]] = []
        self._start = end
        self._hash = hashlib.sha256()
        self._lines = 0
        self._small: list[PartInfo] = []

    def add(self, data: bytes) -> None:
        """A record was appended as ``data`` (its line with the newline) at the end: its row is
        made from the line as written, as a rebuild from the step file makes it."""
        if self.enabled:
            self._rows.append(step_row(from_json(data), self.end, len(data) - 1))
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
        self._rows, self._start, self._hash, self._lines = [], self.end, hashlib.sha256(), 0
        self._small.append(PartInfo(path, self.header_sha256, (segment,), segment.rows))
        if len(self._small) >= _MERGE_AT:
            merge_parts(self.folder, self._small, self.header_sha256)
            self._small = []  # the merged part is left as it is from now on
