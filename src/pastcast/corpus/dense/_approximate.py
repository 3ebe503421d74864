"""Approximate dense search, as of the cutoff by construction: faiss IVF epochs, epoch ``j``
trained on the rows ``[0, t_j)`` only (``t_j`` a month boundary), a search at ``n`` using the
latest epoch with ``t_j < n`` through ``IDSelectorRange(0, n)`` (exact search before ``t_0``).
Why this equals an index of the past alone, the sizes and the stored files: docs/corpus.md
("Approximate, on request")."""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Callable, Sequence
from contextlib import nullcontext, suppress
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pastcast.atomic import atomic_path
from pastcast.corpus.dense._embedders import F32
from pastcast.corpus.dense._pieces import one_thread
from pastcast.npyfiles import drop_pages, load_npy

_LISTS, _PER_LIST, _MIN_PER_LIST = 2.0, 64, 39  # lists: _LISTS * sqrt(training rows)
_FORMAT = 3  # bumped when what the stored files mean changes
_PARALLEL_ROWS = 200_000  # below this, one OpenMP thread: a team costs more than it saves


class ApproximateIndex:
    """The epochs of the module docstring: ``until`` (each ``t_j``) and their faiss indexes."""

    def __init__(self, until: list[int], indexes: list[Any]) -> None:
        self.until, self.indexes = until, indexes
        self.lists = sum(int(ix.nlist) for ix in indexes)

    def ranges(self, n: int) -> tuple[int, int] | None:
        """The epoch a search at ``n`` uses (the latest trained strictly before ``n``) and the
        end of the rows it may return; None before the first epoch."""
        usable = bisect.bisect_left(self.until, n)
        return None if usable == 0 else (usable - 1, n)

    def search(self, q: F32, n: int, fetch: int, nprobe: int) -> npt.NDArray[np.int64] | None:
        """Up to ``fetch`` candidate rows before ``n`` from ``nprobe`` lists."""
        import faiss

        seen = self.ranges(n)
        if seen is None:
            return None
        rows = faiss.IDSelectorRange(0, seen[1], True)
        params = faiss.SearchParametersIVF()
        params.sel, params.nprobe = rows, nprobe  # ``rows`` stays named while faiss reads it
        ids: npt.NDArray[np.int64] = self.indexes[seen[0]].search(q, fetch, params=params)[1][0]
        return ids[ids >= 0]

    @classmethod
    def load_or_train(
        cls,
        vectors: F32,
        bounds: Sequence[tuple[int, int]],
        digests: Sequence[str],
        ivf_min: int,
        store: Path | None,
    ) -> ApproximateIndex:
        until: list[int] = []
        for lo, hi in bounds:  # each start depends only on the months before it
            if not until and hi >= max(1, ivf_min):
                until.append(hi)
            elif until and lo >= 2 * until[-1]:
                until.append(lo)
        kept: set[str] = set()
        with nullcontext() if len(vectors) >= _PARALLEL_ROWS else one_thread():
            indexes = [
                _epoch(vectors, bounds, digests, until, j, store, kept) for j in range(len(until))
            ]
        if store is not None:
            for stale in store.iterdir():
                if stale.name not in kept and stale.is_file():
                    stale.unlink(missing_ok=True)  # an earlier layout, or a month that changed
        return cls(until, indexes)


def _epoch(
    vectors: F32,
    bounds: Sequence[tuple[int, int]],
    digests: Sequence[str],
    until: list[int],
    j: int,
    store: Path | None,
    kept: set[str],
) -> Any:
    """Epoch ``j``'s IVF over the months before the next start (months are wholly in or out)."""
    import faiss

    d, end = int(vectors.shape[1]), until[j + 1] if j + 1 < len(until) else len(vectors)
    key = _key([digests[p] for p, (lo, _) in enumerate(bounds) if lo < until[j]], until[j], d)
    trained = _stored(store, f"epoch-{key}.npy", partial(_train, vectors, until[j]), _fits, kept)
    index: Any = faiss.deserialize_index(trained)
    for p, (lo, hi) in enumerate(bounds):
        if lo >= end or hi <= lo:
            continue
        rows = np.ascontiguousarray(vectors[lo:hi])
        name = f"lists-{_key([key, digests[p]], hi - lo, d)}.npy"
        made = partial(_nearest, rows, index.quantizer)
        labels = _stored(store, name, made, partial(_lists_fit, hi - lo, index.nlist), kept)
        ids = np.arange(lo, hi, dtype=np.int64)  # named: faiss reads them through pointers
        ptr = faiss.swig_ptr
        index.add_core(hi - lo, ptr(rows), ptr(ids), ptr(labels))
        drop_pages(vectors)  # the resident set holds one month of the vectors, not all
    return index


def _train(vectors: F32, until: int) -> npt.NDArray[np.uint8]:
    """An empty IVF trained on a seeded sample of the rows ``[0, until)``, serialised: its
    spherical k-means centroids, and its 8-bit codes' range per dimension (of the sample's
    residuals to their centroids)."""
    import faiss

    count = max(1, min(int(_LISTS * until**0.5), until // _MIN_PER_LIST))
    picked = np.random.default_rng(until).choice(until, min(until, _PER_LIST * count), False)
    sample = np.ascontiguousarray(vectors[np.sort(picked)], dtype=np.float32)
    d = sample.shape[1]
    if count == 1:
        centroids = np.ascontiguousarray(sample.mean(axis=0, keepdims=True), dtype=np.float32)
    else:
        kmeans = faiss.Kmeans(d, count, niter=10, seed=1234, spherical=True)
        kmeans.cp.max_points_per_centroid = _PER_LIST
        kmeans.train(sample)
        centroids = np.ascontiguousarray(kmeans.centroids, dtype=np.float32)
    quantizer = faiss.IndexFlatIP(d)
    quantizer.add(centroids)
    sq8, ip = faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
    index = faiss.IndexIVFScalarQuantizer(quantizer, d, count, sq8, ip)
    index.train(sample)  # the quantizer holds its centroids: only the 8-bit ranges are fitted
    out: npt.NDArray[np.uint8] = faiss.serialize_index(index)
    return out


def _nearest(rows: F32, quantizer: Any) -> npt.NDArray[np.int64]:
    """Each row's list: its nearest centroid by inner product, as the search ranks them."""
    return np.ascontiguousarray(quantizer.search(rows, 1)[1][:, 0], dtype=np.int64)


def _key(parts: Sequence[str], size: int, d: int) -> str:
    return hashlib.sha256(json.dumps([_FORMAT, list(parts), size, d]).encode()).hexdigest()[:32]


def _fits(a: npt.NDArray[Any]) -> bool:
    return a.ndim == 1 and a.dtype == np.uint8


def _lists_fit(rows: int, lists: int, a: npt.NDArray[Any]) -> bool:
    return (
        a.shape == (rows,)
        and a.dtype == np.int64
        and (rows == 0 or 0 <= a.min() <= a.max() < lists)
    )


def _stored(
    store: Path | None,
    name: str,
    make: Callable[[], Any],
    fits: Callable[[npt.NDArray[Any]], bool],
    kept: set[str],
) -> Any:
    """``store/name`` when it ``fits``, else ``make()``, kept there for the next open (an
    optimisation: a read-only index trains in memory)."""
    kept.add(name)
    if store is not None and (store / name).is_file():
        with suppress(OSError, ValueError):  # made again below
            arr = np.ascontiguousarray(load_npy(store / name))
            if fits(arr):
                return arr
    made = make()
    if store is not None:
        with suppress(OSError), atomic_path(store / name, suffix=".npy") as tmp:
            np.save(tmp, made)
    return made
