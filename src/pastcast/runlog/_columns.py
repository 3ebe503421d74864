"""Reading a run log through its columnar companion (``_companion``): the scalar columns of every
step, checked against the step file before they are trusted, and full records read by offset.

A part is used only when it was written for this header (the SHA-256 of ``run.header.json``),
continues the parts before it from offset 0, ends inside the step file, holds as many rows as
its records, and the step file's bytes it covers hash as it recorded. Hashing is skipped when
the step file and the parts are exactly as they were at the last check (device, inode, size,
modification and change times, ``verified.json``): a hand edit changes the change time, which
no user can set back. What is not covered (a crash's tail, a writer's last records, a part
that failed its check) is read from the JSONL and, when no writer holds the log, written as
parts; a part that failed is removed and said in a note, never used.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from pastcast import safejson
from pastcast.collector import collector_paused
from pastcast.errors import FieldError
from pastcast.records import Forecast
from pastcast.runlog._companion import (
    FORECAST_COLUMNS,
    PartInfo,
    Segment,
    claim_columns_dir,
    columns_path,
    columns_schema,
    file_stamp,
    forecast_row,
    part_files,
    part_info,
    read_part,
    read_stamp,
    records_table,
    rows_table,
    segment_hasher,
    step_row,
    write_part,
    write_stamp,
)
from pastcast.runlog._io import RunLog, _from_v1, _read_header, header_path, read_run_log
from pastcast.runlog._scan import scan
from pastcast.runlog._schema import SCHEMA_VERSION, RunHeader, StepRecord
from pastcast.runlog._v2 import V2, v2_step
from pastcast.validation import first_problem

if TYPE_CHECKING:
    import pyarrow as pa

_REBUILD_BYTES = 128 << 20
"""Bytes of step lines per part when the companion is rebuilt from the JSONL."""

_CHUNK = 8 << 20
"""Bytes read at a time (hashing a part, rebuilding): a read of more leaves the processor's
cache before its lines are read."""

_Convert = Callable[[dict[str, Any]], dict[str, Any]] | None
"""What makes a step line of an older schema the current record's JSON (None: none needed)."""


