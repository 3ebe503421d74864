"""Reading and writing run logs: steps append-only in JSONL, flushed per record, the header in a
JSON file beside them (``header_path``); everything validated on read.

Schema 2 keeps only step records in the step file, so it loads as one table (polars, pandas,
duckdb, Hugging Face ``datasets``). Schema-1 logs (the header as the first line) are still read,
never resumed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError
from pydantic_core import PydanticSerializationError

from pastcast import safejson
from pastcast.records import StepKey
from pastcast.runlog._definition import definition_mismatch
from pastcast.runlog._schema import SCHEMA_VERSION, RunHeader, StepRecord
from pastcast.runlog._v1 import V1, v1_header, v1_step

__all__ = ["RunLog", "RunLogError", "RunLogWriter", "header_path", "read_run_log"]

_HEADER_SUFFIX = ".header.json"


class RunLogError(ValueError):
    """A run log that cannot be read; the message names the file, line and field."""


def header_path(log_path: str | Path) -> Path:
    """The run header beside a step file: ``runs/x/run.jsonl`` -> ``runs/x/run.header.json``."""
    return Path(log_path).with_suffix(_HEADER_SUFFIX)


def _describe(err: ValidationError) -> str:
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "<record>"
    return f"field {loc}: {first['msg']}"


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
    if version != SCHEMA_VERSION:
        raise RunLogError(
            f"{path}: field schema_version: unsupported version {version!r} "
            f"(this pastcast reads {SCHEMA_VERSION}, and {V1} with the header on line 1)"
        )
    try:
        return RunHeader.model_validate(obj)
    except ValidationError as exc:
        raise RunLogError(f"{path}: {_describe(exc)}") from None


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
    if hp.is_file():
        header = _read_header(hp)
        convert = None
    elif objects and objects[0][1].get("kind") == "header":
        lineno, first = objects.pop(0)
        if first.get("schema_version") != V1:
            raise RunLogError(
                f"{p}:{lineno}: field schema_version: unsupported version "
                f"{first.get('schema_version')!r} (this pastcast reads {SCHEMA_VERSION}, and {V1} "
                "with the header on line 1)"
            )
        try:
            header = RunHeader.model_validate(v1_header(first))
        except ValidationError as exc:
            raise RunLogError(f"{p}:{lineno}: {_describe(exc)}") from None
        convert = v1_step
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
            raise RunLogError(f"{p}:{lineno}: {_describe(exc)}") from None
    return RunLog(p, header, tuple(steps), truncated)


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


def _write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that it is either absent or complete, even on a crash."""
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # a platform without directory handles: the rename is all we get
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class RunLogWriter:
    """Appends step records to a run log; each is flushed and fsynced before returning.

    A new log gets its header (``header_path``) written atomically before any step. Opening an
    existing log (to resume) refuses a run whose definition differs from the log's header
    (``run_definition``: dataset, configuration, agents, prompts) or a schema-1 log, and drops a
    partial last line left by a crash, so nothing already written is lost and nothing is
    half-written.
    """

    def __init__(self, path: str | Path, header: RunHeader) -> None:
        self.path = Path(path)
        self.header_path = header_path(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.done: set[StepKey] = set()
        if self.header_path.exists() or (self.path.exists() and self.path.stat().st_size > 0):
            existing = read_run_log(self.path)
            if existing.header.schema_version != SCHEMA_VERSION:
                raise RunLogError(
                    f"run log {self.path} was written with run-log schema "
                    f"{existing.header.schema_version}; this run writes schema {SCHEMA_VERSION}: "
                    "use a new --out"
                )
            # The header must describe every record under it: a different run never appends.
            mismatch = definition_mismatch(self.path, existing.header, header)
            if mismatch is not None:
                raise RunLogError(mismatch)
            if existing.truncated_tail:
                self._drop_partial_tail()
            self.header = existing.header
            self.done = {s.key for s in existing.steps}
            self._fh: IO[str] = self.path.open("a", encoding="utf-8")
        else:
            self.header = header
            _write_atomically(self.header_path, header.model_dump_json(indent=2) + "\n")
            self._fh = self.path.open("w", encoding="utf-8")
            self._sync()

    def _drop_partial_tail(self) -> None:
        data = self.path.read_bytes()
        keep = data[: data.rfind(b"\n") + 1]
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        tmp.write_bytes(keep)
        os.replace(tmp, self.path)

    def _sync(self) -> None:
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def write(self, record: StepRecord) -> None:
        if record.key in self.done:
            return
        self._fh.write(_json_line(record) + "\n")
        self._sync()
        self.done.add(record.key)

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> RunLogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
