"""Approximate dense search, as of the cutoff by construction: faiss IVF indexes trained only on
documents before every cutoff they serve, searched through the range of rows before it.

Vectors are stored in time order, so the documents visible at a cutoff are the rows ``[0, n)``.
The corpus is cut into epochs at month boundaries ``t_0 < t_1 < ...``: ``t_0`` is the end of the
first month that reaches ``ivf_min`` rows, and a new epoch starts with each month that begins
once the rows have doubled since the previous ``t``. Epoch ``j`` has its own IVF: coarse
centroids trained (k-means) on the rows ``[0, t_j)`` only, holding every row before the next
epoch's start (every row, for the last epoch). A search at ``n`` uses the latest epoch trained
strictly before ``n`` (``t_j < n <= t_{j+1}``, so it holds every row before ``n``) and gives faiss
an ``IDSelectorRange`` over the rows ``[0, n)`` (a list holds its ids in increasing order, so a
binary search bounds each list). Nothing it ranks depends on a document at or after the cutoff:
an index of the documents before it alone has the same months up to the cutoff's, hence the same
epochs (their starts depend only on earlier months), the same centroids and the same lists below
``n``, and returns the same hits. Before ``t_0`` (``n <= t_0``) the caller searches exactly.

Each epoch was trained on at least half of what it serves (the rows double between epochs), so
it follows the corpus as it grows and drifts; about ``log2(N / t_0)`` epochs, each row held by
two of them on average. Parameters by size: ``2 * sqrt(t_j)`` lists an epoch (at most one per 39
training rows, faiss's minimum for a sound k-means), trained on at most 64 rows a list; the
lists hold float16 codes (half the memory of float32; with each row in about two epochs, one
float32 copy's worth in all), and the caller re-scores the candidates exactly.

The trained centroids and every month's list numbers in each epoch are kept in ``ivf-MODEL/``
beside the index, named by the content digests they depend on, and the faiss indexes are filled
from them and the stored vectors when opened: an epoch is never retrained while the months before
its start are unchanged, and new months join the last epoch or start their own. Anything else
there (the per-month IVF files of earlier versions, a month that changed) is removed, and what
is missing is trained again.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pastcast.atomic import atomic_path
from pastcast.corpus.dense._embedders import F32
from pastcast.corpus.dense._pieces import one_thread
from pastcast.npyfiles import load_npy

__all__ = ["ApproximateIndex", "Epoch"]

I64 = npt.NDArray[np.int64]
_LISTS = 2.0  # lists an epoch, times sqrt(rows trained on)
_PER_LIST = 64  # training rows a list, at most
_MIN_PER_LIST = 39  # faiss's minimum for a sound k-means
_FORMAT = 2  # bumped when what the stored files mean changes
_PARALLEL_ROWS = 200_000  # below this, trained and filled in one thread


@dataclass(frozen=True)
class Epoch:
    """An IVF trained on the rows ``[0, until)``, holding the rows ``[0, end)``."""

    until: int
    end: int
    lists: int
    index: Any


class ApproximateIndex:
    """The epochs of the module docstring over ``vectors`` (see ``load_or_train``)."""

    def __init__(self, epochs: list[Epoch], months: int) -> None:
        self.epochs = epochs
        self.months = months  # month partitions held in the lists
        self._until = [e.until for e in epochs]

    @property
    def lists(self) -> int:
        return sum(e.lists for e in self.epochs)

    def ranges(self, n: int) -> tuple[int, int] | None:
        """What a search at ``n`` may see: the epoch trained strictly before ``n`` (the latest)
        and the rows ``[0, n)``; None while no epoch is."""
        usable = bisect.bisect_left(self._until, n)  # epochs with until < n
        return None if usable == 0 else (usable - 1, n)

    def search(self, q: F32, n: int, fetch: int, nprobe: int) -> tuple[I64, F32] | None:
        """Up to ``fetch`` rows before ``n`` and their estimated scores, from ``nprobe`` lists
        of the epoch trained before ``n``; None while none is (the caller searches exactly)."""
        import faiss

        seen = self.ranges(n)
        if seen is None:
            return None
        rows = faiss.IDSelectorRange(0, seen[1], True)  # sorted ids: a binary search a list
        params = faiss.SearchParametersIVF()
        params.sel, params.nprobe = rows, nprobe  # ``rows`` stays named while faiss reads it
        scores, ids = self.epochs[seen[0]].index.search(q, fetch, params=params)
        keep = ids[0] >= 0
        return ids[0][keep], scores[0][keep]

    @classmethod
    def load_or_train(
        cls,
        vectors: F32,
        bounds: Sequence[tuple[int, int]],
        digests: Sequence[str],
        ivf_min: int,
        store: Path | None,
    ) -> ApproximateIndex:
        """The epochs over every month, their centroids and list numbers read from ``store``
        where they were trained before, trained (and kept there) where not."""
        starts = _epoch_starts(bounds, max(1, ivf_min))
        if not starts:
            return cls([], 0)
        # OpenMP teams cost more than small work saves (seconds on busy cores): one thread
        with nullcontext() if len(vectors) >= _PARALLEL_ROWS else one_thread():
            epochs = _epochs(vectors, bounds, digests, starts, store)
        return cls(epochs, len(bounds))


def _epochs(
    vectors: F32,
    bounds: Sequence[tuple[int, int]],
    digests: Sequence[str],
    starts: list[int],
    store: Path | None,
) -> list[Epoch]:
    """Each epoch's IVF, filled from the stored centroids and list numbers or trained."""
    import faiss

    d, kept = int(vectors.shape[1]), set[str]()
    epochs = []
    for j, until in enumerate(starts):
        end = starts[j + 1] if j + 1 < len(starts) else len(vectors)
        before = [digests[p] for p, (lo, _) in enumerate(bounds) if lo < until]
        key = _key("epoch", before, until, d)
        train = partial(_train, vectors, until)
        centroids = _stored(store, f"epoch-{key}.npy", train, (-1, d), kept)
        quantizer = faiss.IndexFlatIP(d)
        quantizer.add(centroids)
        fp16, ip = faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
        index = faiss.IndexIVFScalarQuantizer(quantizer, d, len(centroids), fp16, ip)
        index.is_trained = True  # centroids trained above; float16 codes need no training
        for p, (lo, hi) in enumerate(bounds):
            if lo >= end or hi <= lo:
                continue  # months start at epoch boundaries: wholly in or out
            rows = np.ascontiguousarray(vectors[lo:hi])
            name = f"lists-{_key('lists', [key, digests[p]], hi - lo, d)}.npy"
            assign = partial(_assign, rows, centroids)
            own = _stored(store, name, assign, (hi - lo,), kept)
            # every array named while faiss reads it through its pointer
            ids, labels = np.arange(lo, hi, dtype=np.int64), own.astype(np.int64)
            ptr = faiss.swig_ptr
            index.add_core(hi - lo, ptr(rows), ptr(ids), ptr(labels))
        epochs.append(Epoch(until, end, len(centroids), index))
    if store is not None:
        for stale in store.iterdir():
            if stale.name not in kept and stale.is_file():
                stale.unlink(missing_ok=True)  # an earlier layout, or a month that changed
    return epochs


