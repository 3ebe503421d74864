"""Partitions smaller than a month where a month is large. A month of more than
``PARTITION_DOCS`` documents is cut into ``k`` partitions ``YYYY-MM.NNNN`` of equal size (give or
take one), contiguous in ``(timestamp, id)`` order, so that a worker, which holds one partition,
holds at most that many documents whatever the month's size. The as-of statistics are prefix
statistics, so contiguous ranges in time order serve as months do (two documents of one instant
may fall in two ranges); the corpus digest stays that of the months (``_identity``)."""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from pastcast.corpus.embedded._arrays import to_micros

PARTITION_DOCS = 100_000
"""The most documents a partition holds (a worker peaks near 5 KB a document of its partition)."""

T = TypeVar("T")


def range_name(month: str, r: int) -> str:
    return f"{month}.{r:04d}"  # sorts after nothing of another month, in range order


def month_of_partition(name: str) -> str:
    return name.split(".", 1)[0]


def _cuts(count: int) -> list[int]:
    """Where, in ``(timestamp, id)`` order, each range after the first starts."""
    k = -(-count // PARTITION_DOCS)
    return [count * r // k for r in range(1, k)]


def split_sorted(month: str, items: list[T]) -> dict[str, list[T]]:
    """A month's ``items`` (already in ``(timestamp, id)`` order) by partition."""
    bounds = itertools.pairwise([0, *_cuts(len(items)), len(items)])
    ranges = {range_name(month, r): items[a:b] for r, (a, b) in enumerate(bounds)}
    return ranges if len(ranges) > 1 else {month: items}


def _lines(path: Path) -> Iterator[bytes]:
    with path.open("rb") as fh:
        yield from fh


def _key(line: bytes) -> tuple[int, str]:
    row: dict[str, Any] = json.loads(line)  # a spooled line: the document's own line
    return to_micros(datetime.fromisoformat(row["timestamp"])), row["id"]


def split_spool(path_of: Callable[[str], Path], counts: dict[str, int]) -> None:
    """Each spooled month (``path_of(month)``, ``counts``) too large for one partition split
    into its ranges' spool files; ``counts`` then counts partitions. Three passes over the file:
    its instants; the ids of the instants a cut falls inside (rare); the lines to their ranges.
    It holds 40 bytes a document of the month, never a document."""
    for month, count in sorted(counts.items()):
        cuts = _cuts(count)
        if not cuts:
            continue
        path = path_of(month)
        stamps = np.fromiter((_key(line)[0] for line in _lines(path)), np.int64, count)
        ordered = np.sort(stamps)
        first = np.searchsorted(ordered, stamps, side="left")  # each instant's first position
        ranges = np.searchsorted(cuts, first, side="right")
        inside = {int(ordered[c]) for c in cuts if ordered[c - 1] == ordered[c]}
        if inside:  # a cut between documents of one instant: their ids decide
            tied: dict[int, list[tuple[str, int]]] = {}
            for j, line in enumerate(_lines(path)):
                if int(stamps[j]) in inside:
                    tied.setdefault(int(stamps[j]), []).append((_key(line)[1], j))
            for instant, group in tied.items():
                lo = int(np.searchsorted(ordered, instant, side="left"))
                for q, (_, j) in enumerate(sorted(group)):
                    ranges[j] = np.searchsorted(cuts, lo + q, side="right")
        names = [range_name(month, r) for r in range(len(cuts) + 1)]
        with contextlib.ExitStack() as stack:
            handles = [stack.enter_context(path_of(n).open("wb")) for n in names]
            for line, r in zip(_lines(path), ranges.tolist(), strict=True):
                handles[r].write(line)
        path.unlink()
        del counts[month]
        counts.update(zip(names, np.bincount(ranges, minlength=len(names)).tolist(), strict=True))
