"""Dense retrieval over an ``EmbeddedIndex``, exact as of the cutoff: vectors are stored in
ordinal (time) order, so the documents visible at a cutoff are the rows ``[0, n_t)`` and no
score depends on another document. The cache files, the 8-bit candidates with their proven
bound (``_quantized``) and approximate search (``_approximate``) are in docs/corpus.md, "Dense
and hybrid retrieval"."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pastcast import safejson
from pastcast.atomic import atomic_path, write_atomic
from pastcast.corpus._filter import SearchFilter
from pastcast.corpus._protocol import IndexLookups, SearchHit
from pastcast.corpus.dense._approximate import ApproximateIndex
from pastcast.corpus.dense._embedders import (
    F32,
    Embedder,
    cached_queries,
    file_stem,
    joined_title_text,
)
from pastcast.corpus.dense._jobs import embed_corpus, unit_rows
from pastcast.corpus.dense._pieces import (
    Candidates,
    Found,
    Segment,
    balanced,
    in_one_thread,
    one_thread,
)
from pastcast.corpus.dense._precomputed import load_vectors
from pastcast.corpus.dense._quantized import QuantizedMonths, QueryCode
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.errors import FieldError
from pastcast.npyfiles import load_npy, prefetch_rows
from pastcast.records import CorpusIdentity

Mask = npt.NDArray[np.bool_]


class DenseIndex(IndexLookups):
    """Dense search over the documents of an ``EmbeddedIndex`` before a cutoff: exact unless
    ``ivf_min`` asks for approximate search (``nprobe`` lists probed). ``quantized_min``: months
    of at least this many documents keep an 8-bit copy proposing candidates (None: full scans).
    """

    index: EmbeddedIndex

    def __init__(
        self,
        index: EmbeddedIndex,
        embedder: Embedder,
        *,
        quantized_min: int | None = 10_000,
        ivf_min: int | None = None,
        nprobe: int = 8,
        query_cache: int = 1024,
        workers: int | None = None,
        vectors: str | Path | None = None,
        vectors_ids: str | Path | None = None,
        progress: bool = False,
    ) -> None:
        self.index = index
        self.embedder = embedder
        self._ivf_min, self._nprobe = ivf_min, nprobe
        self._stem = file_stem(embedder.name)
        self._precomputed: str | None = None
        source = None if vectors is None else Path(vectors)
        self._vectors = self._load_or_make(source, vectors_ids, progress)
        self.dim = int(self._vectors.shape[1]) if len(self._vectors) else None
        # rescoring reads scattered rows: of the vectors' file (where the vectors are kept
        # beside the index, they are read from it), through a mapping made for that
        paths = self._cache_paths()
        self._rows = self._vectors if paths is None else load_npy(paths[0], scattered=True)
        self._bounds = index.partition_bounds
        self._approximate: ApproximateIndex | None = None
        if ivf_min is not None:
            self._approximate = self._trained_lists(ivf_min)
        self._quantized: QuantizedMonths | None = None
        if quantized_min is not None and self._approximate is None:
            chosen = [
                p for p, (lo, hi) in enumerate(self._bounds) if hi - lo >= max(quantized_min, 1)
            ]
            if chosen:
                self._quantized = QuantizedMonths.load_or_build(
                    self._vectors, self._bounds, chosen, self._store("sq8")
                )
        self._queries = cached_queries(embedder, query_cache)
        self._workers = max(1, workers if workers is not None else min(4, os.cpu_count() or 1))
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def _store(self, kind: str) -> Path | None:
        """Where the 8-bit month copies are kept, emptied when the index content changes."""
        ix = self.index
        if ix.path is None:
            return None
        store = ix.path / f"{kind}-{self.embedder.name}"
        stamp = store / "content_sha256"
        digest = str(ix.manifest.get("content_sha256"))
        try:
            if not (stamp.is_file() and stamp.read_text() == digest):
                shutil.rmtree(store, ignore_errors=True)
                store.mkdir(parents=True)
                stamp.write_text(digest)
        except OSError:
            return None  # a read-only index: build in memory, as without a directory
        return store

    def _trained_lists(self, ivf_min: int) -> ApproximateIndex:
        """The approximate index, its lists kept in ``ivf-MODEL/`` by the content digests of
        the months they depend on (so appending months never retrains the earlier ones)."""
        parts: Any = self.index.manifest["partitions"]
        digests = [str(p["content_sha256"]) for p in parts]
        store = None if self.index.path is None else self.index.path / f"ivf-{self._stem}"
        if store is not None:
            try:
                store.mkdir(exist_ok=True)
            except OSError:
                store = None  # a read-only index: trained in memory
        return ApproximateIndex.load_or_train(self._vectors, self._bounds, digests, ivf_min, store)

    def _cache_paths(self) -> tuple[Path, Path] | None:
        ix = self.index
        if ix.path is None:
            return None
        return ix.path / f"dense-{self._stem}.npy", ix.path / f"dense-{self._stem}.json"

    def _cached(self) -> F32 | None:
        """The vectors kept beside the index for these documents and this model, if any."""
        paths = self._cache_paths()
        if paths is None:
            return None
        cache, meta = paths
        try:
            stamp = safejson.loads(meta.read_bytes()) if meta.is_file() else {}
        except ValueError:
            return None
        digest = self.index.manifest.get("content_sha256")
        if stamp.get("content_sha256") != digest or stamp.get("model", self.embedder.name) != (
            self.embedder.name
        ):
            return None
        if not cache.is_file():
            return None
        # memory-mapped: exact search reads the rows in place (no copy in the process)
        mapped: F32 = load_npy(cache)
        if mapped.dtype != np.float32 or mapped.ndim != 2 or len(mapped) != len(self.index):
            return None
        source = stamp.get("source")
        self._precomputed = source if isinstance(source, str) else None
        return mapped

    def _load_or_make(
        self, source: Path | None, ids_file: str | Path | None, progress: bool
    ) -> F32:
        """The cached vectors, else computed (``_jobs``) or imported from ``source``
        (``_precomputed``) and cached."""
        ix = self.index
        where = None if source is None else str(source.resolve())
        cached = self._cached()
        if cached is not None and (source is None or self._precomputed == where):
            return cached
        paths = self._cache_paths()
        if source is None:

            def texts(lo: int, hi: int) -> list[str]:
                return [joined_title_text(*ix.read_title_text(i)) for i in range(lo, hi)]

            if paths is not None:
                paths[1].unlink(missing_ok=True)  # no stale stamp beside the new vectors
            vectors = embed_corpus(
                self.embedder,
                len(ix),
                texts,
                None if paths is None else paths[0],
                checkpoint=None if paths is None else paths[0].with_suffix(".partial"),
                job={"content_sha256": str(ix.manifest.get("content_sha256"))},
                progress=progress,
            )
        else:
            probe = self.embedder.encode(["dimension probe"])
            ids = [ix.read_ordinal(i).id for i in range(len(ix))]
            vectors = load_vectors(source, ids, ids_file=ids_file, dim=int(probe.shape[1]))
            if paths is not None:
                paths[1].unlink(missing_ok=True)
                with atomic_path(paths[0], suffix=".npy") as tmp:
                    np.save(tmp, vectors)
        self._precomputed = where
        if paths is None:
            return vectors
        meta: dict[str, object] = {
            "content_sha256": ix.manifest.get("content_sha256"),
            "model": self.embedder.name,
            "dim": int(vectors.shape[1]),
            "normalized": True,
        }
        if where is not None:
            meta["source"] = where
        write_atomic(paths[1], json.dumps(meta))
        return load_npy(paths[0])

    def embed_query(self, query: str) -> F32:
        """The query's vector (one row), from the LRU when the query was seen recently."""
        q = self._queries(query)
        self.check_query(q, self.embedder.name)
        return q

    def check_query(self, vector: F32, model: str) -> None:
        """Refuse a query vector that is not of this corpus's model: another model's vectors
        live in another space, and their inner products rank nothing."""
        if model != self.embedder.name:
            raise FieldError(
                "",
                f"a query embedded by {model!r} cannot search vectors of {self.embedder.name!r}; "
                f"embed it with {self.embedder.name!r}",
            )
        if self.dim is not None and (vector.ndim != 2 or vector.shape[1] != self.dim):
            raise FieldError(
                "",
                f"a query vector of dimension {vector.shape[-1]} cannot search the "
                f"{self.dim}-dimensional vectors of {self.embedder.name!r}",
            )

    def search_vector(
        self,
        vector: Sequence[float] | F32,
        *,
        model: str,
        as_of: datetime,
        k: int = 10,
        filters: SearchFilter | None = None,
    ) -> list[SearchHit]:
        """Dense search with a query embedded elsewhere by ``model`` (refused unless it is this
        corpus's query model, of its dimension)."""
        q = np.ascontiguousarray(np.asarray(vector, dtype=np.float32).reshape(1, -1))
        self.check_query(q, model)
        q = unit_rows(q, "query vector")
        n = self.index.count_before(as_of)
        allowed = self.index.filter_mask(filters, n)
        ranked = self._ranked_vector(q, n, k, allowed=allowed)
        return self.index.hits(ranked, "", as_of, filters)

    def ranked(
        self, query: str, n: int, k: int, *, allowed: Mask | None = None
    ) -> list[tuple[int, float]]:
        """Top-``k`` (ordinal, cosine) among the ``allowed`` ordinals ``< n``; ties by id."""
        if n <= 0 or k <= 0 or not query.strip():
            return []
        return self._ranked_vector(self.embed_query(query), n, k, allowed=allowed)

    def _ranked_vector(
        self, q: F32, n: int, k: int, *, allowed: Mask | None = None
    ) -> list[tuple[int, float]]:
        if n <= 0 or k <= 0:
            return []
        q64 = q[0].astype(np.float64)
        if allowed is not None:
            return self._ranked_among(np.flatnonzero(allowed[:n]), q64, k)
        if not q64.any():  # nothing embedded (say, only punctuation): every score is 0
            by_id = np.argsort(self.index.id_rank[:n], kind="stable")[:k]
            return [(int(o), 0.0) for o in by_id]
        if self._approximate is not None:
            with one_thread():
                proposed = self._approximate.search(q, n, min(k, n) + _RERANKED, self._nprobe)
            if proposed is not None:  # candidates of 8-bit codes, ranked by exact scores
                return self._best(proposed, self._rescore(proposed, q64), k)
        segments, runs = self._segments(n)
        code = QueryCode.of(q[0]) if runs else None
        # Each searched piece first offers a share of k (with a margin for ties at the k-th);
        # pieces whose share cannot be proven enough are widened below.
        first = min(k + 16, max(32, 2 * (k + 16) // max(1, len(segments) + len(runs)) + 16))
        fetched = [min(first, seg.size) for seg in segments]
        found, quantized, bound = self._first_pass(q, code, segments, fetched, runs, k)
        slack = [_FLOAT_SLACK] * len(segments)
        if quantized is not None:
            found.append(quantized)
            slack.append(bound)
        pool = Candidates.of(found, slack)
        if quantized is not None:  # every 8-bit candidate may enter the top k: rescore at once
            fresh = np.arange(len(pool.ords) - len(found[-1].ords), len(pool.ords))
            pool.exact[fresh] = self._rescore(pool.ords[fresh], q64)
        while True:
            kth = pool.kth_exact(k)
            want = pool.worth_rescoring(k, kth)
            if len(want):
                pool.exact[want] = self._rescore(pool.ords[want], q64)
                continue
            # A document no search returned scores at most its piece's floor (plus slack):
            # widen every piece whose floor does not fall strictly below the k-th score.
            wider = [
                i
                for i, seg in enumerate(segments)
                if fetched[i] < seg.size and found[i].floor + slack[i] >= kth
            ]
            if not wider:
                break
            for i in wider:
                fetched[i] = min(segments[i].size, fetched[i] * 4)
            jobs = [partial(self._search, q, segments[i], fetched[i]) for i in wider]
            for i, f in zip(
                wider, self._run(jobs, sum(segments[i].size for i in wider)), strict=True
            ):
                found[i] = f
            pool = Candidates.of(found, slack, carry=pool)
        done = ~np.isnan(pool.exact)
        return self._best(pool.ords[done], pool.exact[done], k)

    def _best(
        self, ords: npt.NDArray[np.int64], scores: npt.NDArray[np.float64], k: int
    ) -> list[tuple[int, float]]:
        """The ``k`` best by exact score, ties by document id."""
        order = np.lexsort((self.index.id_rank[ords], -scores))[:k]
        return list(zip(ords[order].tolist(), scores[order].tolist(), strict=True))

    def _ranked_among(
        self, ords: npt.NDArray[np.int64], q64: npt.NDArray[np.float64], k: int
    ) -> list[tuple[int, float]]:
        """Top-``k`` of the given ordinals by exact score (a filtered search): every one is
        scored as the unfiltered search rescores its candidates, so a document scores the same
        with and without a filter, and the result is exact even where search is approximate."""
        best_o: list[npt.NDArray[np.int64]] = []
        best_s: list[npt.NDArray[np.float64]] = []
        for lo in range(0, len(ords), _FILTER_CHUNK):  # bounded memory for wide filters
            chunk = ords[lo : lo + _FILTER_CHUNK]
            scores = self._rescore(chunk, q64, scan=True)
            if len(chunk) > k:  # keep ties at the k-th score: ids decide among them below
                keep = scores >= np.partition(scores, len(scores) - k)[len(scores) - k]
                chunk, scores = chunk[keep], scores[keep]
            best_o.append(chunk)
            best_s.append(scores)
        return self._best(np.concatenate(best_o), np.concatenate(best_s), k) if best_o else []

    def _segments(self, n: int) -> tuple[list[Segment], list[tuple[int, int]]]:
        """The admitted ordinals ``[0, n)`` as exact slices (split so that threads can share
        them), and the quantized months as ``(partition, end)``."""
        pieces: list[Segment] = []
        runs: list[tuple[int, int]] = []
        quantized = {} if self._quantized is None else self._quantized.months
        exact_lo = 0

        def exact_until(hi: int) -> None:
            for lo in range(exact_lo, hi, _EXACT_SLICE):
                pieces.append(Segment(lo, min(hi, lo + _EXACT_SLICE)))

        for p, (lo, hi) in enumerate(self._bounds):
            if lo >= n:
                break  # this month and all later ones start at or after the cutoff
            if p in quantized:
                exact_until(lo)
                runs.append((p, min(hi, n)))
                exact_lo = min(hi, n)
        exact_until(n)
        return pieces, runs

    def _first_pass(
        self,
        q: F32,
        code: QueryCode | None,
        segments: list[Segment],
        fetched: list[int],
        months: list[tuple[int, int]],
        k: int,
    ) -> tuple[list[Found], Found | None, float]:
        """Every piece's top candidates, and the 8-bit candidates of the quantized months with
        their bound, computed together in the thread pool (groups of months per thread)."""
        jobs: list[Callable[[], Any]] = [
            partial(self._search, q, seg, f) for seg, f in zip(segments, fetched, strict=True)
        ]
        slack = 0.0
        if code is not None and self._quantized is not None and months:
            quantized = self._quantized
            slack = max(quantized.bound(code, p) for p, _ in months)
            sizes = [end - quantized.months[p].lo for p, end in months]
            for group in balanced(months, sizes, self._workers):
                jobs.append(partial(quantized.candidates, code, group, k, slack))
            rows = sum(sizes)
        else:
            rows = 0
        out = self._run(jobs, rows + sum(s.size for s in segments))
        found = out[: len(segments)]
        if len(out) == len(segments):
            return found, None, slack
        ords = np.concatenate([o for o, _ in out[len(segments) :]])
        est = np.concatenate([e for _, e in out[len(segments) :]])
        # t: the k-th best estimate over all these months. The k rows estimated best score at
        # least t - slack exactly, so the k-th best exact score is at least that; a row
        # estimated below t - 2 * slack scores below it. Every row estimated at least the
        # k-th best estimate of any group (minus 2 * slack) is here, so t is among them.
        t = float(np.partition(est, -k)[-k]) if len(est) >= k else -np.inf
        keep = est >= t - 2 * slack
        # nothing else from these months can enter the top k: no floor
        return found, Found(ords[keep], est[keep], -np.inf), slack

    def _run(self, jobs: Sequence[Callable[[], Any]], rows: int) -> list[Any]:
        """The jobs' results in order, in the thread pool when there is enough to share (faiss
        and simsimd release the GIL)."""
        if len(jobs) == 1 or self._workers == 1 or rows < _PARALLEL_ROWS:
            with one_thread():
                return [job() for job in jobs]
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="dense-scan")
            pool = self._pool
        return [f.result() for f in [pool.submit(in_one_thread, job) for job in jobs]]

    def _search(self, q: F32, seg: Segment, fetch: int) -> Found:
        import faiss

        rows = self._vectors[seg.lo : seg.hi]  # a contiguous slice: no copy
        scores, ids = faiss.knn(q, rows, fetch, metric=faiss.METRIC_INNER_PRODUCT)
        keep = ids[0] >= 0
        est = scores[0][keep].astype(np.float64)
        floor = -np.inf if fetch >= seg.size or not len(est) else float(est.min())
        return Found(ids[0][keep] + seg.lo, est, floor)

    def _rescore(
        self, ords: npt.NDArray[np.int64], q64: npt.NDArray[np.float64], *, scan: bool = False
    ) -> npt.NDArray[np.float64]:
        """Exact scores from the full vectors, in float64 so that a document's score does not
        depend on which other rows were scored with it. ``scan``: many rows, read through the
        mapping that reads ahead."""
        order = np.argsort(ords)  # rows in storage order: fewer pages touched
        picked = ords[order]
        if not scan:
            prefetch_rows(self._rows, ((r, r + 1) for r in picked.tolist()))
        rows = np.asarray((self._vectors if scan else self._rows)[picked], np.float64)
        out = np.empty(len(ords), dtype=np.float64)
        # a row-wise reduction, not BLAS: gemv kernels sum a row differently by its position
        out[order] = (rows * q64).sum(axis=1)
        return out

    def search(
        self, query: str, *, as_of: datetime, k: int = 10, filters: SearchFilter | None = None
    ) -> list[SearchHit]:
        n = self.index.count_before(as_of)
        allowed = self.index.filter_mask(filters, n)
        return self.index.hits(self.ranked(query, n, k, allowed=allowed), query, as_of, filters)

    def identity(self) -> CorpusIdentity:
        """The index's identity, searched densely with this embedder."""
        base = self.index.identity()
        options = {
            **base.options,
            "embedder": self.embedder.name,
            "dim": self.dim,
            "normalized": True,
            "vectors": "precomputed" if self._precomputed else "computed",
            "exact": self._approximate is None or not self._approximate.until,
        }
        if self._approximate is not None:  # asked for, even where the corpus is too small
            options |= {
                "ivf_min": self._ivf_min,
                "nprobe": self._nprobe,
                "approximate_months": len(self._bounds) if self._approximate.until else 0,
                "lists": self._approximate.lists,
            }
        return base.model_copy(
            update={"backend": "dense", "retrieval": "dense", "options": options}
        )

    def close(self) -> None:
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False)
                self._pool = None


_RERANKED = 4  # candidates beyond k re-scored exactly: each a row read, maybe a page fault
_FILTER_CHUNK = 65_536  # rows scored at once by a filtered search (float64: 200 MB at 384-d)
_EXACT_SLICE = 131_072  # rows per exact piece, so that two threads can share a long slice
_PARALLEL_ROWS = 100_000  # below this, one thread: waking a pool costs more than it saves
# faiss's float32 inner products against the float64 rescoring: for unit vectors the two differ
# by far less than this, so a floor plus this is a safe upper bound for what a search missed
_FLOAT_SLACK = 1e-4
