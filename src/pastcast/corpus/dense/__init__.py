"""Dense and hybrid retrieval over an embedded index: exact filtered vector search (8-bit month
copies propose candidates, rescored under a proven bound) and reciprocal-rank fusion with BM25."""

from pastcast.corpus.dense._dense import DenseIndex
from pastcast.corpus.dense._embedders import DEFAULT_EMBEDDER, Embedder, MiniLMEmbedder, embedders
from pastcast.corpus.dense._hybrid import RRF_K, HybridIndex

__all__ = [
    "DEFAULT_EMBEDDER",
    "RRF_K",
    "DenseIndex",
    "Embedder",
    "HybridIndex",
    "MiniLMEmbedder",
    "embedders",
]
