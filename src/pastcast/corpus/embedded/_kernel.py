"""The compiled BM25 kernel: one call scores every admitted block (``query_top_k``) and keeps
the top k, pruned exactly (docs/corpus.md, "Scoring kernel" and "Exact pruning"). What the code
must keep: each posting's contribution is the numpy scorer's sequence of IEEE operations
(``_bm25._score_partition``), added per document in query-term order from 0.0; no ``fastmath``;
every comparison against a bound keeps a relative margin of 1e-9. numba is imported only here,
on the first search, and the compiled code is cached on disk.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
import numpy.typing as npt
from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.numpy_support import carray

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

_local = threading.local()

_MARGIN = 1e-9  # relative slack of every pruning comparison (see the module docstring)


def _cache_found() -> bool:
    """Whether numba finds a writable cache folder: without one it refuses cached functions, so a
    read-only install run by a user with no writable home compiles in each process instead."""
    try:
        numba.njit(cache=True)(_cache_found)  # only looks for the folder: nothing is compiled
    except RuntimeError:
        return False
    return True


_CACHE = _cache_found()


class _DeferredProbe:
    """A probe's truth, taken the first time it is asked for, then kept."""

    def __init__(self, probe: Callable[[], bool]) -> None:
        self._probe = probe
        self._value: bool | None = None

    def __bool__(self) -> bool:
        if self._value is None:
            self._value = bool(self._probe())
        return self._value


def _load_array_library() -> None:
    """Load numba's array library (its first compiled call would) without probing for scipy's
    BLAS as it loads: the probe imports scipy's linear algebra, about 0.2 s of a first search,
    for numba's ``np.dot`` and its kin, which the kernel does not use. The probe's answer is
    deferred, not changed: numba asks for it when it compiles such a call, gets what the probe
    says then, and other numba code in the process sees what it would have."""
    if "numba.np.arraymath" in sys.modules:
        return
    blas = "scipy.linalg.cython_blas"
    hidden = blas not in sys.modules
    if hidden:
        sys.modules[blas] = None  # type: ignore[assignment]  # importing it raises ImportError
    try:
        from numba.np import arraymath
    finally:
        if hidden and sys.modules.get(blas, False) is None:
            del sys.modules[blas]
    probe = getattr(arraymath, "_check_blas", None)
    if hidden and isinstance(getattr(arraymath, "_HAVE_BLAS", None), bool) and callable(probe):
        arraymath._HAVE_BLAS = _DeferredProbe(probe)


_load_array_library()


@numba.njit(cache=_CACHE, nogil=True, inline="always")
def _contribution(
    tf_int: Any,
    dl: Any,
    w: float,
    avgdl: float,
    k1: float,
    b: float,
    one_minus_b: float,
    k1_plus_1: float,
) -> Any:
    tf = float(tf_int)
    norm = dl / avgdl
    norm *= b
    norm += one_minus_b
    norm *= k1
    norm += tf
    c = tf * k1_plus_1
    c *= w
    c /= norm
    return c


@numba.njit(cache=_CACHE, nogil=True)
def _lower_bound(post_ord: Any, lo: int, hi: int, d: int) -> int:
    """The first position in ``post_ord[lo:hi]`` (ascending) holding ``d`` or more."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if post_ord[mid] < d:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=_CACHE, nogil=True)
def _hash_at(h: Any, key: Any) -> int:
    """The first position in ``h`` holding ``key`` or more: ``h`` is the term directory's
    hashes, ascending and spread evenly over 64 bits, so interpolation lands a few positions
    from it where bisection takes 20 probes in 1,000,000 terms; bisection finishes."""
    lo, hi = 0, int(h.shape[0])  # the position is in [lo, hi]
    for _ in range(4):
        if hi - lo < 16:
            break
        first, last = h[lo], h[hi - 1]
        if key <= first:
            return lo
        if key > last:
            return hi
        # first < key <= last: the fraction is in (0, 1], so lo <= mid < hi
        mid = lo + int(float(key - first) / float(last - first) * (hi - 1 - lo))
        if h[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return int(_lower_bound(h, lo, hi, key))


@numba.njit(cache=_CACHE, nogil=True)
def _find(post_ord: Any, lo: int, hi: int, d: int) -> int:
    """The position of ordinal ``d`` in ``post_ord[lo:hi]`` (ascending), or -1."""
    at = _lower_bound(post_ord, lo, hi, d)
    return at if at < hi and post_ord[at] == d else -1


@numba.njit(cache=_CACHE, nogil=True)
def _select(vals: Any, count: int, k: int) -> Any:
    """The k-th largest of ``vals[:count]`` (reordering them in place): no allocation, where
    ``np.partition`` copies up to a block's worth of scores per call."""
    target = count - k  # its position in ascending order
    lo, hi = 0, count - 1
    while lo < hi:
        pivot = vals[(lo + hi) >> 1]
        i, j = lo, hi
        while i <= j:
            while vals[i] < pivot:
                i += 1
            while vals[j] > pivot:
                j -= 1
            if i <= j:
                vals[i], vals[j] = vals[j], vals[i]
                i += 1
                j -= 1
        if target <= j:
            hi = j
        elif target >= i:
            lo = i
        else:  # between j and i every value equals the pivot
            return pivot
    return vals[target]


