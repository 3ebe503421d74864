"""The embedded BM25 backend: month partitions of memory-mapped arrays with as-of statistics,
exact global top-k, and thread look-ups."""

from pastcast.corpus.embedded._arrays import K1, B, to_micros
from pastcast.corpus.embedded._bm25 import AsOfStatistics
from pastcast.corpus.embedded._embedded import (
    EmbeddedIndex,
    IndexMonth,
    index_months,
    open_months,
    shard_statistics,
)
from pastcast.corpus.embedded._partitioned import (
    DUPLICATES,
    SKIPPED_DUPLICATE,
    Duplicates,
    MonthRunner,
    NewDocuments,
    index_manifest,
)
from pastcast.corpus.embedded._read_reuse import ReadStamp

__all__ = [
    "DUPLICATES",
    "K1",
    "SKIPPED_DUPLICATE",
    "AsOfStatistics",
    "B",
    "Duplicates",
    "EmbeddedIndex",
    "IndexMonth",
    "MonthRunner",
    "NewDocuments",
    "ReadStamp",
    "index_manifest",
    "index_months",
    "open_months",
    "shard_statistics",
    "to_micros",
]
