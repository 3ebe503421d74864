"""Hybrid retrieval: BM25 and dense rankings, both as of the cutoff, fused by reciprocal rank."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from pastcast.corpus._filter import SearchFilter
from pastcast.corpus._protocol import IndexLookups, SearchHit
from pastcast.corpus.dense._dense import DenseIndex
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.records import CorpusIdentity

__all__ = ["RRF_K", "HybridIndex", "rrf_fuse"]

RRF_K = 60


def rrf_fuse(
    first: Sequence[int], second: Sequence[int], k: int, tie_rank: Callable[[int], int]
) -> list[tuple[int, float]]:
    """Reciprocal-rank fusion of two rankings of ordinals: the top ``k`` (ordinal, fused score),
    ties ordered by ``tie_rank`` (the id's rank)."""
    fused: dict[int, float] = {}
    for ranking in (first, second):
        for rank, o in enumerate(ranking, start=1):
            fused[o] = fused.get(o, 0.0) + 1.0 / (RRF_K + rank)
    return sorted(fused.items(), key=lambda p: (-p[1], tie_rank(p[0])))[:k]


class HybridIndex(IndexLookups):
    """BM25 and dense rankings fused by reciprocal rank (k = 60), both as of the cutoff.

    With ``concurrent`` (the default) the dense leg runs in a worker thread while the BM25 leg
    runs in the caller's: faiss and most of numpy's work release the GIL, so on two cores the
    latency approaches that of the slower leg instead of the sum.
    """

    index: EmbeddedIndex

    def __init__(self, dense: DenseIndex, *, depth: int = 100, concurrent: bool = True) -> None:
        self.dense = dense
        self.index = dense.index
        self.depth = depth
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="dense") if concurrent else None

    def search(
        self, query: str, *, as_of: datetime, k: int = 10, filters: SearchFilter | None = None
    ) -> list[SearchHit]:
        """Both legs rank only the documents that pass ``filters``, then are fused."""
        n = self.index.count_before(as_of)
        depth = max(self.depth, k)
        allowed = self.index.filter_mask(filters, n)
        terms = self.index.query_terms(query)
        if self._pool is not None:
            dense_leg = self._pool.submit(self.dense.ranked, query, n, depth, allowed=allowed)
            ords, _ = self.index.score(terms, n, depth, allowed=allowed)
            dense_ranked = dense_leg.result()
        else:
            ords, _ = self.index.score(terms, n, depth, allowed=allowed)
            dense_ranked = self.dense.ranked(query, n, depth, allowed=allowed)
        id_rank = self.index.id_rank
        best = rrf_fuse(ords.tolist(), [o for o, _ in dense_ranked], k, lambda o: int(id_rank[o]))
        return self.index.hits(best, query, as_of, filters)

    def identity(self) -> CorpusIdentity:
        """The dense searcher's identity, fused with BM25 at this depth."""
        dense = self.dense.identity()
        options = {**dense.options, "rrf_k": RRF_K, "depth": self.depth}
        return dense.model_copy(
            update={"backend": "hybrid", "retrieval": "hybrid", "options": options}
        )

    def close(self) -> None:
        """Stop the dense leg's thread and the dense searcher's."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None
        self.dense.close()
