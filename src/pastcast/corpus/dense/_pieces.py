"""The pieces a dense search is split into (exact slices, approximate months), the candidates
they propose with bounds on what they missed, and the per-month IVF indexes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from pastcast.atomic import atomic_path
from pastcast.corpus.dense._embedders import F32

__all__ = [
    "Candidates",
    "Found",
    "Segment",
    "balanced",
    "in_one_thread",
    "month_ivf_cached",
    "one_thread",
]

_T = TypeVar("_T")


def balanced(items: list[_T], sizes: list[int], groups: int) -> list[list[_T]]:
    """``items`` in order, cut into at most ``groups`` runs of about equal total size."""
    out: list[list[_T]] = []
    run: list[_T] = []
    total, acc = sum(sizes), 0
    for item, size in zip(items, sizes, strict=True):
        run.append(item)
        acc += size
        if acc * groups >= total * (len(out) + 1) and len(out) < groups - 1:
            out.append(run)
            run = []
    return [*out, run] if run else out


def in_one_thread(job: Callable[[], Any]) -> Any:
    with one_thread():
        return job()


@dataclass
class Candidates:
    """Every piece's candidates side by side: ordinal, upper bound of the exact score (the
    estimate plus its piece's slack) and the exact score once rescored (NaN before)."""

    ords: npt.NDArray[np.int64]
    upper: npt.NDArray[np.float64]
    exact: npt.NDArray[np.float64]

    @classmethod
    def of(
        cls, found: list[Found], slack: list[float], carry: Candidates | None = None
    ) -> Candidates:
        ords = np.concatenate([f.ords for f in found])
        upper = np.concatenate([f.scores + e for f, e in zip(found, slack, strict=True)])
        exact = np.full(len(ords), np.nan)
        if carry is not None:  # keep the exact scores already computed
            done = ~np.isnan(carry.exact)
            known, scores = carry.ords[done], carry.exact[done]
            order = np.argsort(known)
            at = np.clip(np.searchsorted(known[order], ords), 0, max(len(known) - 1, 0))
            if len(known):
                hit = known[order][at] == ords
                exact[hit] = scores[order][at][hit]
        return cls(ords, upper, exact)

    def kth_exact(self, k: int) -> float:
        done = self.exact[~np.isnan(self.exact)]
        return -np.inf if len(done) < k else float(np.partition(done, -k)[-k])

    def worth_rescoring(self, k: int, kth: float) -> npt.NDArray[np.intp]:
        fresh = np.isnan(self.exact)
        missing = k - (len(fresh) - int(fresh.sum()))
        if missing > 0:  # fewer than k exact scores: the most promising candidates first
            want = np.flatnonzero(fresh)
            return want[np.argsort(-self.upper[want], kind="stable")[:missing]]
        return np.flatnonzero(fresh & (self.upper >= kth))  # any that might beat the k-th


@dataclass(frozen=True)
class Segment:
    lo: int
    hi: int
    ivf: Any | None  # an approximate month index, or None: an exact slice

    @property
    def size(self) -> int:
        return self.hi - self.lo


@dataclass(frozen=True)
class Found:
    ords: npt.NDArray[np.int64]
    scores: npt.NDArray[np.float64]  # exact for exact slices, estimates for quantized months
    floor: float  # no document the search did not return scores above this; -inf: none left


@contextmanager
def one_thread() -> Iterator[None]:
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


def month_ivf_cached(vectors: F32, first_ordinal: int, nprobe: int, path: Path | None) -> Any:
    """``_month_ivf``, loaded from ``path`` when trained before (training is the slow part)."""
    import faiss

    if path is not None and path.is_file():
        loaded = faiss.read_index(str(path))
        if loaded.ntotal == len(vectors) and loaded.d == vectors.shape[1]:
            faiss.extract_index_ivf(loaded).nprobe = nprobe
            return loaded
    ivf = month_ivf(vectors, first_ordinal, nprobe)
    if path is not None:
        try:
            with atomic_path(path) as tmp:
                faiss.write_index(ivf, str(tmp))
        except (OSError, RuntimeError):
            pass  # caching is an optimisation; the index is in memory
    return ivf


def month_ivf(vectors: F32, first_ordinal: int, nprobe: int) -> Any:
    """An IVF index of one month's vectors, labelled with their global ordinals."""
    import faiss

    d = vectors.shape[1]
    # about sqrt(n) lists, but no more than one per 39 training points (faiss's minimum for a
    # sound k-means; below it, it warns on every month), and two for any month of two or more
    # vectors, so that even a small month is searched approximately when asked
    nlist = max(1, min(int(len(vectors) ** 0.5), max(2, len(vectors) // 39)))
    ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, nlist, faiss.METRIC_INNER_PRODUCT)
    ivf.train(vectors)
    ids = np.arange(first_ordinal, first_ordinal + len(vectors), dtype=np.int64)
    ivf.add_with_ids(vectors, ids)
    ivf.nprobe = nprobe
    return ivf
