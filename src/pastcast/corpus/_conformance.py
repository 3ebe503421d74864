"""Conformance checks every corpus backend must pass (docs/corpus.md, "Conformance checks"):
``check_no_leakage`` and ``check_as_of_equivalence`` here, thread look-ups in
``_conformance_threads``, search filters in ``_conformance_filters``."""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import TypeVar

from pastcast.corpus._protocol import CorpusBackend, DocumentNotVisible, SearchHit
from pastcast.cutoff import as_utc, is_visible
from pastcast.records import Document, Record

_UNKNOWN_ID = "\x00no-such-document\x00"
_US = timedelta(microseconds=1)
SHOWN = 20  # violations kept verbatim in a report; all of them are counted
_R = TypeVar("_R", bound="_Report")


class LeakageError(AssertionError):
    """A backend returned something it must not have at the given cutoff."""


class _Report(Record):
    violations: int  # all of them counted
    first_violations: tuple[str, ...] = ()  # the first ``SHOWN``, verbatim


class LeakageReport(_Report):
    cutoffs: int
    searches: int
    reads: int
    counts: int
    hits_checked: int


class EquivalenceReport(_Report):
    cutoffs: int
    queries: int
    comparisons: int
    nonempty: int
    """Comparisons where the whole corpus returned something (an empty ranking proves little)."""


class _Violations:
    """Every violation counted, the first ``SHOWN`` kept."""

    def __init__(self) -> None:
        self.count = 0
        self.first: list[str] = []

    def add(self, message: str) -> None:
        self.count += 1
        if len(self.first) < SHOWN:
            self.first.append(message)

    def report(self, cls: type[_R], raise_on_violation: bool = False, **counts: int) -> _R:
        """``cls`` of these violations and ``counts``; ``LeakageError`` instead if asked."""
        if raise_on_violation and self.count:
            raise LeakageError(f"{self.count} violation(s): " + "; ".join(self.first[:5]))
        return cls(**counts, violations=self.count, first_violations=tuple(self.first))


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


def _words(text: str, rng: random.Random, n: int) -> str:
    words = text.split()
    if len(words) <= n:
        return text
    start = rng.randrange(len(words) - n)
    return " ".join(words[start : start + n])


def _sorted(documents: Sequence[Document]) -> list[Document]:
    docs = sorted(documents, key=lambda d: (as_utc(d.timestamp), d.id))
    if not docs:
        raise ValueError("a conformance check needs at least one document")
    return docs


def _cutoffs(docs: list[Document], rng: random.Random, n: int) -> list[datetime]:
    """``n`` cutoffs, alternately adversarial and random within two days of the corpus."""
    pool = adversarial_cutoffs(docs)
    lo = as_utc(docs[0].timestamp) - timedelta(days=2)
    span = (as_utc(docs[-1].timestamp) + timedelta(days=2) - lo) // _US
    return [
        pool[rng.randrange(len(pool))] if i % 2 == 0 else lo + rng.randint(0, span) * _US
        for i in range(n)
    ]


def _refusal(call: Callable[[str], object], doc_id: str, what: str, out: _Violations) -> None:
    """``call(doc_id)`` must refuse ``doc_id`` exactly as it refuses an unknown id."""
    try:
        call(doc_id)
        out.add(f"{what}: a future document was returned")
        return
    except DocumentNotVisible as exc:
        refused = exc
    try:
        call(_UNKNOWN_ID)
        out.add(f"{what}: an unknown id returned a document")
    except DocumentNotVisible as unknown:
        # the two refusals must read alike once the ids they name are blanked out
        if str(refused).replace(repr(doc_id), "ID") != str(unknown).replace(
            repr(_UNKNOWN_ID), "ID"
        ):
            out.add(f"{what}: message differs from an unknown id's: {refused} / {unknown}")


def check_no_leakage(
    backend: CorpusBackend,
    documents: Sequence[Document],
    *,
    n_probes: int = 500,
    k: int = 10,
    seed: int = 0,
    raise_on_violation: bool = False,
) -> LeakageReport:
    """Probe ``backend`` (which indexes exactly ``documents``) at ``n_probes`` cutoffs."""
    rng = random.Random(seed)
    docs = _sorted(documents)
    stamps = [as_utc(d.timestamp) for d in docs]
    by_id = {d.id: d for d in docs}
    out = _Violations()
    searches = reads = hits_checked = 0

    def check_hits(hits: list[SearchHit], cutoff: datetime, query: str) -> None:
        nonlocal hits_checked
        for hit in hits:
            hits_checked += 1
            doc = by_id.get(hit.id)
            where = f"search {query!r} at {cutoff}"
            if doc is None:
                out.add(f"{where}: unknown id {hit.id!r}")
            elif not is_visible(doc.timestamp, cutoff):
                out.add(f"{where}: future document {hit.id!r}")
            elif as_utc(hit.timestamp) != as_utc(doc.timestamp) or hit.title != doc.title:
                out.add(f"{where}: wrong timestamp or title for {hit.id!r}")
            elif hit.snippet.strip("…") not in doc.text:
                out.add(f"{where}: snippet of {hit.id!r} is not from its text")

    cutoffs = _cutoffs(docs, rng, n_probes)
    for cutoff in cutoffs:
        n = bisect.bisect_left(stamps, cutoff)
        got = backend.count_before(cutoff)
        if got != n:
            out.add(f"count_before({cutoff}) = {got}, expected {n}")
        queries = []
        if n < len(docs):
            future = docs[rng.randrange(n, len(docs))]
            queries += [future.title, _words(future.text, rng, 8), future.id]
            reads += 1
            call = partial(backend.read, as_of=cutoff)
            _refusal(call, future.id, f"read({future.id!r}) at {cutoff}", out)
        if n > 0:
            seen = docs[rng.randrange(n)]
            queries.append(_words(seen.text, rng, 5))
            reads += 1
            try:
                if backend.read(seen.id, as_of=cutoff) != seen:
                    out.add(f"read({seen.id!r}) at {cutoff}: not the stored document")
            except DocumentNotVisible:
                out.add(f"read({seen.id!r}) at {cutoff}: visible document refused")
        for query in queries:
            searches += 1
            check_hits(backend.search(query, as_of=cutoff, k=k), cutoff, query)
    return out.report(
        LeakageReport,
        raise_on_violation,
        cutoffs=len(cutoffs),
        searches=searches,
        reads=reads,
        counts=len(cutoffs),
        hits_checked=hits_checked,
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
    raise_on_violation: bool = False,
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
    out = _Violations()
    comparisons = nonempty = 0
    for cutoff in cutoffs:
        cutoff = as_utc(cutoff)
        part = backend_factory([d for d in docs if is_visible(d.timestamp, cutoff)])
        whole_n, part_n = full.count_before(cutoff), part.count_before(cutoff)
        if whole_n != part_n:
            out.add(f"count_before at {cutoff}: whole corpus {whole_n}, past only {part_n}")
        for query in queries:
            comparisons += 1
            a = [(h.id, h.score) for h in full.search(query, as_of=cutoff, k=k)]
            b = [(h.id, h.score) for h in part.search(query, as_of=cutoff, k=k)]
            nonempty += bool(a)
            if a != b:
                out.add(
                    f"search {query!r} at {cutoff}: whole corpus gives {a[:3]}..., "
                    f"documents before the cutoff only give {b[:3]}..."
                )
    return out.report(
        EquivalenceReport,
        raise_on_violation,
        cutoffs=len(cutoffs),
        queries=len(queries),
        comparisons=comparisons,
        nonempty=nonempty,
    )