@numba.njit(cache=_CACHE, nogil=True)
def _block(
    ords: Any,
    tfs: Any,
    lens: Any,
    slices: Any,
    avgdl: float,
    k: int,
    k1: float,
    b: float,
    floor: float,
    base: int,
    work: tuple[Any, Any, Any, Any, Any],
    res_o: Any,
    res_s: Any,
    n_res: int,
) -> tuple[Any, Any, int]:
    """Append to ``res_o``/``res_s[n_res:]`` the block's documents (as ``base`` + ordinal) that
    may rank: its top k with ties, at or above ``floor`` (the k-th score of the blocks before,
    or 0.0); the arrays (grown where full) and their new count are returned. ``slices[t]``:
    (idf, lo, hi, bound) of the t-th query term with postings here."""
    scratch, touched, vals, order, left = work
    one_minus_b, k1_plus_1 = 1.0 - b, k1 + 1.0
    n_terms = slices.shape[0]
    for i in range(n_terms):  # stable insertion sort by bound, descending
        order[i] = i
        j = i
        while j > 0 and slices[order[j - 1], 3] < slices[order[j], 3]:
            order[j - 1], order[j] = order[j], order[j - 1]
            j -= 1
    left[n_terms] = 0.0  # left[j]: the bounds of terms order[j:] summed
    for j in range(n_terms - 1, -1, -1):
        left[j] = left[j + 1] + slices[order[j], 3]
    count = 0  # touched[:count]: the documents scored so far (each at most once)
    theta = floor
    j = 0
    # Phase 1: score whole terms while a document they have not reached could still rank.
    while j < n_terms:
        if count >= k:
            for i in range(count):
                vals[i] = scratch[touched[i]]
            theta = max(theta, _select(vals, count, k))
        if theta > 0.0 and left[j] * (1.0 + _MARGIN) < theta * (1.0 - _MARGIN):
            break
        t = order[j]
        w = slices[t, 0]
        # a document first met here that cannot reach theta with every term left is not kept:
        # met again by a later term, it holds less than its score, below theta still
        need, rest = theta * (1.0 - _MARGIN), left[j + 1]
        for p in range(int(slices[t, 1]), int(slices[t, 2])):
            d = ords[p]
            c = _contribution(tfs[p], lens[d], w, avgdl, k1, b, one_minus_b, k1_plus_1)
            if scratch[d] == 0.0:  # every contribution is positive: a first visit
                if (c + rest) * (1.0 + _MARGIN) < need:
                    continue
                touched[count] = d
                count += 1
            scratch[d] += c
        j += 1
    reordered = False
    for i in range(n_terms):
        reordered = reordered or order[i] != i
    if j < n_terms:
        # Phase 2: only the documents found so far that may still reach theta.
        reordered = True
        keep = 0
        for i in range(count):
            d = touched[i]
            if (scratch[d] + left[j] * (1.0 + _MARGIN)) >= theta * (1.0 - _MARGIN):
                touched[keep] = d
                keep += 1
            else:
                scratch[d] = 0.0
        count = keep
        while j < n_terms:
            t = order[j]
            w = slices[t, 0]
            lo, hi = int(slices[t, 1]), int(slices[t, 2])
            steps = 1
            while (1 << steps) < hi - lo:
                steps += 1
            if count * steps < hi - lo:
                for i in range(count):
                    d = touched[i]
                    p = _find(ords, lo, hi, d)
                    if p >= 0:
                        scratch[d] += _contribution(
                            tfs[p], lens[d], w, avgdl, k1, b, one_minus_b, k1_plus_1
                        )
            else:
                for p in range(lo, hi):
                    d = ords[p]
                    if scratch[d] != 0.0:  # a candidate (every other document was reset)
                        scratch[d] += _contribution(
                            tfs[p], lens[d], w, avgdl, k1, b, one_minus_b, k1_plus_1
                        )
            j += 1
    cut = floor  # what may rank: the block's k-th score (ties kept), at least the floor
    if count > k:
        for i in range(count):
            vals[i] = scratch[touched[i]]
        cut = max(cut, _select(vals, count, k))
    if reordered:  # summed in another order: a margin, then scored again in query-term order
        cut *= 1.0 - _MARGIN
    if n_res + count > res_o.shape[0]:
        size = 2 * (n_res + count)
        grown_o, grown_s = np.empty(size, dtype=np.int64), np.empty(size, dtype=np.float64)
        grown_o[:n_res], grown_s[:n_res] = res_o[:n_res], res_s[:n_res]
        res_o, res_s = grown_o, grown_s
    for i in range(count):
        d = touched[i]
        score = scratch[d]
        scratch[d] = 0.0  # leave the scratch clean for the next block and call
        if score < cut:
            continue
        if reordered:
            score = 0.0
            for t in range(n_terms):
                p = _find(ords, int(slices[t, 1]), int(slices[t, 2]), d)
                if p >= 0:
                    score += _contribution(
                        tfs[p], lens[d], slices[t, 0], avgdl, k1, b, one_minus_b, k1_plus_1
                    )
        res_o[n_res], res_s[n_res] = base + d, score
        n_res += 1
    return res_o, res_s, n_res