@dataclass(frozen=True)
class StepColumns:
    """A run log's step columns (``columns_schema``), one row per complete step line in file
    order, with its header; ``record`` reads a full step by the row's ``offset`` and ``length``.
    A log held in memory (``held``) is the same, its records read from memory."""

    path: Path
    header: RunHeader
    table: pa.Table
    truncated_tail: bool = False
    """True when the last line was an incomplete write (a crash mid-record); it is left out."""
    notes: tuple[str, ...] = ()
    """A companion part that was not used, and why (stale, truncated, foreign, edited)."""
    parts: tuple[Path, ...] = ()
    """The companion's part files checked and covering the first rows (scan them lazily)."""
    tail_rows: int = 0
    """The last rows, read from the JSONL: not (yet) in a part (``table``'s last rows)."""
    _convert: _Convert = field(default=None, repr=False)
    _held: tuple[StepRecord, ...] | None = field(default=None, repr=False)
    """The records of a log held in memory (``held``): a row's offset is its record's index."""

    @classmethod
    def held(cls, log: RunLog) -> StepColumns:
        """The step columns of a run log held in memory (a run in the tests, one just made):
        the rows its companion would hold, each row's ``offset`` its record's index (``length``
        -1), the records read from memory."""
        table = records_table(log.steps)
        return cls(log.path, log.header, table, log.truncated_tail, _held=log.steps)

    def record(self, offset: int, length: int) -> StepRecord:
        """The full step record whose line is ``length`` bytes at ``offset``."""
        return next(self.records([(offset, length)]))

    def with_forecasts(self, rows: Sequence[int], forecasts: Sequence[Forecast]) -> StepColumns:
        """These columns with the forecast of each of ``rows`` (indices into ``table``)
        replaced by ``forecasts`` (a forecast read again): the ``FORECAST_COLUMNS`` the table
        holds. The full records, read by offset, keep the forecasts as logged."""
        import numpy as np
        import pyarrow as pa

        names = [c for c in FORECAST_COLUMNS if c in self.table.column_names]
        if not len(rows) or not names:
            return self
        new = rows_table([forecast_row(f, tuple(names)) for f in forecasts], names)
        n = self.table.num_rows
        order = np.arange(n, dtype=np.int64)
        order[np.asarray(rows, dtype=np.int64)] = n + np.arange(len(rows), dtype=np.int64)
        table = self.table
        for name in names:
            column = table.column(name)
            both = pa.chunked_array([*column.chunks, *new.column(name).chunks], column.type)
            table = table.set_column(table.schema.get_field_index(name), name, both.take(order))
        return replace(self, table=table)

    def fingerprint(self) -> str | None:
        """A digest of what the rows were read from: the header's hash and the digest of every
        byte range the checked parts cover, in order; None when some rows are not in a part (a
        tail read from the JSONL) or ``table`` is not every row of the parts (rows left out).
        An index derived from the rows and stored with it is current while this is unchanged."""
        if self.tail_rows or not self.parts:
            return None
        infos = [part_info(p) for p in self.parts]
        if any(isinstance(i, str) for i in infos):
            return None
        parts = [i for i in infos if not isinstance(i, str)]
        if sum(i.rows for i in parts) != self.table.num_rows:
            return None
        digest = hashlib.sha256(parts[0].header_sha256.encode())
        for info in parts:
            for seg in info.segments:
                digest.update(f"{seg.start}:{seg.end}:{seg.rows}:{seg.blake3};".encode())
        return digest.hexdigest()

    def records(self, spans: Iterable[tuple[int, int]]) -> Iterator[StepRecord]:
        """Full step records by (offset, length), one at a time (memory bounded by one)."""
        if self._held is not None:
            held = self._held
            yield from (held[offset] for offset, _ in spans)
            return
        with self.path.open("rb") as fh:
            for offset, length in spans:
                fh.seek(offset)
                yield _parse(fh.read(length), self.path, f"byte {offset}", self._convert)

    def stream(self, rows: Iterable[int] | None = None) -> Iterator[StepRecord]:
        """The full record of every row of ``table`` in order (or of ``rows``, indices), read by
        offset one at a time: a reader holds one record however long the log."""
        offsets = self.table.column("offset").to_pylist()
        lengths = self.table.column("length").to_pylist()
        picked = range(len(offsets)) if rows is None else rows
        return self.records((offsets[i], lengths[i]) for i in picked)


def _parse(line: bytes, path: Path, where: str, convert: _Convert) -> StepRecord:
    try:
        obj = safejson.loads(line)
    except json.JSONDecodeError as exc:
        raise FieldError("", f"{path}:{where}: not valid JSON ({exc.msg})") from None
    if not isinstance(obj, dict):
        raise FieldError("", f"{path}:{where}: expected a JSON object")
    try:
        return StepRecord.model_validate(convert(obj) if convert else obj)
    except ValidationError as exc:
        raise FieldError("", first_problem(exc, f"{path}:{where}")) from None


def _converter(header: RunHeader) -> _Convert:
    return v2_step if header.schema_version == V2 else None


def _hash_check(log: Path, parts: list[PartInfo]) -> int:
    """How many leading ``parts`` the step file's bytes hash as they recorded."""
    with log.open("rb") as fh:
        for k, part in enumerate(parts):
            for seg in part.segments:
                fh.seek(seg.start)
                digest, left = segment_hasher(), seg.end - seg.start
                while left > 0:
                    chunk = fh.read(min(_CHUNK, left))
                    if not chunk:
                        break
                    digest.update(chunk)
                    left -= len(chunk)
                if left or digest.hexdigest() != seg.blake3:
                    return k
    return len(parts)


