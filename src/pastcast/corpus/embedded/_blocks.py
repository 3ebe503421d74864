"""Scoring blocks: consecutive small month partitions merged in memory, for a caller that
asks for them (``block_docs``); by default (``BLOCK_DOCS = 0``) every month is scored as it is.

Merging once paid for a fixed numpy overhead per month and query term (about 15 µs) when
months are small (WCEP: 75 months of ~500 documents); the compiled kernel now scores every month
in one call, and a merge costs a pass over every posting and term of the merged months at the
first search (29 s at a million documents), so it is off unless asked for. A block is laid out
exactly like a partition (global ordinals of its documents are a contiguous range, each term's
postings ascending), so the as-of scorer treats it as one: fully admitted blocks contribute
whole, the cutoff's block a prefix. The statistics are the same integers and every posting's
contribution the same floating-point operations, so scores are unchanged bit for bit (tested).
Documents are still read from the partitions: a block has no document store.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from pastcast.corpus.embedded._arrays import IndexArrays, TermTable

__all__ = ["BLOCK_DOCS", "scoring_blocks"]

BLOCK_DOCS = 0  # month by month (see the module docstring)


def scoring_blocks(parts: list[IndexArrays], block_docs: int) -> list[IndexArrays]:
    """``parts`` (in time order) with runs of consecutive partitions merged while a run holds at
    most ``block_docs`` documents; a partition larger than that stays as it is."""
    groups: list[list[IndexArrays]] = []
    size = 0
    for part in parts:
        n = len(part.ids)
        if groups and size + n <= block_docs:
            groups[-1].append(part)
            size += n
        else:
            groups.append([part])
            size = n
    return [g[0] if len(g) == 1 else _merge(g) for g in groups]


def _merge(group: list[IndexArrays]) -> IndexArrays:
    vocab: defaultdict[str, int] = defaultdict()
    vocab.default_factory = vocab.__len__  # a new term gets the next id, in C
    tids, ords, tfs = [], [], []
    offset = 0
    for part in group:
        by_local_id = list(part.vocab)  # the terms in id order
        mapping = np.fromiter(
            map(vocab.__getitem__, by_local_id), dtype=np.int64, count=len(by_local_id)
        )
        offsets = np.asarray(part.term_offsets, dtype=np.int64)
        counts = offsets[1:] - offsets[:-1]
        tids.append(np.repeat(mapping, counts))
        ords.append(np.asarray(part.post_ord, dtype=np.int64) + offset)
        tfs.append(np.asarray(part.post_tf))
        offset += len(part.ids)
    tid = np.concatenate(tids)
    # Stable: within a term, postings keep partition order, hence ascending ordinals.
    order = np.argsort(tid, kind="stable")
    term_offsets = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(tid, minlength=len(vocab)), out=term_offsets[1:])
    doc_len = np.concatenate([np.asarray(p.doc_len) for p in group])
    len_prefix = np.zeros(len(doc_len) + 1, dtype=np.int64)
    np.cumsum(doc_len, out=len_prefix[1:])
    first, last = group[0].manifest.get("partition"), group[-1].manifest.get("partition")
    return IndexArrays(
        timestamps=np.concatenate([np.asarray(p.timestamps) for p in group]),
        doc_len=doc_len,
        len_prefix=len_prefix,
        id_rank=np.zeros(0, dtype=np.int64),  # ties are broken with the global id ranks
        term_offsets=term_offsets,
        post_ord=np.concatenate(ords)[order].astype(np.int32),
        post_tf=np.concatenate(tfs)[order],
        doc_offsets=np.zeros(1, dtype=np.int64),
        vocab=TermTable.of(list(vocab)),  # keys in id order
        ids=[i for p in group for i in p.ids],
        store=b"",  # scoring only: documents are read from the partitions
        manifest={"partition": f"{first}..{last}", "scoring_block": True},
    )
