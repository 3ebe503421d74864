"""The compiled BM25 kernel: one call scores a block's postings and keeps its top k.

Why compiled: a query used to cost ~60 numpy calls (gather, five in-place operations and a
scatter per term, then a partition and a de-duplication), ~1.5 µs each before any data was
touched; on the 37k-document news archive that was most of the scoring time. One loop visits each
posting once instead (measured in ``benchmarks/retrieval_peers.py``).

Exactness: each posting's contribution is the same sequence of IEEE operations as the numpy
scorer (``_bm25._score_partition``): ``len / avgdl``, ``* B``, ``+ (1 - B)``, ``* K1``, ``+ tf``
for the norm, ``tf * (K1 + 1)``, ``* idf``, ``/ norm``; contributions are added per document in
query-term order. numba does not contract or reorder floating-point operations without
``fastmath`` (not set), so scores equal the numpy scorer's bit for bit (tested against it).

numba is imported only by this module, which ``_bm25`` imports on the first search: importing
pastcast stays fast, and the compiled code is cached on disk after the first process.
"""

from __future__ import annotations

import threading
from typing import Any

import numba
import numpy as np
import numpy.typing as npt

__all__ = ["block_top_k"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

_local = threading.local()


@numba.njit(cache=True, nogil=True)
def _kernel(
    post_ord: Any,
    post_tf: Any,
    doc_len: Any,
    slices: Any,
    avgdl: float,
    k: int,
    k1: float,
    b: float,
    one_minus_b: float,
    k1_plus_1: float,
    scratch: Any,
) -> tuple[Any, Any]:
    # slices[t] = (idf, lo, hi) of the t-th query term (offsets as exact float64 integers)
    total = 0
    for t in range(slices.shape[0]):
        total += int(slices[t, 2]) - int(slices[t, 1])
    touched = np.empty(total, dtype=np.int64)
    count = 0
    for t in range(slices.shape[0]):
        w = slices[t, 0]
        for p in range(int(slices[t, 1]), int(slices[t, 2])):
            d = post_ord[p]
            tf = float(post_tf[p])
            norm = doc_len[d] / avgdl
            norm *= b
            norm += one_minus_b
            norm *= k1
            norm += tf
            c = tf * k1_plus_1
            c *= w
            c /= norm
            if scratch[d] == 0.0:  # every contribution is positive: a first visit
                touched[count] = d
                count += 1
            scratch[d] += c
    cand = touched[:count]
    scores = np.empty(count, dtype=np.float64)
    for i in range(count):
        scores[i] = scratch[cand[i]]
        scratch[cand[i]] = 0.0  # leave the scratch clean for the next call
    if count <= k:
        return cand, scores
    # the k-th best score; every document scoring at least that much survives (ties kept)
    kth = np.partition(scores, count - k)[count - k]
    keep = scores >= kth
    return cand[keep], scores[keep]


def _scratch(size: int) -> F64:
    """A zeroed per-thread accumulator of at least ``size`` scores (the kernel re-zeroes what it
    touched), so concurrent searches on one index never share one."""
    buf: F64 | None = getattr(_local, "scratch", None)
    if buf is None or buf.size < size:
        buf = np.zeros(max(size, 1), dtype=np.float64)
        _local.scratch = buf
    return buf


def block_top_k(
    post_ord: Any,
    post_tf: Any,
    doc_len: Any,
    slices: list[tuple[float, int, int]],
    size: int,
    avgdl: float,
    k: int,
    k1: float,
    b: float,
) -> tuple[I64, F64]:
    """The documents of one block (ordinals below ``size``) scoring at least its k-th best score,
    ties kept, for the (idf, lo, hi) posting ranges of the query terms in query order."""
    cand, scores = _kernel(
        post_ord,
        post_tf,
        doc_len,
        np.array(slices, dtype=np.float64),  # one array, not three: each costs a numpy call
        avgdl,
        k,
        k1,
        b,
        1.0 - b,
        k1 + 1.0,
        _scratch(size),
    )
    return cand, scores
