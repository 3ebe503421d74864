"""BM25 over month partitions with statistics taken exactly "as of" a cutoff: the admitted
partitions' totals plus the prefix of the cutoff's own, every admitted partition scored with
them, the same IEEE operations per posting as in an index of the past alone, so scores are equal
bit for bit (docs/corpus.md, "As-of exactness" and "Month partitions").
"""

from __future__ import annotations

import bisect
import itertools
import math
import mmap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pastcast.corpus.embedded._arrays import (
    K1,
    B,
    IndexArrays,
    TermDirectory,
    peak_avgdl,
    term_hashes,
)
from pastcast.npyfiles import prefetch_rows

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]
_Slices = list[tuple[float, int, int]]  # (idf, lo, hi) into a partition's postings


def _empty() -> tuple[I64, F64]:
    return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)


def top_with_ties(cand: I64, scores: F64, k: int) -> tuple[I64, F64]:
    """The candidates scoring at least the k-th best score (so ties at the boundary survive)."""
    if len(cand) <= k:
        return cand, scores
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    keep = scores >= kth
    return cand[keep], scores[keep]


@dataclass(frozen=True)
class AsOfStatistics:
    """The BM25 statistics of a set of documents: their count, total length and each term's
    document frequency. Those of disjoint sets (the month shards of one corpus) add up."""

    n: int
    total_len: int
    df: dict[str, int]

    def __add__(self, other: AsOfStatistics) -> AsOfStatistics:
        df = dict(self.df)
        for term, count in other.df.items():
            df[term] = df.get(term, 0) + count
        return AsOfStatistics(self.n + other.n, self.total_len + other.total_len, df)


def _postings(
    parts: Sequence[IndexArrays], bases: I64, terms: list[str], n: int, *, future: bool
) -> tuple[AsOfStatistics, list[list[tuple[int, int, int]]]]:
    """The statistics of the first ``n`` documents (the admitted partitions' totals plus the
    prefix of the cutoff's own) and, per query term, its (partition, lo, hi) postings ranges:
    the visible ones, or with ``future`` every one."""
    last = int(np.searchsorted(bases, n, side="left")) - 1  # the partition of ordinal n - 1
    m = n - int(bases[last])  # its visible documents
    total_len = sum(int(p.len_prefix[-1]) for p in parts[:last]) + int(parts[last].len_prefix[m])
    df: dict[str, int] = {}
    ranges: list[list[tuple[int, int, int]]] = []
    for term in terms:
        count = 0
        found: list[tuple[int, int, int]] = []
        for p in range(len(parts) if future else last + 1):
            tid = parts[p].vocab.get(term)
            if tid is None:
                continue
            lo, hi = int(parts[p].term_offsets[tid]), int(parts[p].term_offsets[tid + 1])
            if p < last:
                count += hi - lo
            elif p == last:
                visible = int(np.searchsorted(parts[p].post_ord[lo:hi], m, side="left"))
                count += visible
                hi = hi if future else lo + visible
            if hi > lo:
                found.append((p, lo, hi))
        if count:
            df[term] = count
        ranges.append(found)
    return AsOfStatistics(n, total_len, df), ranges


_PAGE_ROWS = mmap.PAGESIZE // 4  # int32 postings a page holds


def _prefetch(parts: Sequence[IndexArrays], spans: Iterable[tuple[int, int, int]]) -> None:
    """Ask for the pages of each (partition, lo, hi) postings range longer than a page before
    it is scored: mapped without read-ahead (``_arrays._READ_AHEAD``), each page would wait for
    its own fault. Within a page, one fault costs what the advice would save, and the advice a
    system call (~1 µs) on every search, cached or not: some 200 a query at 5M."""
    for p, lo, hi in spans:
        if hi - lo > _PAGE_ROWS:
            prefetch_rows(parts[p].post_ord, [(lo, hi)])
            prefetch_rows(parts[p].post_tf, [(lo, hi)])


