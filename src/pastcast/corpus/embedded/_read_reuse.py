"""A build's read phase kept for the next build of the same documents: ``seal`` writes
``read.json`` beside the spool (the ``ReadStamp`` key, the month counts, what the read stages
reported) and a build run again with the same key skips its read phase (``reuse``); see
docs/corpus.md, "Build". The partitions are still checked by their own spool hash.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pastcast import safejson
from pastcast.atomic import write_atomic

READ_MARKER = "read.json"
_STAGES = "stages"  # the read stages' own files (side files), beside the spool


@dataclass(frozen=True)
class ReadStamp:
    """What a build's documents are read from: equal ``key``, equal spooled lines. ``save``
    keeps the read stages' by-products (side files into ``folder``, counts as the JSON it
    returns) once the documents are consumed; ``restore`` brings them back instead of a read."""

    key: str
    save: Callable[[Path], Any] = lambda folder: None
    restore: Callable[[Path, Any], None] = lambda folder, saved: None


@dataclass(frozen=True)
class SealedRead:
    """A complete read phase found in the spool: documents by month, and the read stages'
    removals and notes as they were when it completed."""

    counts: dict[str, int]
    removed: dict[str, int]
    notes: tuple[str, ...]


def seal(
    spool: Path,
    stamp: ReadStamp,
    counts: Mapping[str, int],
    removed: Mapping[str, int],
    notes: Sequence[str],
) -> None:
    """Mark the spool in ``spool`` complete, read as ``stamp`` says (written last, atomically)."""
    (spool / _STAGES).mkdir(exist_ok=True)
    marker = {
        "key": stamp.key,
        "counts": dict(counts),
        "removed": dict(removed),
        "notes": list(notes),
        "saved": stamp.save(spool / _STAGES),
    }
    write_atomic(spool / READ_MARKER, json.dumps(marker, indent=1) + "\n")


def reuse(spool: Path, stamp: ReadStamp) -> SealedRead | None:
    """The read phase a build cut short completed in ``spool`` from the same input, restored;
    None where there is none (no marker, another key, a spool file missing)."""
    try:
        marker = safejson.loads((spool / READ_MARKER).read_bytes())
    except (FileNotFoundError, ValueError):
        return None
    if not isinstance(marker, dict) or marker.get("key") != stamp.key:
        return None
    counts = {str(m): int(n) for m, n in marker["counts"].items()}
    if not all((spool / f"{m}.jsonl").is_file() for m in counts):
        return None
    stamp.restore(spool / _STAGES, marker["saved"])
    removed = {str(k): int(v) for k, v in marker["removed"].items()}
    return SealedRead(counts, removed, tuple(str(n) for n in marker["notes"]))
