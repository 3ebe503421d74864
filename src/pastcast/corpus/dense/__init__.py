"""Dense and hybrid retrieval over an embedded index: exact filtered vector search (8-bit month
copies propose candidates, rescored under a proven bound), approximate faiss IVF epochs trained
on the past, reciprocal-rank fusion with BM25; embedders by name (packaged CPU models,
OpenAI-compatible servers) and document vectors computed elsewhere."""

from pastcast.corpus.dense._backends import resolve_embedder
from pastcast.corpus.dense._dense import DenseIndex
from pastcast.corpus.dense._embedders import (
    STATIC_EMBEDDER,
    Embedder,
    MiniLMEmbedder,
    QueryCache,
    embedders,
    embedding_text,
)
from pastcast.corpus.dense._hybrid import RRF_K, HybridIndex, rrf_fuse
from pastcast.corpus.dense._jobs import embed_corpus
from pastcast.corpus.dense._precomputed import load_vectors
from pastcast.corpus.dense._remote import RemoteEmbedder
from pastcast.corpus.dense._static import StaticEmbedder, cache_root, distill_static

__all__ = [
    "RRF_K",
    "STATIC_EMBEDDER",
    "DenseIndex",
    "Embedder",
    "HybridIndex",
    "MiniLMEmbedder",
    "QueryCache",
    "RemoteEmbedder",
    "StaticEmbedder",
    "cache_root",
    "distill_static",
    "embed_corpus",
    "embedders",
    "embedding_text",
    "load_vectors",
    "resolve_embedder",
    "rrf_fuse",
]
