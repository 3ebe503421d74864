"""The dashboard's persisted index of one run log: its score table (every step re-scored from
the columns, the slow part of indexing a large log), kept beside the step file as
``run.dashboard.npz`` so a later start loads it instead of scoring again.

The file records the header's hash and the companion's fingerprint
(``StepColumns.fingerprint``: the SHA-256 of every byte range its checked parts cover), and is
used only while both are unchanged: a log that grew, was cut or edited (its companion's parts
change), an index copied from another run (another header) or a file cut short is rebuilt, and
a note says why. It holds plain arrays only (``allow_pickle=False``): nothing in it runs.
"""

from __future__ import annotations

import contextlib
import json
import zipfile
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, cast

import numpy as np

from pastcast.atomic import atomic_path, write_atomic
from pastcast.npyfiles import load_npz
from pastcast.reports._runs import Runs
from pastcast.runlog import StepColumns
from pastcast.scoring import (
    AlphaTest,
    GroupSummary,
    MetricSummary,
    ScoreTable,
)

__all__ = [
    "INDEX_VERSION",
    "board_path",
    "index_path",
    "load_board",
    "save_board",
    "score_table_of",
]

INDEX_VERSION = 1
"""The persisted index's format (and the scoring it stores); another version is rebuilt."""

_ARRAYS = tuple(f.name for f in fields(ScoreTable) if f.name not in ("keys", "floor", "meta"))


def index_path(log: Path) -> Path:
    """The persisted index beside a step file: ``run.jsonl`` -> ``run.dashboard.npz``."""
    return log.with_suffix(".dashboard.npz")


def board_path(log: Path) -> Path:
    """The stored unfiltered leaderboard of the logs shown with ``log`` first (its key names
    every log's fingerprint): ``run.jsonl`` -> ``run.dashboard-board.json``."""
    return log.with_suffix(".dashboard-board.json")


def _summary(d: dict[str, Any]) -> GroupSummary:
    return GroupSummary(
        by=tuple(d["by"]),
        group=tuple(d["group"]),
        role=d["role"],
        n_recorded=d["n_recorded"],
        n_failures=d["n_failures"],
        failure_rate=d["failure_rate"],
        n_scheduled=d["n_scheduled"],
        n_missing=d["n_missing"],
        scheduled_failure_rate=d["scheduled_failure_rate"],
        metrics={k: MetricSummary(**v) for k, v in d["metrics"].items()},
        alpha_tests={k: AlphaTest(**v) for k, v in d["alpha_tests"].items()},
    )


def load_board(path: Path, key: str) -> list[tuple[GroupSummary, dict[str, Any]]] | None:
    """The stored leaderboard rows (each summary and its other fields) when stored for ``key``
    (None: absent, another key, or unreadable: computed again)."""
    try:
        data = json.loads(path.read_bytes())
        if not isinstance(data, dict) or data.get("key") != key:
            return None
        return [(_summary(r["summary"]), r["rest"]) for r in data["rows"]]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save_board(path: Path, key: str, rows: Sequence[tuple[GroupSummary, dict[str, Any]]]) -> None:
    """Store leaderboard rows for ``key`` (floats as JSON numbers, NaN included: exact)."""
    data = {
        "key": key,
        "rows": [
            {
                "summary": {
                    **{f.name: getattr(s, f.name) for f in fields(s)},
                    "metrics": {k: vars(v) for k, v in s.metrics.items()},
                    "alpha_tests": {k: vars(v) for k, v in s.alpha_tests.items()},
                },
                "rest": rest,
            }
            for s, rest in rows
        ],
    }
    with contextlib.suppress(OSError):  # a read-only folder: computed again next time
        write_atomic(path, json.dumps(data))


def _arrays(table: ScoreTable, fingerprint: str, header_sha256: str) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {
        "about": np.asarray(
            json.dumps(
                {
                    "version": INDEX_VERSION,
                    "fingerprint": fingerprint,
                    "header_sha256": header_sha256,
                    "rows": len(table),
                    "floor": table.floor,
                    "meta": dict(table.meta),
                    "keys": list(table.keys),
                }
            )
        )
    }
    for name in _ARRAYS:
        out[name] = np.asarray(getattr(table, name))
    for column, (codes, names) in table.keys.items():
        out[f"codes.{column}"] = np.asarray(codes, dtype=np.int64)
        out[f"names.{column}"] = np.asarray(list(names), dtype=str)
    return out


def _load(path: Path, fingerprint: str, header_sha256: str) -> ScoreTable | str:
    """The stored table, or why it cannot be used."""
    try:
        data = load_npz(path)
        about = json.loads(str(data["about"]))
        if not isinstance(about, dict) or about.get("version") != INDEX_VERSION:
            return f"it is not an index of version {INDEX_VERSION}"
        if about.get("header_sha256") != header_sha256:
            return "it was built for another run header (a foreign index)"
        if about.get("fingerprint") != fingerprint:
            return "the run log changed since it was built (stale)"
        arrays = {name: data[name] for name in _ARRAYS}
        keys = {
            str(c): (data[f"codes.{c}"], tuple(str(n) for n in data[f"names.{c}"]))
            for c in about["keys"]
        }
        rows = int(about["rows"])
        floor, meta = float(about["floor"]), dict(about["meta"])
    except FileNotFoundError:
        return "absent"
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile) as exc:
        return f"it is unreadable (cut short or damaged: {type(exc).__name__})"
    if any(a.shape != (rows,) for a in arrays.values()) or any(
        c.shape != (rows,) for c, _ in keys.values()
    ):
        return "its arrays do not all have one entry per step (damaged)"
    return ScoreTable(keys=keys, floor=floor, meta=meta, **arrays)


def _save(path: Path, table: ScoreTable, fingerprint: str, header_sha256: str) -> bool:
    try:
        with atomic_path(path, suffix=".npz") as tmp, tmp.open("wb") as fh:
            # (numpy's stub types a keyword array as its ``allow_pickle`` flag)
            cast(Any, np.savez)(fh, **_arrays(table, fingerprint, header_sha256))
    except OSError:
        return False  # a read-only folder: indexed again next time
    return True


def score_table_of(
    log: StepColumns, *, persist: bool = True
) -> tuple[ScoreTable, list[str], str | None]:
    """The score table of ``log``'s rows (``table_from_columns``), from its persisted index when
    that is current, else scored now and (with ``persist``) stored; with a note when a stored
    index was not used, and the log's fingerprint (None: not stored)."""
    fingerprint = log.fingerprint() if persist else None
    if fingerprint is None:  # rows not all in the companion (or some left out): not stored
        return _score(log), [], None
    path = index_path(log.path)
    header = log.header_sha256()
    found = _load(path, fingerprint, header)
    if isinstance(found, ScoreTable) and len(found) == log.table.num_rows:
        return found, [], fingerprint
    table = _score(log)
    saved = _save(path, table, fingerprint, header)
    notes = []
    if found != "absent":
        why = "its rows do not match the log's" if isinstance(found, ScoreTable) else found
        notes.append(
            f"{log.path}: dashboard index {path.name}: {why}; "
            + ("rebuilt" if saved else "indexed again (the folder is not writable)")
        )
    return table, notes, fingerprint


def _score(log: StepColumns) -> ScoreTable:
    return Runs((log,)).base_table  # a batch of rows at a time