def _epoch_starts(bounds: Sequence[tuple[int, int]], ivf_min: int) -> list[int]:
    """Each epoch's ``until``: the end of the first month reaching ``ivf_min`` rows, then the
    start of every month beginning once the rows have doubled since the previous one. Each
    depends only on the months before it, so an index of the earlier documents alone has the
    same."""
    out: list[int] = []
    for lo, hi in bounds:
        if not out and hi >= ivf_min:
            out.append(hi)
        elif out and lo >= 2 * out[-1]:
            out.append(lo)
    return out


def _train(vectors: F32, until: int) -> F32:
    """k-means centroids of the rows ``[0, until)`` (a seeded sample of at most 64 a list)."""
    import faiss

    d = int(vectors.shape[1])
    count = max(1, min(int(_LISTS * until**0.5), until // _MIN_PER_LIST))
    take = min(until, _PER_LIST * count)
    picked = np.sort(np.random.default_rng(until).choice(until, take, replace=False))
    sample = np.ascontiguousarray(vectors[picked], dtype=np.float32)
    if count == 1:
        centre = sample.mean(axis=0, keepdims=True)
        return np.ascontiguousarray(centre, dtype=np.float32)
    kmeans = faiss.Kmeans(
        d, count, niter=10, seed=1234, spherical=True, max_points_per_centroid=_PER_LIST
    )
    kmeans.train(sample)
    return np.ascontiguousarray(kmeans.centroids, dtype=np.float32)


def _assign(rows: F32, centroids: F32) -> npt.NDArray[np.int32]:
    """Each row's nearest centroid by inner product, as the search's quantizer ranks them."""
    import faiss

    flat = faiss.IndexFlatIP(centroids.shape[1])
    flat.add(centroids)
    _, nearest = flat.search(rows, 1)
    return nearest[:, 0].astype(np.int32)


def _key(kind: str, parts: Sequence[str], size: int, d: int) -> str:
    text = json.dumps([kind, _FORMAT, list(parts), size, d])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _stored(
    store: Path | None, name: str, make: Callable[[], Any], shape: tuple[int, ...], kept: set[str]
) -> Any:
    """The array kept as ``store/name`` when of this shape (-1: any length), else ``make()``,
    kept there for the next open (an optimisation: a read-only index trains in memory)."""
    kept.add(name)
    if store is not None and (store / name).is_file():
        try:
            arr = load_npy(store / name)
            if len(arr.shape) == len(shape) and all(
                want in (-1, got) for want, got in zip(shape, arr.shape, strict=True)
            ):
                return np.ascontiguousarray(arr)
        except (OSError, ValueError):
            pass  # made again below
    made = make()
    if store is not None:
        try:
            with atomic_path(store / name, suffix=".npy") as tmp:
                np.save(tmp, made)
        except OSError:
            pass
    return made
