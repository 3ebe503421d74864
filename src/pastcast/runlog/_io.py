"""Reading and writing run logs: steps append-only in JSONL, flushed per record, the header in a
JSON file beside them (``header_path``); everything validated on read.

Since schema 2 the step file keeps only step records, so it loads as one table (polars, pandas,
duckdb, Hugging Face ``datasets``). Logs of schema 2 (notebooks as text) and schema 1 (the header
as the first line) are still read, converted to schema 3 record by record, and never resumed.

One writer at a time: ``RunLogWriter`` holds an exclusive lock (``lock_path``, ``flock``) for as
long as it is open, so a second process on the same log is refused with a message naming the
first one's pid; the kernel releases the lock when its holder dies, even by ``kill -9``.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from pastcast import safejson
from pastcast.atomic import write_atomic
from pastcast.records import RETRYABLE_FAILURES, FailureReason, Notebook, StepKey
from pastcast.runlog._definition import definition_mismatch
from pastcast.runlog._schema import SCHEMA_VERSION, RunHeader, StepRecord
from pastcast.runlog._v1 import V1, v1_header, v1_step
from pastcast.runlog._v2 import V2, v2_step
from pastcast.validation import first_problem

__all__ = [
    "RunLog",
    "RunLogError",
    "RunLogWriter",
    "header_path",
    "lock_path",
    "read_run_log",
    "retried_path",
]

_HEADER_SUFFIX = ".header.json"


class RunLogError(ValueError):
    """A run log that cannot be read; the message names the file, line and field."""


def header_path(log_path: str | Path) -> Path:
    """The run header beside a step file: ``runs/x/run.jsonl`` -> ``runs/x/run.header.json``."""
    return Path(log_path).with_suffix(_HEADER_SUFFIX)


def lock_path(log_path: str | Path) -> Path:
    """The lock a writer holds beside a step file: ``run.jsonl`` -> ``run.lock``. The file stays
    after the run (removing it would let two writers lock two different files)."""
    return Path(log_path).with_suffix(".lock")


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
            raise RunLogError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise RunLogError(f"{path}:{lineno}: expected a JSON object")
        out.append((lineno, obj))
    return out, False


def _read_header(path: Path) -> RunHeader:
    try:
        obj = safejson.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise RunLogError(f"{path}: unreadable run header ({exc})") from None
    if not isinstance(obj, dict):
        raise RunLogError(f"{path}: expected a JSON object")
    version = obj.get("schema_version")
    if version not in (SCHEMA_VERSION, V2):
        raise RunLogError(
            f"{path}: field schema_version: unsupported version {version!r} "
            f"(this pastcast reads {SCHEMA_VERSION} and {V2}, and {V1} with the header on line 1)"
        )
    try:
        return RunHeader.model_validate(obj)
    except ValidationError as exc:
        raise RunLogError(first_problem(exc, str(path))) from None


def read_run_log(path: str | Path) -> RunLog:
    """Read and validate a run log (the step file's path). Raises ``RunLogError`` naming file,
    line and field."""
    p = Path(path)
    if p.name.endswith(_HEADER_SUFFIX):
        raise RunLogError(f"{p}: pass the step file (.jsonl) of the run log, not its header")
    hp = header_path(p)
    if not p.is_file() and not hp.is_file():
        raise RunLogError(f"{p}: no such run log")
    objects, truncated = _objects(p)
    convert: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    if hp.is_file():
        header = _read_header(hp)
        if header.schema_version == V2:
            convert = v2_step
    elif objects and objects[0][1].get("kind") == "header":
        lineno, first = objects.pop(0)
        if first.get("schema_version") != V1:
            raise RunLogError(
                f"{p}:{lineno}: field schema_version: unsupported version "
                f"{first.get('schema_version')!r} (this pastcast reads {SCHEMA_VERSION} and {V2}, "
                f"and {V1} with the header on line 1)"
            )
        try:
            header = RunHeader.model_validate(v1_header(first))
        except ValidationError as exc:
            raise RunLogError(first_problem(exc, f"{p}:{lineno}")) from None
        convert = _from_v1
    else:
        where = f"{p}:1" if objects else str(p)
        raise RunLogError(
            f"{where}: no run header: {hp.name} is missing beside it (and line 1 is not a "
            f"schema-{V1} header)"
        )
    steps: list[StepRecord] = []
    for lineno, obj in objects:
        try:
            steps.append(StepRecord.model_validate(convert(obj) if convert else obj))
        except ValidationError as exc:
            raise RunLogError(first_problem(exc, f"{p}:{lineno}")) from None
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


def _lock(log: Path) -> IO[str]:
    """Take the log's exclusive lock, or raise ``RunLogError`` naming the process holding it."""
    fh = lock_path(log).open("a+", encoding="utf-8")
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.seek(0)
        holder = fh.read().strip() or "unknown"
        fh.close()
        raise RunLogError(
            f"run log {log} is being written by another process (pid {holder}); wait for it to "
            "finish or stop it, or write to another --out"
        ) from None
    fh.seek(0)
    fh.truncate()
    fh.write(f"{os.getpid()}\n")
    fh.flush()
    return fh


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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = _lock(self.path)
        try:
            self._open(header, retry_failed)
        except BaseException:
            self._lock.close()
            raise

    def _open(self, header: RunHeader, retry_failed: bool | Collection[FailureReason]) -> None:
        self.done: set[StepKey] = set()
        self.notebooks: dict[StepKey, Notebook] = {}
        """The notebook each recorded step ended with (memory-on chains resume from it)."""
        self.attempts: dict[StepKey, int] = {}
        """Steps to run again with the attempts already recorded for them."""
        if self.header_path.exists() or (self.path.exists() and self.path.stat().st_size > 0):
            existing = read_run_log(self.path)
            if existing.header.schema_version != SCHEMA_VERSION:
                raise RunLogError(
                    f"run log {self.path} was written with run-log schema "
                    f"{existing.header.schema_version}; this run writes schema {SCHEMA_VERSION}, "
                    "and an older log is read but never resumed: use a new --out"
                )
            # The header must describe every record under it: a different run never appends.
            mismatch = definition_mismatch(self.path, existing.header, header)
            if mismatch is not None:
                raise RunLogError(mismatch)
            if existing.truncated_tail:
                self._drop_partial_tail()
            else:
                self._end_last_line()
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
                self._set_aside(again)
                self.attempts = {s.key: s.attempt for s in again}
                steps = tuple(s for s in steps if s.key not in self.attempts)
            self.done = {s.key for s in steps}
            self.notebooks = {
                s.key: s.episode.notebook_out for s in steps if s.episode.notebook_out is not None
            }
            self._fh: IO[str] = self.path.open("a", encoding="utf-8")
        else:
            self.header = header
            write_atomic(self.header_path, header.model_dump_json(indent=2) + "\n")
            self._fh = self.path.open("w", encoding="utf-8")
            self._sync()

    def _drop_partial_tail(self) -> None:
        data = self.path.read_bytes()
        write_atomic(self.path, data[: data.rfind(b"\n") + 1])

    def _end_last_line(self) -> None:
        """A complete last record without its newline (a crash between the two) gets it, so the
        next record starts on a line of its own."""
        with self.path.open("rb+") as fh:
            if fh.seek(0, os.SEEK_END) == 0:
                return
            fh.seek(-1, os.SEEK_END)
            if fh.read(1) != b"\n":
                fh.write(b"\n")
                fh.flush()
                os.fsync(fh.fileno())

    def _set_aside(self, records: list[StepRecord]) -> None:
        """Move records of steps to run again to ``retried_path``, then rewrite the step file
        without them (atomically). After a crash between the two, the next open moves them
        again; records already set aside are not appended twice."""
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
        write_atomic(self.path, "".join(kept))

    def _sync(self) -> None:
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def write(self, record: StepRecord, *, sync: bool = True) -> None:
        """Append ``record`` as one line (a step already recorded is not written again)."""
        if record.key in self.done:
            return
        self._fh.write(_json_line(record) + "\n")
        if sync:
            self._sync()
        self.done.add(record.key)

    def sync(self) -> None:
        """Flush and fsync what ``write(..., sync=False)`` appended."""
        self._sync()

    def close(self) -> None:
        try:
            self._fh.close()
        finally:
            self._lock.close()  # releases the lock

    def __enter__(self) -> RunLogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _key_of(obj: dict[str, Any]) -> tuple[StepKey, int]:
    """A step line's key and attempt, read from its JSON without validating the record."""
    key = (obj["agent"], obj["setting"], obj["event_id"], obj["step_index"], obj["rollout"])
    return key, obj.get("attempt", 1)
