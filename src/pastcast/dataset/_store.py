"""On-disk dataset format: Parquet tables + ``metadata.json`` + ``manifest.json``.

A dataset directory holds ``events``, ``resolutions``, ``beliefs`` (long format: one row per
event, day and priced label), ``steps`` and ``splits`` as Parquet tables, and ``texts`` (the
published snapshots of question texts) where there are any. ``manifest.json``
records the format version, a sha256 per table file and a content hash over the records
themselves (canonical JSON, independent of the Parquet writer), which also names the dataset
(``<name>:<hash12>``). Writes go to a temporary sibling directory renamed into place, so a
crash never leaves a half-written dataset.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from datetime import date, datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import ValidationError

from pastcast import safejson
from pastcast.atomic import atomic_directory
from pastcast.cutoff import last_complete_day, parse_timestamp, step_precedes_resolution
from pastcast.dataset._dataset import Dataset
from pastcast.errors import FieldError
from pastcast.owned import check_replaceable, mark
from pastcast.records import DailyBelief, Event, Resolution, StepSpec, TextVersion
from pastcast.validation import first_problem

FORMAT_VERSION = 1
TABLES = ("events", "resolutions", "beliefs", "steps", "splits")
OPTIONAL_TABLES = ("texts",)
"""Written, and hashed, only when they have rows: a dataset without them keeps its id."""
_TS = pa.timestamp("us", tz="UTC")
_EPOCH = datetime(1970, 1, 1, tzinfo=ZoneInfo("UTC"))  # the instants pyarrow itself gives
SCHEMAS: dict[str, pa.Schema] = {
    "events": pa.schema(
        [
            ("id", pa.string()),
            ("title", pa.string()),
            ("description", pa.string()),
            ("resolution_criteria", pa.string()),
            ("kind", pa.string()),
            ("labels", pa.list_(pa.string())),
            ("category", pa.string()),
            ("tags", pa.list_(pa.string())),
            ("open_time", _TS),
            ("close_time", _TS),
            ("source", pa.string()),
            ("url", pa.string()),
        ]
    ),
    "resolutions": pa.schema(
        [("event_id", pa.string()), ("label", pa.string()), ("resolved_at", _TS)]
    ),
    "beliefs": pa.schema(
        [
            ("event_id", pa.string()),
            ("day", pa.date32()),
            ("label", pa.string()),
            ("prob", pa.float64()),
        ]
    ),
    "steps": pa.schema([("event_id", pa.string()), ("step_index", pa.int64()), ("cutoff", _TS)]),
    "splits": pa.schema([("event_id", pa.string()), ("split", pa.string())]),
    "texts": pa.schema(
        [
            ("event_id", pa.string()),
            ("published_at", _TS),
            ("title", pa.string()),
            ("description", pa.string()),
            ("resolution_criteria", pa.string()),
            ("origin", pa.string()),
        ]
    ),
}


def _rows(dataset: Dataset) -> dict[str, list[dict[str, Any]]]:
    """Each table's rows in a canonical order (the order they are stored and hashed in)."""
    events = [e.model_dump() for e in sorted(dataset.events, key=lambda e: e.id)]
    for row in events:
        row["labels"] = list(row["labels"])
        row["tags"] = list(row["tags"])
    resolutions = [
        r.model_dump() for r in sorted(dataset.resolutions.values(), key=lambda r: r.event_id)
    ]
    beliefs = [
        {"event_id": b.event_id, "day": b.day, "label": label, "prob": float(p)}
        for eid in sorted(dataset.beliefs)
        for b in dataset.beliefs[eid]
        for label, p in b.probs.items()
    ]
    steps = [
        s.model_dump()
        for s in sorted(dataset.steps, key=lambda s: (s.event_id, s.step_index, s.cutoff))
    ]
    splits = [{"event_id": k, "split": v} for k, v in sorted(dataset.splits.items())]
    texts = [
        t.model_dump()
        for eid in sorted(dataset.texts)
        for t in sorted(dataset.texts[eid], key=lambda t: (t.published_at, t.origin, t.title))
    ]
    return {
        "events": events,
        "resolutions": resolutions,
        "beliefs": beliefs,
        "steps": steps,
        "splits": splits,
        "texts": texts,
    }


def _present(rows: Mapping[str, Iterable[Any]]) -> tuple[str, ...]:
    """The tables a dataset stores: every required one, and the optional ones with rows."""
    return TABLES + tuple(n for n in OPTIONAL_TABLES if rows.get(n))


def _canonical(value: Any) -> Any:
    if isinstance(value, date):  # a datetime too
        return value.isoformat()
    return repr(value) if isinstance(value, float) else value


_HASH_BLOCK = 4096
"""Rows whose JSON lines the content hash takes in one update."""

_ROW_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False).encode
"""A row's JSON in the content hash; not canonical_json: its separators would change the id of
every stored dataset. One encoder for every row (``json.dumps`` with options makes one a row)."""


