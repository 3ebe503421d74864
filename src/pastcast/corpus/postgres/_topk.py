"""BM25 top-k in PostgreSQL that stops before reading every posting (threshold algorithm;
docs/postgres.md, "Early termination"). Only visible postings (``ts < as_of``) are read: each
term's ``depth`` postings of highest impact (a term with fewer is read whole), those documents
scored exactly, the ``k``-th score ``theta`` (less a rounding margin) shared among the terms not
read whole by water-filling (``lam``), then each term's postings with impact at least
``lam / bound_i``: a document read nowhere scores below ``theta``. Scores use the embedded
index's double operations in the same order (equal bit for bit); too low a threshold, filters,
and fewer than ``k`` documents found at first fall back to the exhaustive statement."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from pastcast.corpus.embedded import K1, B
from pastcast.corpus.postgres._sql import (
    CANDIDATE_SQL,
    impact_expression,
    impact_range_sql,
    impact_top_sql,
)
from pastcast.records import Record

DEPTH = 32
"""Postings read first per term (at least ``k``)."""
MARGIN = 1e-9
"""Relative slack on every bound: far above the rounding of a few double operations, so a
bound computed in floating point never falls below a score computed in floating point."""

PROBE_COST = 8
"""About how many postings read in order cost as much as one indexed probe of a document's
postings: past that, scoring the documents left is dearer than scoring every posting."""

Rows = Callable[[str, Mapping[str, Any]], list[tuple[Any, ...]]]


class SearchWork(Record):
    """What a BM25 search read: ``visible`` postings of its terms before the cutoff, ``read``
    postings returned by the server (some twice), and whether it scored every one."""

    visible: int
    read: int
    exhaustive: bool

    @property
    def skipped(self) -> int:
        return max(self.visible - self.read, 0)


def _contribution(idf: float, tf: int, length: int, avgdl: float) -> float:
    # written as the embedded index evaluates it: (idf * (tf * (K1 + 1))) /
    # (tf + K1 * ((1 - B) + B * (len / avgdl)))
    t = float(tf)
    return (idf * (t * (K1 + 1.0))) / (t + K1 * ((1.0 - B) + B * (float(length) / avgdl)))


def early_top_k(
    rows: Rows,
    impact: Mapping[str, float],
    terms: Sequence[str],
    idfs: Sequence[float],
    avgdl: float,
    as_of: datetime,
    k: int,
    *,
    visible: int,
    depth: int = DEPTH,
) -> tuple[list[tuple[int, float]], int] | None:
    """Top-``k`` (ordinal, score) as in the module docstring, and the postings read; None (the
    exhaustive statement then decides) when step 1 found fewer than ``k`` documents and some
    term was not read whole, or when step 3 leaves more documents to score than
    ``visible / PROBE_COST`` probes allow (``visible``: the terms' visible postings)."""
    expr = impact_expression(impact["a"], impact["c"])
    factor = max(1.0, avgdl / float(impact["avgdl"]))
    bounds = [idf * (K1 + 1.0) * factor * (1.0 + MARGIN) for idf in idfs]
    params: dict[str, Any] = {"as_of": as_of, "limit": max(depth, k)}
    params |= {f"t{i}": t for i, t in enumerate(terms)}
    first = rows(impact_top_sql(expr, len(terms)), params)
    read = len(first)
    stamps: dict[int, datetime] = {}
    floor = [math.inf] * len(terms)
    count = [0] * len(terms)
    for ti, ordinal, ts, s in first:
        stamps[int(ordinal)] = ts
        floor[ti] = min(floor[ti], float(s))
        count[ti] += 1
    whole = [count[i] < params["limit"] for i in range(len(terms))]
    scores, n_rows = _exact(rows, stamps, terms, idfs, avgdl, as_of)
    read += n_rows
    if len(scores) < k:
        if all(whole):  # every visible posting was read: these are all the matches
            return _ranked(scores, k), read
        return None
    theta = sorted(scores.values(), reverse=True)[k - 1]
    budget = theta * (1.0 - MARGIN)
    # A document not read yet gets at most bound_i * floor_i from a term not read whole.
    caps = {i: bounds[i] * floor[i] for i in range(len(terms)) if not whole[i]}
    scan: dict[int, float] = {}
    if sum(caps.values()) >= budget:
        remaining, left = budget, len(caps)
        for i, cap in sorted(caps.items(), key=lambda item: item[1]):
            share = remaining / left
            if cap <= share and not scan:
                remaining, left = remaining - cap, left - 1
                continue
            scan[i] = share  # this term and every larger one: ``lam`` each
        if scan:  # ``left`` terms over their share: each may contribute ``lam`` unread
            scan = dict.fromkeys(scan, remaining / left)
    if scan:
        ranged = dict(params)
        ranged |= {f"x{i}": share / bounds[i] for i, share in scan.items()}
        more = rows(impact_range_sql(expr, sorted(scan)), ranged)
        read += len(more)
        fresh = {int(o): ts for o, ts in more if int(o) not in stamps}
        if len(fresh) * len(terms) * PROBE_COST > visible:
            return None  # the probes would cost more than reading every posting in order
        extra, n_rows = _exact(rows, fresh, terms, idfs, avgdl, as_of)
        read += n_rows
        scores |= extra
    return _ranked(scores, k), read


def _exact(
    rows: Rows,
    stamps: Mapping[int, datetime],
    terms: Sequence[str],
    idfs: Sequence[float],
    avgdl: float,
    as_of: datetime,
) -> tuple[dict[int, float], int]:
    """The exact scores of the documents ``stamps`` names (ordinal -> timestamp), and the
    postings read for them."""
    if not stamps:
        return {}, 0
    ords = list(stamps)
    params = {"ords": ords, "stamps": [stamps[o] for o in ords], "terms": list(terms)}
    found = rows(CANDIDATE_SQL, params | {"as_of": as_of})
    position = {t: i for i, t in enumerate(terms)}
    parts: dict[int, list[float]] = {o: [0.0] * len(terms) for o in ords}
    for ordinal, term, tf, length in found:
        i = position[term]
        parts[int(ordinal)][i] = _contribution(idfs[i], int(tf), int(length), avgdl)
    scores: dict[int, float] = {}
    for ordinal, values in parts.items():
        total = 0.0
        for value in values:  # in query-term order, as the embedded index adds them
            total += value
        scores[ordinal] = total
    return scores, len(found)


def _ranked(scores: Mapping[int, float], k: int) -> list[tuple[int, float]]:
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
