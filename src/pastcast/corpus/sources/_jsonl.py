"""The loader of the generic JSONL document format (docs/corpus.md, "Generic JSONL documents")."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast, get_args

from pastcast import safejson
from pastcast.cutoff import parse_publication_time
from pastcast.errors import FieldError
from pastcast.records import DatedBy, Document

_REQUIRED = ("id", "timestamp", "title", "text")
_OPTIONAL = ("url", "source", "thread_id", "author", "parent_id", "dated_by")
_FIELDS = (*_REQUIRED, *_OPTIONAL)
_KNOWN = frozenset(_FIELDS)


@dataclass
class LoadReport:
    """What a lenient load skipped, and why (a reason is ``field X: problem``)."""

    read: int = 0
    skipped: int = 0
    reasons: Counter[str] = field(default_factory=Counter)


def _parse(obj: Any) -> Document:
    if not isinstance(obj, dict):
        raise ValueError("record: expected a JSON object")
    for name in _REQUIRED:
        if name not in obj:
            raise ValueError(f"field {name}: missing")
    if not _KNOWN.issuperset(obj):
        raise ValueError(f"field {min(set(obj) - _KNOWN)}: unknown field")
    values = [obj.get(name) for name in _FIELDS]
    strings = [v for v in values if isinstance(v, str)]
    if len(strings) != len(values) - values.count(None) or None in values[: len(_REQUIRED)]:
        for name, value in zip(_FIELDS, values, strict=True):  # which one, in field order
            if (value is not None or name in _REQUIRED) and not isinstance(value, str):
                raise ValueError(f"field {name}: expected a string, got {type(value).__name__}")
    if not "".join(strings).isascii():  # one test for the whole record: ASCII holds no surrogate
        for name, value in zip(_FIELDS, values, strict=True):
            if value is not None and not value.isascii():
                try:  # a lone surrogate ("\ud800") is valid JSON but no text: no index holds it
                    value.encode("utf-8")
                except UnicodeEncodeError as exc:
                    raise ValueError(
                        f"field {name}: a lone surrogate (\\u{ord(value[exc.start]):04x}) is "
                        "no text"
                    ) from None
    if not obj["id"].strip():
        raise ValueError("field id: empty")
    try:
        ts = parse_publication_time(obj["timestamp"])
    except ValueError as exc:
        raise ValueError(f"field timestamp: {exc}") from None
    return Document(
        id=obj["id"],
        timestamp=ts,
        title=obj["title"],
        text=obj["text"],
        source=obj.get("source") or "",
        url=obj.get("url"),
        thread_id=obj.get("thread_id"),
        author=obj.get("author"),
        parent_id=obj.get("parent_id"),
        dated_by=_dated_by(obj.get("dated_by")),
    )


def _dated_by(value: str | None) -> DatedBy | None:
    if value is None:
        return None
    if value not in get_args(DatedBy):
        raise ValueError(f"field dated_by: expected one of {', '.join(get_args(DatedBy))}")
    return cast(DatedBy, value)


def read_jsonl_documents(
    path: Path | str, *, lenient: bool = False, report: LoadReport | None = None
) -> Iterator[Document]:
    """Yield the documents of a JSONL file: the first malformed line raises ``FieldError``, or
    with ``lenient`` is skipped and counted in ``report``. No id is remembered (memory does not
    grow with the file): the index built from it refuses a repeated id."""
    path = Path(path)
    report = report if report is not None else LoadReport()
    with path.open("rb") as fh:  # decoded line by line, so bad bytes are named by their line
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                try:
                    obj = safejson.loads_line(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"record: invalid JSON ({exc.msg})") from None
                doc = _parse(obj)
            except ValueError as exc:
                if not lenient:
                    raise FieldError("", f"{path}:{lineno}: {exc}") from None
                report.skipped += 1
                report.reasons[str(exc)] += 1
                continue
            report.read += 1
            yield doc