COLUMNS = (  # a block's arrays, in ``BlockTable.table``'s column order, with their dtypes
    ("post_ord", np.int32),
    ("post_tf", np.int32),
    ("doc_len", np.int32),
    ("term_offsets", np.int64),
    ("term_max_tf", np.int64),
    ("term_min_len", np.int64),
    ("term_peak", np.float64),
    ("term_ids", np.int64),  # the term table (``TermTable.arrays``) but its hashes
    ("text_offsets", np.int64),
    ("text", np.uint8),
)
# the dtypes of the ``TermDirectory`` arrays (keys, starts, block, slot): ``BlockTable.directory``
DIRECTORY = (np.uint64, np.int64, np.int32, np.int32)
_ORD, _TF, _LEN, _OFFSETS, _MAX_TF, _MIN_LEN, _PEAK, _IDS, _TEXT_OFFSETS, _TEXT = range(10)


def _address_type(typingctx: Any, address: Any) -> Any:
    """An address (int64) as the void pointer ``carray`` views."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return types.voidptr(address), codegen


_pointer: Any = intrinsic(_address_type)


@numba.njit(cache=_CACHE, nogil=True, inline="always")
def _column(table: Any, blk: int, col: int, dtype: Any) -> Any:
    """Block ``blk``'s array ``col`` (``COLUMNS``), of ``dtype``."""
    return carray(_pointer(table[blk, col, 0]), table[blk, col, 1], dtype)


