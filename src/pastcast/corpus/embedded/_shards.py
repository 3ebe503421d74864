"""An index directory cut into month shards: the months it holds, one shard's partitions
opened alone (ordinals local to it) and its as-of statistics. The statistics of disjoint shards
add up to the whole index's (``AsOfStatistics``), so a shard scoring with the sum scores every
document as the whole index does, bit for bit (docs/corpus.md, "The month-sharded corpus").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from pastcast.corpus.embedded._arrays import load_arrays
from pastcast.corpus.embedded._bm25 import AsOfStatistics, as_of_statistics
from pastcast.corpus.embedded._embedded import EmbeddedIndex
from pastcast.corpus.embedded._partitioned import index_manifest

__all__ = ["IndexMonth", "index_months", "open_months", "shard_statistics"]


@dataclass(frozen=True)
class IndexMonth:
    """One month partition of an index directory, as its manifest lists it."""

    name: str
    doc_count: int
    first_timestamp: datetime
    last_timestamp: datetime
    content_sha256: str


def index_months(index_dir: Path | str) -> list[IndexMonth]:
    """The month partitions of an index directory, in time order."""
    return [
        IndexMonth(
            str(p["name"]),
            int(p["doc_count"]),
            datetime.fromisoformat(str(p["first_timestamp"])),
            datetime.fromisoformat(str(p["last_timestamp"])),
            str(p["content_sha256"]),
        )
        for p in index_manifest(Path(index_dir))["partitions"]
    ]


def open_months(index_dir: Path | str, months: list[str]) -> EmbeddedIndex:
    """The partitions ``months`` (consecutive, in time order) of an index directory, opened as
    one index of their own (memory-mapped)."""
    known = {m.name: m for m in index_months(index_dir)}
    parts = []
    for name in months:
        if name not in known:
            raise ValueError(f"{index_dir}: no month partition {name!r}")
        arrays = load_arrays(Path(index_dir) / "parts" / name)
        if arrays.manifest["content_sha256"] != known[name].content_sha256:
            raise ValueError(f"{index_dir}: partition {name} does not match the manifest")
        parts.append(arrays)
    return EmbeddedIndex(parts)


def shard_statistics(index: EmbeddedIndex, terms: list[str], as_of: datetime) -> AsOfStatistics:
    """The shard's statistics over its documents before ``as_of``."""
    n = index.count_before(as_of)
    return as_of_statistics(index._parts, index._bases, terms, n)