def _chain(
    log: Path, header_sha256: str, size: int, stamp: dict[str, Any]
) -> tuple[list[PartInfo], list[str], list[Path]]:
    """The parts that continue each other from offset 0 within the step file, each as the
    companion recorded writing it, and why each of the others cannot be used."""
    valid: list[PartInfo] = []
    bad: list[str] = []
    superseded: list[Path] = []
    expected = 0
    recorded = stamp.get("parts") if stamp.get("header_sha256") == header_sha256 else None
    for path in part_files(columns_path(log)):
        info = part_info(path)
        if isinstance(info, str):
            bad.append(info)
        elif info.header_sha256 != header_sha256:
            bad.append(f"{path.name} was written for another run header (a foreign companion)")
        elif not isinstance(recorded, dict) or recorded.get(path.name) != file_stamp(path):
            bad.append(
                f"{path.name} is not the file the companion recorded writing (edited, replaced "
                "or copied since, or a crash came before it was recorded)"
            )
        elif info.start < expected and info.end <= expected:
            superseded.append(path)  # merged into the part before (a crash before its removal)
        elif info.start != expected:
            bad.append(f"{path.name} starts at byte {info.start}, not {expected} (stale)")
        elif info.end > size:
            bad.append(
                f"{path.name} covers bytes up to {info.end}, past the step file's {size} "
                "(the step file was cut or rewritten)"
            )
        elif info.rows != sum(s.rows for s in info.segments):
            bad.append(f"{path.name} holds {info.rows} rows for {info.segments[-1].rows} records")
        else:
            valid.append(info)
            expected = info.end
    return valid, bad, superseded