@numba.njit(cache=_CACHE, nogil=True)
def postings(
    table: Any, directory: Any, qhash: Any, qtext: Any, qoffs: Any, last: int, m: int, longer: int
) -> tuple[I64, I64, I64]:
    """``rows[t, blk]``: query term ``t``'s visible postings range in block ``blk`` (up to
    ``last``, of which the first ``m`` documents are visible), its bounds there and its id:
    (lo, hi, largest tf, shortest length, id), hi <= lo where it has none; each term's document
    frequency as of the cutoff; and the (block, lo, hi) of the ranges of more than ``longer``
    postings. A term is found by its hash (``qhash``) in the ``TermDirectory`` (keys, starts,
    block, slot), once for every block, and confirmed in each block's table by its UTF-8
    (``qtext[qoffs[t]:qoffs[t + 1]]``)."""
    keys = carray(_pointer(directory[0, 0]), directory[0, 1], np.uint64)
    starts = carray(_pointer(directory[1, 0]), directory[1, 1], np.int64)
    entry_block = carray(_pointer(directory[2, 0]), directory[2, 1], np.int32)
    entry_slot = carray(_pointer(directory[3, 0]), directory[3, 1], np.int32)
    n_terms = qhash.shape[0]
    rows = np.zeros((n_terms, last + 1, 5), dtype=np.int64)
    df = np.zeros(n_terms, dtype=np.int64)
    spans = np.empty((n_terms * (last + 1), 3), dtype=np.int64)
    n_spans = 0
    for t in range(n_terms):
        g = _hash_at(keys, qhash[t])
        if g >= keys.shape[0] or keys[g] != qhash[t]:
            continue
        size = qoffs[t + 1] - qoffs[t]
        for e in range(starts[g], starts[g + 1]):
            blk = entry_block[e]
            if blk > last:  # entries ascend by block: the rest are after the cutoff
                break
            at = entry_slot[e]
            o = _column(table, blk, _TEXT_OFFSETS, np.int64)
            txt = _column(table, blk, _TEXT, np.uint8)
            if o[at + 1] - o[at] != size:  # equal hashes: the text decides
                continue
            same = True
            for i in range(size):
                if txt[o[at] + i] != qtext[qoffs[t] + i]:
                    same = False
                    break
            if not same:
                continue
            tid = _column(table, blk, _IDS, np.int64)[at]
            offsets = _column(table, blk, _OFFSETS, np.int64)
            lo, hi = offsets[tid], offsets[tid + 1]
            if blk == last:  # postings ascend: the visible ones are a prefix
                hi = _lower_bound(_column(table, blk, _ORD, np.int32), lo, hi, m)
            rows[t, blk, 0], rows[t, blk, 1] = lo, hi
            rows[t, blk, 2] = _column(table, blk, _MAX_TF, np.int64)[tid]
            rows[t, blk, 3] = _column(table, blk, _MIN_LEN, np.int64)[tid]
            rows[t, blk, 4] = tid
            df[t] += max(hi - lo, 0)
            if hi - lo > longer:
                spans[n_spans, 0], spans[n_spans, 1], spans[n_spans, 2] = blk, lo, hi
                n_spans += 1
    return rows, df, spans[:n_spans]


