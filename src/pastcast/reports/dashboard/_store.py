"""The dashboard's stored leaderboard (its bootstrap intervals, the slow part of a start),
kept beside the first run log as ``run.dashboard-board.json`` under a key naming every log's
companion fingerprint (``StepColumns.fingerprint``: a digest of the digests of every byte
range its checked parts cover) and the metrics: a log that grew, was cut or edited computes it
again.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from pastcast.atomic import write_atomic
from pastcast.scoring import AlphaTest, GroupSummary, MetricSummary

BOARD_VERSION = 2
"""The stored leaderboard's format; another version is computed again."""


def board_path(log: Path) -> Path:
    """The stored unfiltered leaderboard of the logs shown with ``log`` first (its key names
    every log's fingerprint): ``run.jsonl`` -> ``run.dashboard-board.json``."""
    return log.with_suffix(".dashboard-board.json")


def _summary(d: dict[str, Any]) -> GroupSummary:
    metrics = {k: MetricSummary(**v) for k, v in d.pop("metrics").items()}
    tests = {k: AlphaTest(**v) for k, v in d.pop("alpha_tests").items()}
    by, group = tuple(d.pop("by")), tuple(d.pop("group"))
    return GroupSummary(by, group, **d, metrics=metrics, alpha_tests=tests)


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