def as_of_statistics(
    parts: Sequence[IndexArrays], bases: I64, terms: list[str], n: int
) -> AsOfStatistics:
    """The statistics of the first ``n`` documents, exactly those a search at that cutoff uses."""
    if n <= 0:
        return AsOfStatistics(0, 0, {})
    return _postings(parts, bases, terms, n, future=False)[0]


def _score_partition(part: IndexArrays, size: int, slices: _Slices, avgdl: float) -> F64:
    scores = np.zeros(size, dtype=np.float64)
    for idf, lo, hi in slices:
        ords = part.post_ord[lo:hi]
        tf = part.post_tf[lo:hi].astype(np.float64)
        # (idf * (tf * (K1 + 1))) / (tf + K1 * (1 - B + B * (len / avgdl))), evaluated in place:
        # the same IEEE operations on the same operands (swapped only where they commute).
        norm = part.doc_len[ords] / avgdl
        norm *= B
        norm += 1.0 - B
        norm *= K1
        norm += tf
        tf *= K1 + 1.0
        tf *= idf
        tf /= norm
        scores[ords] += tf
    return scores


@dataclass(frozen=True)
class BlockTable:
    """The scoring blocks' arrays for the compiled query kernel (``_kernel``): one compiled
    call scores every block, instead of a Python round per block and term."""

    table: I64  # table[blk, col]: the address and length of block blk's array col (``COLUMNS``)
    arrays: tuple[Any, ...]  # those arrays: held here, so that the addresses stay valid
    len_before: list[int]  # total length of the blocks before each block
    starts: list[int]  # the first global ordinal of each block, then the document count
    largest: int  # the largest block's document count (the kernel's scratch size)
    peak_avgdl: F64  # the average length of each block's stored peaks (``term_bounds``)
    directory: I64  # the address and length of each ``TermDirectory`` array (``DIRECTORY``)


def block_table(parts: Sequence[IndexArrays], directory: TermDirectory | None) -> BlockTable:
    """``BlockTable`` of ``parts``: each array contiguous, of its column's dtype (memory-mapped
    ones are used as they are), with each block's stored term bounds and term table, and their
    ``directory`` (made here where none was stored)."""
    from pastcast.corpus.embedded._kernel import COLUMNS, DIRECTORY

    held: list[Any] = []
    d = directory or TermDirectory.of([p.vocab for p in parts])
    addresses = np.zeros((len(DIRECTORY), 2), dtype=np.int64)
    for row, kind in enumerate(DIRECTORY):
        a = np.ascontiguousarray((d.keys, d.starts, d.block, d.slot)[row], dtype=kind)
        held.append(a)
        addresses[row] = a.ctypes.data, a.size
    table = np.zeros((len(parts), len(COLUMNS), 2), dtype=np.int64)
    for blk, p in enumerate(parts):
        _, ids, offsets, text = p.vocab.arrays()  # mapped: nothing parsed
        columns: tuple[Any, ...] = (p.post_ord, p.post_tf, p.doc_len, p.term_offsets)
        columns += (p.term_max_tf, p.term_min_len, p.term_peak, ids, offsets, text)
        for col, (array, (_, dtype)) in enumerate(zip(columns, COLUMNS, strict=True)):
            a = np.ascontiguousarray(array, dtype=dtype)
            held.append(a)
            table[blk, col] = a.ctypes.data, a.size
    totals = [0]
    for p in parts:
        totals.append(totals[-1] + int(p.len_prefix[-1]))
    return BlockTable(
        table,
        tuple(held),
        totals,
        list(itertools.accumulate((len(p.ids) for p in parts), initial=0)),
        max((len(p.ids) for p in parts), default=0),
        np.array([peak_avgdl(len(p.ids), p.len_prefix) for p in parts], dtype=np.float64),
        addresses,
    )


