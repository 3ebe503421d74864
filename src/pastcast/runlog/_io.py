"""Reading and writing run logs: steps append-only in JSONL, flushed per record, the header in a
JSON file beside them (``header_path``); everything validated on read.

Since schema 2 the step file keeps only step records, so it loads as one table (polars, pandas,
duckdb, Hugging Face ``datasets``). Logs of schema 2 (notebooks as text) and schema 1 (the header
as the first line) are still read, converted to schema 3 record by record, and never resumed.

One writer at a time: ``RunLogWriter`` holds an exclusive ``flock`` on the step file itself for
as long as it is open. The lock belongs to the file, not to its name: a second process is refused
whichever path it names the file by (a hard link, a symbolic link, another route to the folder),
with a message naming the first one's pid; the kernel releases the lock when its holder dies,
even by ``kill -9``. No lock file is made beside the log.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import stat
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from pastcast import safejson
from pastcast.atomic import fsync_dir, write_atomic
from pastcast.errors import FieldError
from pastcast.records import RETRYABLE_FAILURES, FailureReason, Notebook, StepKey
from pastcast.runlog._companion import CompanionWriter
from pastcast.runlog._definition import definition_mismatch
from pastcast.runlog._schema import SCHEMA_VERSION, RunHeader, StepRecord
from pastcast.runlog._v1 import V1, v1_header, v1_step
from pastcast.runlog._v2 import V2, v2_step
from pastcast.validation import first_problem

_HEADER_SUFFIX = ".header.json"


def header_path(log_path: str | Path) -> Path:
    """The run header beside a step file: ``runs/x/run.jsonl`` -> ``runs/x/run.header.json``."""
    return Path(log_path).with_suffix(_HEADER_SUFFIX)


def retried_path(log_path: str | Path) -> Path:
    """Where records of failed steps go when they are run again (``retry_failed``):
    ``run.jsonl`` -> ``run.retried.jsonl``."""
    return Path(log_path).with_suffix(".retried.jsonl")


@dataclass(frozen=True)
class RunLog:
    path: Path
    header: RunHeader
    steps: tuple[StepRecord, ...]
    truncated_tail: bool = False
    """True when the last line was an incomplete write (a crash mid-record); it is ignored."""


def _objects(path: Path) -> tuple[list[tuple[int, dict[str, Any]]], bool]:
    """The JSON objects of a JSONL file with their line numbers, and whether the last line was
    cut by a crash (then it is left out)."""
    if not path.is_file():
        return [], False
    with path.open("rb") as fh:  # decoded line by line, so bad bytes are named by their line
        lines = fh.readlines()
    out: list[tuple[int, dict[str, Any]]] = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = safejson.loads(line)
        except json.JSONDecodeError as exc:
            if lineno == len(lines) and not line.endswith(b"\n"):
                return out, True  # a crash mid-write: everything before it is intact
            raise FieldError("", f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise FieldError("", f"{path}:{lineno}: expected a JSON object")
        out.append((lineno, obj))
    return out, False


def _read_header(path: Path) -> RunHeader:
    try:
        obj = safejson.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise FieldError("", f"{path}: unreadable run header ({exc})") from None
    if not isinstance(obj, dict):
        raise FieldError("", f"{path}: expected a JSON object")
    _check_version(obj, (SCHEMA_VERSION, V2), str(path))
    try:
        return RunHeader.model_validate(obj)
    except ValidationError as exc:
        raise FieldError("", first_problem(exc, str(path))) from None


def _check_version(obj: dict[str, Any], readable: tuple[int, ...], where: str) -> None:
    version = obj.get("schema_version")
    if version not in readable:
        raise FieldError(
            "",
            f"{where}: field schema_version: unsupported version {version!r} "
            f"(this pastcast reads {SCHEMA_VERSION} and {V2}, and {V1} with the header on line 1)",
        )


def read_run_log(path: str | Path) -> RunLog:
    """Read and validate a run log (the step file's path). Raises ``FieldError`` naming file,
    line and field."""
    p = Path(path)
    if p.name.endswith(_HEADER_SUFFIX):
        raise FieldError("", f"{p}: pass the step file (.jsonl) of the run log, not its header")
    hp = header_path(p)
    if not p.is_file() and not hp.is_file():
        raise FieldError("", f"{p}: no such run log")
    objects, truncated = _objects(p)
    convert: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    if hp.is_file():
        header = _read_header(hp)
        if header.schema_version == V2:
            convert = v2_step
    elif objects and objects[0][1].get("kind") == "header":
        lineno, first = objects.pop(0)
        _check_version(first, (V1,), f"{p}:{lineno}")
        try:
            header = RunHeader.model_validate(v1_header(first))
        except ValidationError as exc:
            raise FieldError("", first_problem(exc, f"{p}:{lineno}")) from None
        convert = _from_v1
    else:
        where = f"{p}:1" if objects else str(p)
        raise FieldError(
            "",
            f"{where}: no run header: {hp.name} is missing beside it (and line 1 is not a "
            f"schema-{V1} header)",
        )
    steps: list[StepRecord] = []
    for lineno, obj in objects:
        try:
            steps.append(StepRecord.model_validate(convert(obj) if convert else obj))
        except ValidationError as exc:
            raise FieldError("", first_problem(exc, f"{p}:{lineno}")) from None
    return RunLog(p, header, tuple(steps), truncated)


def _from_v1(obj: dict[str, Any]) -> dict[str, Any]:
    return v2_step(v1_step(obj))


def _json_line(record: StepRecord) -> str:
    """The record as one JSON line. Text UTF-8 cannot encode (a lone surrogate, which a model's
    JSON escapes may carry) is written as U+FFFD: any text a model returns can be logged."""
    try:
        return record.model_dump_json()
    except PydanticSerializationError:
        clean = _encodable(record.model_dump(mode="json"))
        return StepRecord.model_validate(clean).model_dump_json()


def _encodable(value: Any) -> Any:
    if isinstance(value, str):
        # Through UTF-16, a split pair joins again and each lone surrogate becomes one U+FFFD.
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if isinstance(value, dict):
        return {_encodable(k): _encodable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encodable(v) for v in value]
    return value


def _open_step_file(path: Path) -> tuple[int, bool]:
    """A read-write descriptor of the step file, made if absent, and whether this call made it.
    Anything but a regular file (a folder, a FIFO, a device) is refused."""
    flags = os.O_RDWR | os.O_CLOEXEC | os.O_NONBLOCK  # a FIFO must not block the open
    try:
        try:
            return _regular(path, os.open(path, flags | os.O_CREAT | os.O_EXCL, 0o644)), True
        except FileExistsError:
            return _regular(path, os.open(path, flags)), False
    except FieldError:
        raise
    except OSError as exc:
        why = "a symbolic link to nothing" if path.is_symlink() else exc.strerror or str(exc)
        raise FieldError("", f"run log {path}: cannot open it for writing ({why})") from None


def _regular(path: Path, fd: int) -> int:
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise FieldError("", f"run log {path}: not a regular file; a run log is written to a file")
    fcntl.fcntl(fd, fcntl.F_SETFL, os.O_APPEND)  # blocking again; every write at the end
    return fd


def _lock(log: Path, fd: int) -> None:
    """Take the exclusive lock on the step file ``fd``, or raise ``FieldError`` naming the
    process holding it."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise FieldError(
            "",
            f"run log {log} is being written by another process (pid {_holder(fd)}); wait for "
            "it to finish or stop it, or write to another --out",
        ) from None


