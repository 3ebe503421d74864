"""Conformance checks every corpus backend must pass.

``check_no_leakage`` throws adversarial probes at a backend (queries made of the exact words of
future documents, reads of future ids, cutoffs exactly at, just before and just after document
timestamps, at midnights and month boundaries, and random instants) and verifies that nothing at
or after the cutoff ever comes back. ``check_as_of_equivalence`` verifies that querying the whole
corpus at ``t`` equals querying a backend built from the documents before ``t`` only.
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from pastcast.corpus._protocol import CorpusBackend, DocumentNotVisible, SearchHit
from pastcast.cutoff import as_utc
from pastcast.records import Document, Record

__all__ = [
    "EquivalenceReport",
    "LeakageError",
    "LeakageReport",
    "adversarial_cutoffs",
    "check_as_of_equivalence",
    "check_no_leakage",
]

_UNKNOWN_ID = "\x00no-such-document\x00"
_US = timedelta(microseconds=1)


class LeakageError(AssertionError):
    """A backend returned something it must not have at the given cutoff."""


class LeakageReport(Record):
    cutoffs: int
    searches: int
    reads: int
    counts: int
    hits_checked: int
    violations: int


class EquivalenceReport(Record):
    cutoffs: int
    queries: int
    comparisons: int


def adversarial_cutoffs(documents: Sequence[Document]) -> list[datetime]:
    """Cutoffs where an off-by-one or a day/month rounding error would show."""
    out: set[datetime] = set()
    for doc in documents:
        ts = as_utc(doc.timestamp)
        midnight = ts.replace(hour=0, minute=0, second=0, microsecond=0)
        month = midnight.replace(day=1)
        next_month = (month + timedelta(days=32)).replace(day=1)
        out.update((ts, ts - _US, ts + _US, midnight, midnight + timedelta(days=1)))
        out.update((month, next_month))
    return sorted(out)


def _random_cutoff(rng: random.Random, lo: datetime, hi: datetime) -> datetime:
    span = (hi - lo) // _US
    return lo + rng.randint(0, max(span, 0)) * _US


def _words(text: str, rng: random.Random, n: int) -> str:
    words = text.split()
    if len(words) <= n:
        return text
    start = rng.randrange(len(words) - n)
    return " ".join(words[start : start + n])


def check_no_leakage(
    backend: CorpusBackend,
    documents: Sequence[Document],
    *,
    n_probes: int = 500,
    k: int = 10,
    seed: int = 0,
) -> LeakageReport:
    """Probe ``backend`` (which indexes exactly ``documents``) at ``n_probes`` cutoffs.

    At each cutoff: ``count_before`` must be exact; searches for the title and words of a future
    document (and of a visible one) must return only visible documents with their true
    timestamps; reading a future id must raise ``DocumentNotVisible`` with the same message
    shape as an unknown id; reading a visible id must return it. Raises ``LeakageError`` listing
    the first violations; returns counts otherwise.
    """
    rng = random.Random(seed)
    docs = sorted(documents, key=lambda d: (as_utc(d.timestamp), d.id))
    if not docs:
        raise ValueError("check_no_leakage needs at least one document")
    stamps = [as_utc(d.timestamp) for d in docs]
    by_id = {d.id: d for d in docs}
    pool = adversarial_cutoffs(docs)
    lo, hi = stamps[0] - timedelta(days=2), stamps[-1] + timedelta(days=2)
    violations: list[str] = []
    searches = reads = counts = hits_checked = 0

    def check_hits(hits: list[SearchHit], cutoff: datetime, query: str) -> None:
        nonlocal hits_checked
        for hit in hits:
            hits_checked += 1
            doc = by_id.get(hit.id)
            if doc is None:
                violations.append(f"search {query!r} at {cutoff}: unknown id {hit.id!r}")
            elif not as_utc(doc.timestamp) < cutoff:
                violations.append(f"search {query!r} at {cutoff}: future document {hit.id!r}")
            elif as_utc(hit.timestamp) != as_utc(doc.timestamp):
                violations.append(f"search {query!r} at {cutoff}: wrong timestamp for {hit.id!r}")

    for probe in range(n_probes):
        cutoff = pool[rng.randrange(len(pool))] if probe % 2 == 0 else _random_cutoff(rng, lo, hi)
        n = bisect.bisect_left(stamps, cutoff)
        counts += 1
        got = backend.count_before(cutoff)
        if got != n:
            violations.append(f"count_before({cutoff}) = {got}, expected {n}")
        queries = []
        if n < len(docs):
            future = docs[rng.randrange(n, len(docs))]
            queries += [future.title, _words(future.text, rng, 8), future.id]
            reads += 1
            try:
                backend.read(future.id, as_of=cutoff)
                violations.append(f"read({future.id!r}) at {cutoff}: future document returned")
            except DocumentNotVisible as exc:
                try:
                    backend.read(_UNKNOWN_ID, as_of=cutoff)
                    violations.append(f"read of an unknown id at {cutoff} returned a document")
                except DocumentNotVisible as unknown:
                    shape = str(exc).replace(repr(future.id), "ID")
                    if shape != str(unknown).replace(repr(_UNKNOWN_ID), "ID"):
                        violations.append(
                            f"read({future.id!r}) at {cutoff}: message differs from an unknown "
                            f"id's: {exc} / {unknown}"
                        )
        if n > 0:
            seen = docs[rng.randrange(n)]
            queries.append(_words(seen.text, rng, 5))
            reads += 1
            try:
                if backend.read(seen.id, as_of=cutoff).id != seen.id:
                    violations.append(f"read({seen.id!r}) at {cutoff}: wrong document")
            except DocumentNotVisible:
                violations.append(f"read({seen.id!r}) at {cutoff}: visible document refused")
        for query in queries:
            searches += 1
            check_hits(backend.search(query, as_of=cutoff, k=k), cutoff, query)
        if len(violations) >= 20:
            break
    if violations:
        raise LeakageError(f"{len(violations)} violation(s): " + "; ".join(violations[:5]))
    return LeakageReport(
        cutoffs=counts,
        searches=searches,
        reads=reads,
        counts=counts,
        hits_checked=hits_checked,
        violations=0,
    )


def check_as_of_equivalence(
    backend_factory: Callable[[Sequence[Document]], CorpusBackend],
    documents: Sequence[Document],
    *,
    cutoffs: Sequence[datetime] | None = None,
    queries: Sequence[str] | None = None,
    n_cutoffs: int = 10,
    k: int = 10,
    seed: int = 0,
) -> EquivalenceReport:
    """``backend_factory(all documents)`` queried at ``t`` must equal
    ``backend_factory(documents before t)``: same ids, order, scores (``==``) and counts.
    """
    rng = random.Random(seed)
    docs = list(documents)
    if cutoffs is None:
        pool = adversarial_cutoffs(docs) or [datetime(2000, 1, 1, tzinfo=UTC)]
        cutoffs = [pool[rng.randrange(len(pool))] for _ in range(n_cutoffs)]
    if queries is None:
        queries = [d.title for d in rng.sample(docs, min(5, len(docs)))]
        queries += [_words(d.text, rng, 4) for d in rng.sample(docs, min(5, len(docs)))]
    full = backend_factory(docs)
    comparisons = 0
    for cutoff in cutoffs:
        cutoff = as_utc(cutoff)
        part = backend_factory([d for d in docs if as_utc(d.timestamp) < cutoff])
        if full.count_before(cutoff) != part.count_before(cutoff):
            raise LeakageError(f"count_before differs at {cutoff}")
        for query in queries:
            comparisons += 1
            a = [(h.id, h.score) for h in full.search(query, as_of=cutoff, k=k)]
            b = [(h.id, h.score) for h in part.search(query, as_of=cutoff, k=k)]
            if a != b:
                raise LeakageError(
                    f"search {query!r} at {cutoff}: whole corpus gives {a[:3]}..., "
                    f"documents before the cutoff only give {b[:3]}..."
                )
    return EquivalenceReport(cutoffs=len(cutoffs), queries=len(queries), comparisons=comparisons)