def bm25_top_k(
    parts: Sequence[IndexArrays],
    bases: I64,
    id_rank: Any,
    terms: list[str],
    n: int,
    k: int,
    *,
    allowed: Mask | None = None,
    blocks: BlockTable | None = None,
    stats: AsOfStatistics | None = None,
) -> tuple[I64, F64]:
    """Top-``k`` global ordinals and scores among the first ``n`` (the ``allowed`` ones only,
    given a mask: scored with numpy), score desc, then id asc, with the statistics of all ``n``
    (or ``stats``, a whole corpus's). Unfiltered: the compiled kernel over ``blocks``, imported
    here so that numba loads on the first search, not with the package."""
    if n <= 0 or k <= 0 or not terms:
        return _empty()
    k = min(k, n)  # no more hits than documents; keeps k a machine integer for the kernel
    if allowed is not None:
        return numpy_top_k(parts, bases, id_rank, terms, n, k, allowed=allowed, stats=stats)
    from pastcast.corpus.embedded._kernel import postings, query_top_k

    assert blocks is not None, "an unfiltered search scores over the block table"
    last = bisect.bisect_left(blocks.starts, n) - 1  # the partition of ordinal n - 1
    m = n - blocks.starts[last]
    raw = [t.encode() for t in terms]
    qoffs = np.array(list(itertools.accumulate(map(len, raw), initial=0)), dtype=np.int64)
    if stats is None:
        avgdl = (blocks.len_before[last] + int(parts[last].len_prefix[m])) / n
        corpus: tuple[int, list[int]] | None = None
    else:
        avgdl = stats.total_len / stats.n
        corpus = (stats.n, [stats.df.get(term, 0) for term in terms])
    rows, df, long = postings(
        blocks.table,
        blocks.directory,
        term_hashes(raw),
        np.frombuffer(b"".join(raw), dtype=np.uint8),
        qoffs,
        last,
        m,
        _PAGE_ROWS,
    )
    _prefetch(parts, long.tolist())
    return query_top_k(
        blocks.table,
        rows,
        df,
        n,
        avgdl,
        k,
        bases,
        id_rank,
        blocks.largest,
        blocks.peak_avgdl,
        K1,
        B,
        corpus,
    )


def numpy_top_k(
    parts: Sequence[IndexArrays],
    bases: I64,
    id_rank: Any,
    terms: list[str],
    n: int,
    k: int,
    *,
    future: bool = False,
    allowed: Mask | None = None,
    stats: AsOfStatistics | None = None,
) -> tuple[I64, F64]:
    """``bm25_top_k`` in plain numpy: score the visible documents (with ``future``, the naive
    baseline: *all* documents, with the same as-of statistics, the future ones dropped after),
    then rank the matching ones (score above zero; ``allowed`` ones only, given a mask).
    Filtered searches use it: the mask applies before the top ``k`` are cut."""
    if n <= 0 or k <= 0 or not terms:
        return _empty()
    # per partition, the (idf, postings range) of each query term with a visible posting
    own, ranges = _postings(parts, bases, terms, n, future=future)
    _prefetch(parts, itertools.chain.from_iterable(ranges))
    corpus = own if stats is None else stats
    per_part: list[_Slices] = [[] for _ in parts]
    for term, found in zip(terms, ranges, strict=True):
        if term in own.df:
            df = corpus.df.get(term, 0)
            idf = math.log(1.0 + (corpus.n - df + 0.5) / (df + 0.5))
            for p, lo, hi in found:
                per_part[p].append((idf, lo, hi))
    avgdl = corpus.total_len / corpus.n
    size = int(bases[-1]) if future else n
    scores = np.zeros(size, dtype=np.float64)
    for p, slices in enumerate(per_part):
        lo, hi = int(bases[p]), min(int(bases[p + 1]), size)
        if slices and lo < hi:
            scores[lo:hi] = _score_partition(parts[p], hi - lo, slices, avgdl)
    keep = scores[:n] > 0
    if allowed is not None:
        keep &= allowed
    cand, values = top_with_ties(np.flatnonzero(keep), scores[:n][keep], k)
    order = np.lexsort((np.asarray(id_rank)[cand], -values))[:k]
    return cand[order].astype(np.int64), values[order]