def _holder(fd: int) -> str:
    """The pid holding a ``flock`` on the file ``fd`` is open on, from ``/proc/locks``."""
    st = os.fstat(fd)
    file_id = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        table = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return "unknown"
    for line in table.splitlines():
        fields = line.split()  # "1: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE 0 EOF"
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == file_id:
            return fields[4]  # a waiter's line has "->" in place of FLOCK
    return "unknown"


class RunLogWriter:
    """Appends step records to a run log; each is flushed and fsynced before ``write`` returns
    (or, with ``sync=False``, at the next ``sync``: several records, one fsync).

    A new log gets its header (``header_path``) written atomically before any step. Opening an
    existing log (to resume) refuses a run whose definition differs from the log's header
    (``run_definition``: dataset, configuration, agents, prompts) or a log of an older schema,
    drops a partial last line left by a crash, and ends a complete last record that lacks its
    newline, so nothing already written is lost and nothing is half-written.

    ``retry_failed``: steps recorded as unusable for one of these reasons (by default
    ``RETRYABLE_FAILURES``: a provider that failed, a model that was missing) are run again;
    their records move to ``retried_path`` and ``attempts`` says how often each was tried.
    """

    def __init__(
        self,
        path: str | Path,
        header: RunHeader,
        *,
        retry_failed: bool | Collection[FailureReason] = False,
    ) -> None:
        self.path = Path(path)
        self.header_path = header_path(self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FieldError(
                "", f"run log {self.path}: cannot make its folder ({exc.strerror or exc})"
            ) from None
        fd, made = _open_step_file(self.path)
        self._wrote_header = False
        self._held: list[int] = [fd]
        """Every step file this writer locked: a rewrite locks its new file before renaming it
        into place and keeps the old one locked, so no writer slips in between."""
        try:
            _lock(self.path, fd)
            self._open(fd, header, retry_failed)
            self._columns = self._open_columns()
        except BaseException:
            if made and _same_file(self.path, fd) and os.fstat(fd).st_size == 0:
                self.path.unlink(missing_ok=True)  # nothing of a refused or failed run stays
                if self._wrote_header:
                    self.header_path.unlink(missing_ok=True)
            self._release()
            raise

    def _open(
        self, fd: int, header: RunHeader, retry_failed: bool | Collection[FailureReason]
    ) -> None:
        self.done: set[StepKey] = set()
        self.notebooks: dict[StepKey, Notebook] = {}
        """The notebook each recorded step ended with (memory-on chains resume from it)."""
        self.attempts: dict[StepKey, int] = {}
        """Steps to run again with the attempts already recorded for them."""
        if self.header_path.exists() or os.fstat(fd).st_size > 0:
            existing = read_run_log(self.path)
            if existing.header.schema_version != SCHEMA_VERSION:
                raise FieldError(
                    "",
                    f"run log {self.path} was written with run-log schema "
                    f"{existing.header.schema_version}; this run writes schema {SCHEMA_VERSION}, "
                    "and an older log is read but never resumed: write the run to a new run log",
                )
            # The header must describe every record under it: a different run never appends.
            mismatch = definition_mismatch(self.path, existing.header, header)
            if mismatch is not None:
                raise FieldError("", mismatch)
            if existing.truncated_tail:
                _drop_partial_tail(fd)
            else:
                _end_last_line(fd)
            self.header = existing.header
            reasons: set[FailureReason] = set()
            if retry_failed is True:
                reasons = set(RETRYABLE_FAILURES)
            elif retry_failed is not False:
                reasons = set(retry_failed)
            steps = existing.steps
            again = [
                s for s in steps if not s.forecast.usable and s.forecast.failure_reason in reasons
            ]
            if again:
                fd = self._set_aside(again)
                self.attempts = {s.key: s.attempt for s in again}
                steps = tuple(s for s in steps if s.key not in self.attempts)
            self.done = {s.key for s in steps}
            self.notebooks = {
                s.key: s.episode.notebook_out for s in steps if s.episode.notebook_out is not None
            }
        else:
            self.header = header
            self._wrote_header = True
            write_atomic(self.header_path, header.model_dump_json(indent=2) + "\n")
        self._fh: IO[bytes] = os.fdopen(os.dup(fd), "ab")

    def _open_columns(self) -> CompanionWriter:
        """The columnar companion brought up to date with the step file (a resume, a rewrite),
        then written as records are appended."""
        from pastcast.runlog._columns import refresh_companion

        if not self._wrote_header:
            refresh_companion(self.path)
        digest = hashlib.sha256(self.header_path.read_bytes()).hexdigest()
        end = os.fstat(self._fh.fileno()).st_size
        return CompanionWriter(self.path, digest, end, fresh=self._wrote_header)

    def _set_aside(self, records: list[StepRecord]) -> int:
        """Move records of steps to run again to ``retried_path``, then rewrite the step file
        without them (atomically); the descriptor of the new step file, locked. After a crash
        between the two, the next open moves them again; records already set aside are not
        appended twice."""
        aside = retried_path(self.path)
        present = {_key_of(obj) for _, obj in _objects(aside)[0]}
        with aside.open("a", encoding="utf-8") as fh:
            for rec in records:
                if (rec.key, rec.attempt) not in present:
                    fh.write(rec.model_dump_json() + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        drop = {(r.key, r.attempt) for r in records}
        kept: list[str] = []
        with self.path.open("r", encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                if _key_of(json.loads(line)) not in drop:
                    kept.append(line if line.endswith("\n") else line + "\n")
        fd = _replace_locked(self.path, "".join(kept).encode("utf-8"))
        self._held.append(fd)
        return fd

    def sync(self, *, final: bool = False) -> None:
        """Flush and fsync what ``write(..., sync=False)`` appended (``final``: the last time)."""
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._columns.synced(final=final)

    def write(self, record: StepRecord, *, sync: bool = True) -> None:
        """Append ``record`` as one line (a step already recorded is not written again)."""
        if record.key in self.done:
            return
        data = (_json_line(record) + "\n").encode("utf-8")
        self._fh.write(data)
        self._columns.add(data)
        if sync:
            self.sync()
        self.done.add(record.key)

    def close(self) -> None:
        try:
            if not self._fh.closed:
                self.sync(final=True)
            self._fh.close()
        finally:
            self._release()

    def _release(self) -> None:
        for fd in self._held:  # closing the last descriptor of a file releases its lock
            os.close(fd)
        self._held.clear()

    def __enter__(self) -> RunLogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _drop_partial_tail(fd: int) -> None:
    """Cut a partial last line (a crash mid-record) off the step file, in place."""
    size = os.fstat(fd).st_size
    start = max(0, size - (1 << 20))
    while True:  # back to the last newline, a megabyte at a time
        end = os.pread(fd, size - start, start).rfind(b"\n")
        if end >= 0 or start == 0:
            break
        size, start = start, max(0, start - (1 << 20))
    os.ftruncate(fd, start + end + 1)
    os.fsync(fd)


def _end_last_line(fd: int) -> None:
    """A complete last record without its newline (a crash between the two) gets it, so the
    next record starts on a line of its own."""
    size = os.fstat(fd).st_size
    if size and os.pread(fd, 1, size - 1) != b"\n":
        os.write(fd, b"\n")  # the descriptor appends
        os.fsync(fd)


def _replace_locked(path: Path, data: bytes) -> int:
    """Replace a file's content atomically (temporary file, fsync, rename); the new file's
    descriptor, locked before the rename, so the name never points at an unlocked log."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        view = memoryview(data)
        while view:  # a write may take only part of it
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        fcntl.fcntl(fd, fcntl.F_SETFL, os.O_APPEND)
        os.replace(tmp, path)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
    return fd


def _same_file(path: Path, fd: int) -> bool:
    try:
        st, held = path.stat(), os.fstat(fd)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino)


def _key_of(obj: dict[str, Any]) -> tuple[StepKey, int]:
    """A step line's key and attempt, read from its JSON without validating the record."""
    key = (obj["agent"], obj["setting"], obj["event_id"], obj["step_index"], obj["rollout"])
    return key, obj.get("attempt", 1)