@numba.njit(cache=_CACHE, nogil=True)
def _query_kernel(
    table: Any,
    rows: Any,
    df: Any,
    n_all: int,
    df_all: Any,
    bases: Any,
    avgdl: float,
    k: int,
    k1: float,
    b: float,
    id_rank: Any,
    peak_avgdl: Any,
    scratch: Any,
    touched: Any,
    vals: Any,
) -> tuple[Any, Any]:
    idf = np.zeros(len(df))
    for t in range(len(df)):
        if df[t] > 0:  # a term with no visible posting scores nothing
            g = df[t] if df_all[t] < 0 else df_all[t]
            idf[t] = math.log(1.0 + (n_all - g + 0.5) / (g + 0.5))
    n_terms, n_blk = rows.shape[0], rows.shape[1]
    # each block's reach: its terms' bounds summed, the best score any of its documents can get.
    # A term's bound: its largest tf over its shortest document, or, tighter where both come
    # from different postings, its peak (``_arrays.term_bounds``) times the cutoff's average
    # length over the peak's, where that is larger (a score grows with the average length)
    bounds = np.zeros((n_blk, n_terms))
    reach = np.zeros(n_blk)
    for blk in range(n_blk):
        peaks = _column(table, blk, _PEAK, np.float64)
        for t in range(n_terms):
            if rows[t, blk, 1] > rows[t, blk, 0] and idf[t] > 0.0:  # so the block's avgdl > 0
                tf, length = float(rows[t, blk, 2]), float(rows[t, blk, 3])
                norm = tf + k1 * (1.0 - b + b * (length / avgdl))
                loose = idf[t] * (tf * (k1 + 1.0)) / norm
                stretch = max(1.0, avgdl / peak_avgdl[blk])
                bounds[blk, t] = min(loose, idf[t] * peaks[rows[t, blk, 4]] * stretch)
                reach[blk] += bounds[blk, t]
    floor = 0.0  # the k-th score found so far, once k are found
    n_res = 0
    res_o, res_s = np.empty(4 * k + 64, dtype=np.int64), np.empty(4 * k + 64, dtype=np.float64)
    work = (scratch, touched, vals, np.empty(n_terms, dtype=np.int64), np.empty(n_terms + 1))
    slices = np.empty((n_terms, 4), dtype=np.float64)
    # highest reach first: the k-th score rises early, and once it is above a block's reach it
    # is above the reach of every block after it
    for blk in np.argsort(-reach, kind="mergesort"):
        if reach[blk] <= 0.0:
            break
        if n_res >= k and reach[blk] * (1.0 + _MARGIN) < floor * (1.0 - _MARGIN):
            break
        r = 0
        for t in range(n_terms):
            if bounds[blk, t] > 0.0:
                slices[r, 0], slices[r, 1] = idf[t], rows[t, blk, 0]
                slices[r, 2], slices[r, 3] = rows[t, blk, 1], bounds[blk, t]
                r += 1
        res_o, res_s, n_res = _block(
            _column(table, blk, _ORD, np.int32),
            _column(table, blk, _TF, np.int32),
            _column(table, blk, _LEN, np.int32),
            slices[:r],
            avgdl,
            k,
            k1,
            b,
            floor,
            bases[blk],
            work,
            res_o,
            res_s,
            n_res,
        )
        if n_res >= k:  # cut to the k-th score so far (ties kept): the next block's floor
            buf = vals if n_res <= vals.shape[0] else np.empty(n_res)
            buf[:n_res] = res_s[:n_res]
            floor = _select(buf, n_res, k)
            keep = 0
            for i in range(n_res):
                if res_s[i] >= floor:
                    res_o[keep], res_s[keep] = res_o[i], res_s[i]
                    keep += 1
            n_res = keep
    # the ranking: score descending, then id ascending (stable sorts: by id rank, then score)
    got_o, got_s = res_o[:n_res], res_s[:n_res]
    by_rank = np.argsort(id_rank[got_o], kind="mergesort")
    by_score = by_rank[np.argsort(-got_s[by_rank], kind="mergesort")][:k]
    return got_o[by_score], got_s[by_score]


def query_top_k(
    table: I64,
    rows: I64,
    df: I64,
    n: int,
    avgdl: float,
    k: int,
    bases: I64,
    id_rank: I64,
    scratch_size: int,
    peak_avgdl: F64,
    k1: float,
    b: float,
    corpus: tuple[int, list[int]] | None = None,
) -> tuple[I64, F64]:
    """The top ``k`` of every admitted block (``n`` documents visible in all) as global ordinals
    and scores: score descending, then id ascending (by ``id_rank``). ``table``,
    ``scratch_size`` (the largest block's document count) and ``peak_avgdl``: of a
    ``BlockTable``; ``rows`` and ``df``: the query terms' visible postings (``postings``);
    ``id_rank``: read-only (numba compiles, and caches, one version per writability: an index
    in memory would compile a second); ``corpus``: the document count and the terms' document
    frequencies of a whole corpus, for the idf."""
    n_all, df_all = (n, [-1] * len(df)) if corpus is None else corpus
    return _query_kernel(
        table,
        rows,
        df,
        n_all,
        np.array(df_all, dtype=np.int64),
        bases,
        avgdl,
        k,
        k1,
        b,
        id_rank,
        peak_avgdl,
        *_buffers(scratch_size),
    )


def _buffers(size: int) -> tuple[F64, I64, F64]:
    """Per-thread work space for blocks of up to ``size`` documents, so concurrent searches on
    one index never share one: a zeroed score accumulator (the kernel re-zeroes what it
    touched), the list of touched documents and room for their scores. Allocating the last two
    per call cost page faults (up to a block's worth each)."""
    bufs: tuple[F64, I64, F64] | None = getattr(_local, "buffers", None)
    if bufs is None or bufs[0].size < size:
        n = max(size, 1)
        bufs = (np.zeros(n), np.zeros(n, dtype=np.int64), np.zeros(n))
        _local.buffers = bufs
    return bufs