def _hash_rows(rows: Mapping[str, Iterable[Mapping[str, Any]]]) -> str:
    h = hashlib.sha256()
    for name in _present(rows):
        h.update(f"\x00table:{name}\n".encode())
        lines = (_ROW_JSON({k: _canonical(v) for k, v in row.items()}) for row in rows[name])
        # lines hashed a block at a time: the same bytes as one line at a time, in bounded memory
        while block := list(islice(lines, _HASH_BLOCK)):
            h.update(("\n".join(block) + "\n").encode())
    return h.hexdigest()


def content_hash(dataset: Dataset) -> str:
    """sha256 over the dataset's records in canonical form (the id is not part of it)."""
    return _hash_rows(_rows(dataset))


def with_content_id(dataset: Dataset, name: str) -> Dataset:
    """The same dataset named ``<name>:<first 12 hex digits of its content hash>``."""
    digest = content_hash(dataset)
    return dataclasses.replace(dataset, id=f"{name}:{digest[:12]}")


def _file_sha256(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n", "utf-8")


def save_dataset(
    dataset: Dataset, directory: str | Path, metadata: Mapping[str, Any] | None = None
) -> Path:
    """Write ``dataset`` to ``directory`` atomically, replacing an existing dataset there.

    ``metadata`` (JSON-serialisable: source, filters, funnel, schedule, ...) goes to
    ``metadata.json``; the dataset id is recorded in both metadata and manifest.
    """
    target = Path(directory)
    check_replaceable(target, "dataset")
    target.parent.mkdir(parents=True, exist_ok=True)
    rows = _rows(dataset)
    tables = _present(rows)
    with atomic_directory(target) as tmp:
        files: dict[str, str] = {}
        for name in tables:
            table = pa.Table.from_pylist(rows[name], schema=SCHEMAS[name])
            pq.write_table(table, tmp / f"{name}.parquet")
            files[f"{name}.parquet"] = _file_sha256(tmp / f"{name}.parquet")
        meta = dict(metadata or {})
        meta["dataset_id"] = dataset.id
        if dataset.collected_at is not None:
            meta["collected_at"] = dataset.collected_at.isoformat()
        _write_json(tmp / "metadata.json", meta)
        manifest = {
            "format": "pastcast-dataset",
            "format_version": FORMAT_VERSION,
            "dataset_id": dataset.id,
            "content_hash": _hash_rows(rows),
            "files": files,
            "counts": {name: len(rows[name]) for name in tables},
        }
        _write_json(tmp / "manifest.json", manifest)
        mark(tmp, "dataset")
    return target


def _read_json_object(path: Path, missing: str) -> dict[str, Any]:
    if not path.is_file():
        raise FieldError("", f"{path}: {missing}")
    try:
        value = safejson.loads(path.read_bytes())
    except json.JSONDecodeError as exc:
        raise FieldError("", f"{path}: not valid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise FieldError("", f"{path}: expected a JSON object")
    return value


def read_manifest(directory: str | Path) -> dict[str, Any]:
    path = Path(directory) / "manifest.json"
    manifest = _read_json_object(path, "missing (not a pastcast dataset directory)")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise FieldError(
            "",
            f"{path}: field format_version: unsupported version {version!r} "
            f"(this pastcast reads {FORMAT_VERSION})",
        )
    return manifest


def read_metadata(directory: str | Path) -> dict[str, Any]:
    return _read_json_object(Path(directory) / "metadata.json", "missing")


def _read_table(directory: Path, name: str, manifest: Mapping[str, Any]) -> list[dict[str, Any]]:
    path = directory / f"{name}.parquet"
    if not path.is_file():
        raise FieldError("", f"{path}: missing table")
    expected = manifest.get("files", {}).get(f"{name}.parquet")
    if expected is not None and _file_sha256(path) != expected:
        raise FieldError("", f"{path}: sha256 does not match manifest.json (file corrupted?)")
    try:  # the file itself: ``read_table`` would import pyarrow's datasets, and pandas with them
        with pq.ParquetFile(path) as file:
            table = file.read()
    except (pa.ArrowInvalid, OSError) as exc:
        raise FieldError("", f"{path}: not a readable Parquet file ({exc})") from None
    want = SCHEMAS[name]
    for fld in want:
        if fld.name not in table.column_names:
            raise FieldError("", f"{path}: field {fld.name}: missing column")
    try:  # a table already of the format is not cast: casts import pyarrow.compute (30 ms)
        table = table.select(want.names)
        table = table if table.schema.equals(want) else table.cast(want)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise FieldError("", f"{path}: column types do not match the format ({exc})") from None
    # Instants read as microseconds (their buffers viewed as int64): pyarrow converts zoned
    # timestamps through pandas, whose import was a fifth of `pastcast run`'s start-up.
    stamps = [f.name for f in want if f.type == _TS]
    for name in stamps:
        i = want.get_field_index(name)
        micros = [chunk.view(pa.int64()) for chunk in table.column(i).chunks]
        table = table.set_column(i, name, pa.chunked_array(micros, pa.int64()))
    rows: list[dict[str, Any]] = table.to_pylist()
    for row in rows:
        for name in stamps:
            if row[name] is not None:
                row[name] = _EPOCH + timedelta(microseconds=row[name])
    return rows


def _validated(path: Path, rows: list[dict[str, Any]], build: Any) -> Iterator[Any]:
    for i, row in enumerate(rows):
        try:
            yield build(row)
        except ValidationError as err:
            raise FieldError("", first_problem(err, f"{path}: row {i}")) from None


def _collected_at(directory: Path) -> datetime | None:
    """When the dataset's data was collected, as its metadata records it (None: not recorded)."""
    path = directory / "metadata.json"
    if not path.is_file():
        return None
    value = _read_json_object(path, "missing").get("collected_at")
    if value is None:
        return None
    try:
        return parse_timestamp(str(value))
    except ValueError as exc:
        raise FieldError("", f"{path}: field collected_at: {exc}") from None


def _bad_row(path: Path, where: int | str, field: str, reason: str) -> FieldError:
    """The problem of one row (its index) or of a named place in a table."""
    where = f"row {where}" if isinstance(where, int) else where
    return FieldError("", f"{path}: {where}: field {field}: {reason}")


def load_dataset(directory: str | Path) -> Dataset:
    """Read and validate a dataset directory written by ``save_dataset``.

    Raises ``FieldError`` naming the file, the row and the field of the first problem.
    """
    d = Path(directory)
    if not d.is_dir():
        raise FieldError("", f"{d}: no such dataset directory")
    manifest = read_manifest(d)
    raw = {name: _read_table(d, name, manifest) for name in TABLES}
    for name in OPTIONAL_TABLES:
        if f"{name}.parquet" in manifest.get("files", {}) or (d / f"{name}.parquet").is_file():
            raw[name] = _read_table(d, name, manifest)
    events = tuple(_validated(d / "events.parquet", raw["events"], Event.model_validate))
    known = {e.id for e in events}
    resolutions = {
        r.event_id: r
        for r in _validated(
            d / "resolutions.parquet", raw["resolutions"], Resolution.model_validate
        )
    }
    grouped: dict[tuple[str, date], dict[str, float]] = {}
    for i, row in enumerate(raw["beliefs"]):
        if row["event_id"] not in known:
            unknown = f"unknown event {row['event_id']!r}"
            raise _bad_row(d / "beliefs.parquet", i, "event_id", unknown)
        grouped.setdefault((row["event_id"], row["day"]), {})[row["label"]] = row["prob"]
    belief_rows = [{"event_id": k[0], "day": k[1], "probs": v} for k, v in grouped.items()]
    beliefs: dict[str, list[DailyBelief]] = {}
    for b in _validated(d / "beliefs.parquet", belief_rows, DailyBelief.model_validate):
        beliefs.setdefault(b.event_id, []).append(b)
    for eid, seq in beliefs.items():
        res = resolutions.get(eid)
        late = [
            b.day for b in seq if res is not None and b.day > last_complete_day(res.resolved_at)
        ]
        if late:
            why = "belief at or after the event's resolution (post-resolution price)"
            raise _bad_row(d / "beliefs.parquet", f"event {eid!r} day {late[0]}", "day", why)
    steps = tuple(_validated(d / "steps.parquet", raw["steps"], StepSpec.model_validate))
    splits: dict[str, str] = {}
    for i, row in enumerate(raw["splits"]):
        if row["event_id"] not in known or not row["split"]:
            why = "unknown event or empty split"
            raise _bad_row(d / "splits.parquet", i, "event_id/split", why)
        splits[row["event_id"]] = row["split"]
    texts: dict[str, list[TextVersion]] = {}
    for i, t in enumerate(
        _validated(d / "texts.parquet", raw.get("texts", []), TextVersion.model_validate)
    ):
        if t.event_id not in known:
            raise _bad_row(d / "texts.parquet", i, "event_id", f"unknown event {t.event_id!r}")
        texts.setdefault(t.event_id, []).append(t)
    labels_of = {e.id: set(e.labels) for e in events}
    for i, (eid, res) in enumerate(sorted(resolutions.items())):
        if eid not in known:
            raise _bad_row(d / "resolutions.parquet", i, "event_id", f"unknown event {eid!r}")
        if res.label not in labels_of[eid]:
            why = f"{res.label!r} is not one of the event's labels"
            raise _bad_row(d / "resolutions.parquet", i, "label", why)
    for i, step in enumerate(steps):
        res = resolutions.get(step.event_id)
        if res is not None and not step_precedes_resolution(step.cutoff, res.resolved_at):
            why = "at or after the event's resolution (post-resolution step)"
            raise _bad_row(d / "steps.parquet", i, "cutoff", why)
    if _hash_rows(raw) != manifest.get("content_hash"):
        raise FieldError("", f"{d / 'manifest.json'}: field content_hash: does not match data")
    try:
        return Dataset(
            str(manifest.get("dataset_id") or d.name),
            events,
            resolutions,
            {k: tuple(v) for k, v in beliefs.items()},
            steps,
            splits,
            {k: tuple(v) for k, v in texts.items()},
            collected_at=_collected_at(d),
        )
    except ValueError as exc:
        raise FieldError("", f"{d}: {exc}") from None
