"""Dense and hybrid retrieval over an embedded index: exact filtered vector search (8-bit month
copies propose candidates, rescored under a proven bound) and reciprocal-rank fusion with BM25;
embedders by name."""

from pastcast.corpus.dense._dense import DenseIndex
from pastcast.corpus.dense._embedders import (
    DEFAULT_EMBEDDER,
    STATIC_EMBEDDER,
    Embedder,
    MiniLMEmbedder,
    QueryCache,
    embed_documents,
    embedders,
    embedding_text,
)
from pastcast.corpus.dense._hybrid import RRF_K, HybridIndex, rrf_fuse
from pastcast.corpus.dense._static import StaticEmbedder, cache_root, distill_static

__all__ = [
    "DEFAULT_EMBEDDER",
    "RRF_K",
    "STATIC_EMBEDDER",
    "DenseIndex",
    "Embedder",
    "HybridIndex",
    "MiniLMEmbedder",
    "QueryCache",
    "StaticEmbedder",
    "cache_root",
    "distill_static",
    "embed_documents",
    "embedders",
    "embedding_text",
    "rrf_fuse",
]
