"""Dense and hybrid retrieval over an embedded index: exact filtered vector search (8-bit month
copies propose candidates, rescored under a proven bound) and reciprocal-rank fusion with BM25."""

from pastcast.corpus.dense._dense import RRF_K, DenseIndex, Embedder, HybridIndex, MiniLMEmbedder

__all__ = ["RRF_K", "DenseIndex", "Embedder", "HybridIndex", "MiniLMEmbedder"]
