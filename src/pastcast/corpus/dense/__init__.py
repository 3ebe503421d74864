"""Dense and hybrid retrieval over an embedded index (docs/corpus.md, "Dense and hybrid
retrieval"): exact or approximate vector search, fusion with BM25, embedders by name and
document vectors computed elsewhere."""

from pastcast.corpus.dense._backends import RRF_K, HybridIndex, resolve_embedder, rrf_fuse
from pastcast.corpus.dense._dense import DenseIndex
from pastcast.corpus.dense._embedders import (
    STATIC_EMBEDDER,
    Embedder,
    MiniLMEmbedder,
    cached_queries,
    embedders,
    embedding_text,
)
from pastcast.corpus.dense._jobs import embed_corpus
from pastcast.corpus.dense._precomputed import load_vectors
from pastcast.corpus.dense._remote import RemoteEmbedder
from pastcast.corpus.dense._static import StaticEmbedder, distill_static

__all__ = [
    "RRF_K",
    "STATIC_EMBEDDER",
    "DenseIndex",
    "Embedder",
    "HybridIndex",
    "MiniLMEmbedder",
    "RemoteEmbedder",
    "StaticEmbedder",
    "cached_queries",
    "distill_static",
    "embed_corpus",
    "embedders",
    "embedding_text",
    "load_vectors",
    "resolve_embedder",
    "rrf_fuse",
]