def _lock_shared(log: Path) -> int | None:
    """A descriptor of the step file holding a shared lock, or None while a writer holds it
    (then nothing is written: the writer owns the companion)."""
    try:
        fd = os.open(log, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _lines(data: bytearray, stop: int) -> Iterator[bytearray | memoryview]:
    """The lines of ``data[:stop]`` with their ends, as ``splitlines`` cuts them; not copied
    where none ends in a carriage return (a copy of a block costs a third of its rows' CPU)."""
    if data.find(b"\r", 0, stop) >= 0:
        yield from data[:stop].splitlines(keepends=True)
        return
    view, start = memoryview(data), 0
    while start < stop:
        end = data.find(b"\n", start, stop) + 1 or stop
        yield view[start:end]
        start = end


def _records(
    data: bytearray, stop: int, pos: int, lineno: int, log: Path, convert: _Convert, rows: list[Any]
) -> tuple[int, bool]:
    """Add to ``rows`` those of the step lines in ``data[:stop]`` (at byte ``pos``, after line
    ``lineno``): (the newlines they end with, whether the last line, without one, was cut
    mid-write). A line of the current schema is read by ``scan``; any other, and one it cannot
    vouch for, is parsed and validated as a full record, and raises ``FieldError`` naming its
    line if it is not one."""
    ends = 0
    for line in _lines(data, stop):
        lineno += 1
        ended = line[-1] == ord("\n")
        step = scan(line) if convert is None else None
        if step is None and (text := bytes(line)).strip():
            if not ended:  # the file's last line (only it lacks a newline): cut mid-write?
                try:
                    safejson.loads(text)
                except json.JSONDecodeError:
                    return ends, True
            step = _parse(text, log, str(lineno), convert)
        if step is not None:
            rows.append(step_row(step, pos, len(line) - ended))
        pos += len(line)
        ends += ended
    return ends, False


def _tail(
    log: Path, start: int, size: int, first_line: int, convert: _Convert
) -> Iterator[tuple[pa.Table, Segment | None, bool]]:
    """The rows of the step file from byte ``start`` to ``size`` in parts of whole lines (about
    ``_REBUILD_BYTES`` each, read ``_CHUNK`` at a time: hashed and read while in the processor's
    cache): (rows, the segment of them that ends at a newline, whether the last line was cut
    mid-write), each record read and validated as the writer's (``step_row``); the file's last
    line without its newline is read but never covered (a writer may be finishing it)."""
    rows: list[Any] = []
    lineno, lines, first, digest = first_line, 0, start, segment_hasher()
    # Two buffers read into in turn (a new one per read costs its pages' faults), each hashed
    # by another thread (the hasher lets go of the lock) while this one reads the other's lines.
    buffers = [bytearray(min(_CHUNK, size - start)) for _ in range(2)]
    hashing: list[Future[object] | None] = [None, None]
    with log.open("rb") as fh, ThreadPoolExecutor(1) as hasher:
        fh.seek(start)
        pos, turn = start, 0
        while pos < size:
            turn ^= 1
            if (earlier := hashing[turn]) is not None:
                earlier.result()  # the buffer's bytes are hashed: it may be read into again
            data = buffers[turn]
            got = fh.readinto(memoryview(data)[: size - pos])
            if not got:
                break
            end = data.rfind(b"\n", 0, got) + 1
            if not end and pos + got < size:  # a line longer than a chunk: a buffer of its own
                data = data[:got] + fh.readline(size - pos - got)
                got = len(data)
                end = data.rfind(b"\n") + 1
            hashed = hashing[turn] = hasher.submit(digest.update, memoryview(data)[:end])
            ends = _records(data, end, pos, lineno, log, convert, rows)[0]
            lineno, lines, pos, rest = lineno + ends, lines + ends, pos + end, data[end:got]
            last = rest and pos + len(rest) >= size  # the last line, without its newline
            if rows and (last or pos >= size or pos - first >= _REBUILD_BYTES):
                hashed.result()  # (and the one before: the thread hashes in turn)
                yield (
                    rows_table(rows),
                    Segment(first, pos, len(rows), lines, digest.hexdigest()),
                    False,
                )
                rows, lines, first, digest = [], 0, pos, segment_hasher()
            if last:
                cut = _records(rest, len(rest), pos, lineno, log, convert, rows)[1]
                yield rows_table(rows), None, cut
                return
            fh.seek(pos)


def _sync(
    log: Path,
    header: RunHeader,
    header_sha256: str,
    columns: Sequence[str] | None,
    *,
    update: bool,
    lock_held: bool,
) -> tuple[list[pa.Table], bool, list[str], tuple[Path, ...], int]:

    folder = columns_path(log)
    convert = _converter(header)
    lock = None if lock_held or not update else _lock_shared(log)
    may_write = (lock_held or lock is not None) and claim_columns_dir(folder)
    try:
        size = os.stat(log).st_size
        stamp = read_stamp(folder)
        valid, bad, superseded = _chain(log, header_sha256, size, stamp)
        if valid and stamp.get("step_file") != file_stamp(log):
            good = _hash_check(log, valid)
            bad += [
                f"{p.path.name}: the step file's bytes it covers differ from those it was "
                "written from (edited or replaced since)"
                for p in valid[good:]
            ]
            valid = valid[:good]
        notes = []
        if may_write:
            for path in superseded:
                path.unlink(missing_ok=True)
        if bad:
            what = "rebuilt from the step file" if may_write else "read from the step file"
            notes = [f"{log}: columnar companion {folder.name}: {why}; {what}" for why in bad]
            if may_write:
                kept = {p.path for p in valid}
                for path in part_files(folder):
                    if path not in kept:
                        path.unlink(missing_ok=True)
        tables = [read_part(p.path, columns) for p in valid]
        covered = valid[-1].end if valid else 0
        tail_rows = 0
        first_line = sum(s.lines for p in valid for s in p.segments)
        truncated = wrote = False
        # the lines' rows and tables are no garbage: the collector's passes over them were a
        # twentieth of a rebuild's CPU (docs/measurements/run-log-readers.md)
        with collector_paused():
            for table, segment, cut in _tail(log, covered, size, first_line, convert):
                truncated = truncated or cut
                if not table.num_rows:
                    continue
                if may_write and segment is not None and segment.rows:
                    path = write_part(folder, table, header_sha256, [segment])
                    valid.append(PartInfo(path, header_sha256, (segment,), segment.rows))
                    wrote = True
                else:
                    tail_rows += table.num_rows
                tables.append(table.select(list(columns)) if columns is not None else table)
        if may_write and (wrote or bad or stamp.get("step_file") != file_stamp(log)):
            write_stamp(folder, header_sha256, [p.path for p in valid], file_stamp(log))
        return tables, truncated, notes, tuple(p.path for p in valid), tail_rows
    finally:
        if lock is not None:
            os.close(lock)


def _header_bytes(log: Path) -> tuple[RunHeader, str]:
    hp = header_path(log)
    header = _read_header(hp)
    try:
        data = hp.read_bytes()
    except OSError as exc:
        raise FieldError("", f"{hp}: unreadable run header ({exc})") from None
    return header, hashlib.sha256(data).hexdigest()


def read_step_columns(
    path: str | Path, columns: Sequence[str] | None = None, *, update: bool = True
) -> StepColumns:
    """The step columns of the run log ``path`` (its step file), only ``columns`` when given,
    from its columnar companion once checked against the step file; what the companion does not
    cover is read from the JSONL and, with ``update`` and no writer holding the log, added to it
    (a companion folder pastcast did not make is never written into). Raises ``FieldError``
    naming the file, line and field for a step line that is not a valid record."""
    import pyarrow as pa

    p = Path(path)
    if p.name.endswith(".header.json"):
        raise FieldError("", f"{p}: pass the step file (.jsonl) of the run log, not its header")
    if columns is not None:
        columns = list(columns)  # Parquet reads a list of names, not any sequence
        unknown = [c for c in columns if c not in columns_schema().names]
        if unknown:
            raise ValueError(f"no step column {unknown[0]!r}")
    if not header_path(p).is_file():  # schema 1 (header on line 1): the full records, once
        full = read_run_log(p)
        table = rows_table(
            [step_row(s, *n) for s, n in zip(full.steps, _v1_spans(p), strict=False)]
        )
        kept = table.select(list(columns)) if columns is not None else table
        return StepColumns(
            p, full.header, kept, full.truncated_tail, tail_rows=table.num_rows, _convert=_from_v1
        )
    header, header_sha256 = _header_bytes(p)
    if not p.is_file():
        empty = columns_schema().empty_table()
        return StepColumns(p, header, empty.select(list(columns)) if columns else empty)
    tables, truncated, notes, parts, tail_rows = _sync(
        p, header, header_sha256, columns, update=update, lock_held=False
    )
    schema = columns_schema()
    if columns is not None:
        schema = pa.schema([schema.field(c) for c in columns])
    table = pa.concat_tables(tables) if tables else schema.empty_table()
    return StepColumns(
        p, header, table, truncated, tuple(notes), parts, tail_rows, _converter(header)
    )


def _v1_spans(path: Path) -> Iterator[tuple[int, int]]:
    """The (offset, length) of each step line of a schema-1 log: its non-blank lines after the
    header's."""
    pos, header_seen = 0, False
    with path.open("rb") as fh:
        for line in fh:
            if line.strip():
                if header_seen:
                    yield pos, len(line) - (1 if line.endswith(b"\n") else 0)
                header_seen = True
            pos += len(line)


def refresh_companion(path: Path) -> None:
    """Bring the companion of the step file ``path`` up to date, for its writer (which holds the
    log's lock); called when a writer opens an existing log."""
    header, header_sha256 = _header_bytes(path)
    if header.schema_version == SCHEMA_VERSION:
        _sync(path, header, header_sha256, ["offset"], update=True, lock_held=True)
