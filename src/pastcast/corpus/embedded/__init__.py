"""The embedded BM25 backend: month partitions of memory-mapped arrays with as-of statistics,
exact global top-k, and thread look-ups."""

from pastcast.corpus.embedded._arrays import IndexArrays, build_arrays, save_arrays, to_micros
from pastcast.corpus.embedded._blocks import BLOCK_DOCS
from pastcast.corpus.embedded._bm25 import K1, B
from pastcast.corpus.embedded._embedded import EmbeddedIndex

__all__ = [
    "BLOCK_DOCS",
    "K1",
    "B",
    "EmbeddedIndex",
    "IndexArrays",
    "build_arrays",
    "save_arrays",
    "to_micros",
]
