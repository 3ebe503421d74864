"""Reading and writing run logs (JSONL): append-only, flushed per record, validated on read."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from pastcast.records import StepKey
from pastcast.runlog._definition import definition_mismatch
from pastcast.runlog._schema import SCHEMA_VERSION, RunHeader, StepRecord

__all__ = ["RunLog", "RunLogError", "RunLogWriter", "read_run_log"]


class RunLogError(ValueError):
    """A run log that cannot be read; the message names the file, line and field."""


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


def _iter_lines(path: Path) -> Iterator[tuple[int, str, bool]]:
    with path.open("r", encoding="utf-8") as fh:
        lines = fh.readlines()
    for i, line in enumerate(lines, start=1):
        yield i, line, i == len(lines)


def read_run_log(path: str | Path) -> RunLog:
    """Read and validate a run log. Raises ``RunLogError`` naming file, line and field."""
    p = Path(path)
    if not p.is_file():
        raise RunLogError(f"{p}: no such run log")
    header: RunHeader | None = None
    steps: list[StepRecord] = []
    truncated = False
    for lineno, line, is_last in _iter_lines(p):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            if is_last and not line.endswith("\n"):
                truncated = True  # a crash mid-write: everything before it is intact
                continue
            raise RunLogError(f"{p}:{lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise RunLogError(f"{p}:{lineno}: expected a JSON object")
        kind = obj.get("kind")
        try:
            if lineno == 1 or header is None:
                if kind != "header":
                    raise RunLogError(
                        f"{p}:{lineno}: field kind: the first record must be the run header"
                    )
                version = obj.get("schema_version")
                if version != SCHEMA_VERSION:
                    raise RunLogError(
                        f"{p}:{lineno}: field schema_version: unsupported version "
                        f"{version!r} (this pastcast reads {SCHEMA_VERSION})"
                    )
                header = RunHeader.model_validate(obj)
            elif kind == "step":
                steps.append(StepRecord.model_validate(obj))
            else:
                raise RunLogError(f"{p}:{lineno}: field kind: unknown record kind {kind!r}")
        except ValidationError as exc:
            raise RunLogError(f"{p}:{lineno}: {_describe(exc)}") from None
    if header is None:
        raise RunLogError(f"{p}: empty run log (no header)")
    return RunLog(p, header, tuple(steps), truncated)


class RunLogWriter:
    """Appends records to a run log; each record is flushed and fsynced before returning.

    Opening an existing log (to resume) refuses a run whose definition differs from the log's
    header (``run_definition``: dataset, configuration, agents, prompts) and drops a partial last
    line left by a crash, so nothing already written is lost and nothing is half-written.
    """

    def __init__(self, path: str | Path, header: RunHeader) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.done: set[StepKey] = set()
        if self.path.exists() and self.path.stat().st_size > 0:
            existing = read_run_log(self.path)
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
            self._fh = self.path.open("w", encoding="utf-8")
            self._write_line(header.model_dump_json())

    def _drop_partial_tail(self) -> None:
        data = self.path.read_bytes()
        keep = data[: data.rfind(b"\n") + 1]
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        tmp.write_bytes(keep)
        os.replace(tmp, self.path)

    def _write_line(self, text: str) -> None:
        self._fh.write(text + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def write(self, record: StepRecord) -> None:
        if record.key in self.done:
            return
        self._write_line(record.model_dump_json())
        self.done.add(record.key)

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> RunLogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
