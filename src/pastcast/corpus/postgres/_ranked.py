"""Dense and hybrid retrieval over a PostgreSQL corpus stored with embeddings.

The query is embedded here (with the model that embedded the documents, whose name the corpus
keeps) and ranked by the server's exact inner product over the documents before the cutoff;
hybrid fuses that ranking with the server's as-of BM25 by reciprocal rank, exactly as the
embedded index's ``HybridIndex`` does. Reads, counts and thread look-ups are the backend's own.
"""

from __future__ import annotations

from datetime import datetime

from pastcast.corpus._filter import SearchFilter
from pastcast.corpus._protocol import IndexLookups, SearchHit
from pastcast.corpus._text import tokenize
from pastcast.corpus.dense import RRF_K, Embedder, QueryCache, rrf_fuse
from pastcast.corpus.postgres._backend import PostgresBackend
from pastcast.records import CorpusIdentity

__all__ = ["PostgresDense", "PostgresHybrid"]


class _Lookups(IndexLookups):
    """Everything but ``search``: the backend's own methods under the same cutoff."""

    pg: PostgresBackend

    def close(self) -> None:
        self.pg.close()


class PostgresDense(_Lookups):
    """Exact dense search in the database: top ``k`` by inner product, ties by id."""

    def __init__(self, pg: PostgresBackend, embedder: Embedder, *, query_cache: int = 1024):
        if not pg.meta.get("dims"):
            raise ValueError(f"schema {pg.schema!r} was built without embeddings")
        self.pg = self.index = pg
        self.embedder = embedder
        self._queries = QueryCache(embedder, query_cache)

    def ranked(
        self, query: str, as_of: datetime, k: int, filters: SearchFilter | None = None
    ) -> list[tuple[int, float]]:
        """Top-``k`` (ordinal, inner product) of the text query, embedded here."""
        if k <= 0 or not query.strip():
            return []
        vector = self._queries.get(query)[0].tolist()
        return self.pg.vector_ranked(vector, as_of, k, filters=filters)

    def search(
        self, query: str, *, as_of: datetime, k: int = 10, filters: SearchFilter | None = None
    ) -> list[SearchHit]:
        terms = list(dict.fromkeys(tokenize(query)))
        return self.pg.hits(self.ranked(query, as_of, k, filters), terms, as_of, filters)

    def identity(self) -> CorpusIdentity:
        base = self.pg.identity()
        options = {**base.options, "embedder": self.embedder.name, "exact": True}
        return base.model_copy(update={"retrieval": "dense", "options": options})


class PostgresHybrid(_Lookups):
    """BM25 and dense rankings from the database, fused by reciprocal rank (k = 60)."""

    def __init__(self, dense: PostgresDense, *, depth: int = 100) -> None:
        self.dense = dense
        self.pg = self.index = dense.pg
        self.depth = depth

    def search(
        self, query: str, *, as_of: datetime, k: int = 10, filters: SearchFilter | None = None
    ) -> list[SearchHit]:
        depth = max(self.depth, k)
        terms = list(dict.fromkeys(tokenize(query)))
        bm25 = [o for o, _ in self.pg.score(terms, as_of, depth, filters)]
        dense = [o for o, _ in self.dense.ranked(query, as_of, depth, filters)]
        # the ordinal is the id's rank in the database, so ties fall to the lower ordinal
        return self.pg.hits(rrf_fuse(bm25, dense, k, int), terms, as_of, filters)

    def identity(self) -> CorpusIdentity:
        dense = self.dense.identity()
        options = {**dense.options, "rrf_k": RRF_K, "depth": self.depth}
        return dense.model_copy(update={"retrieval": "hybrid", "options": options})
