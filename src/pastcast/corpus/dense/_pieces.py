"""The pieces an exact dense search is split into (slices of rows, 8-bit months) and the
candidates they propose with bounds on what they missed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

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
    """One OpenMP thread for faiss in the calling thread (the setting is per thread): waking
    a team costs about 20 ms per search on two busy cores, more than the search."""
    import faiss

    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)
