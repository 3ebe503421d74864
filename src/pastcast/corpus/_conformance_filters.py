"""Conformance of the search filters: a filtered search against the same search unfiltered and
deep enough to rank every candidate (docs/corpus.md, "Conformance checks")."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import datetime, timedelta

from pastcast.corpus._conformance import _cutoffs, _Report, _sorted, _Violations, _words
from pastcast.corpus._filter import DOC_TYPES, SearchFilter
from pastcast.corpus._protocol import CorpusBackend, SearchHit
from pastcast.cutoff import as_utc, is_visible
from pastcast.records import Document

_FIELDS = ("doc_type", "source", "author", "month", "since")


class FilterReport(_Report):
    searches: int
    hits_checked: int
    nonempty: int
    """Filtered searches that returned something (an empty result proves little)."""


def random_filter(docs: Sequence[Document], rng: random.Random) -> SearchFilter:
    """One or two filter fields, with values taken from a random document (so that something
    usually matches); a source is sometimes given by its last path segment only."""
    doc = docs[rng.randrange(len(docs))]
    fields: dict[str, object] = {}
    for name in rng.sample(_FIELDS, rng.choice((1, 1, 2))):
        if name == "doc_type":
            fields[name] = "comment" if doc.parent_id else rng.choice(DOC_TYPES)
        elif name == "source" and doc.source:
            source = doc.source.split("/")[-1] if rng.random() < 0.5 else doc.source
            fields[name] = source.upper() if rng.random() < 0.2 else source
        elif name == "author" and doc.author:
            fields[name] = doc.author
        elif name == "month":
            fields[name] = as_utc(doc.timestamp).strftime("%Y-%m")
        elif name == "since":
            jitter = rng.choice((timedelta(0), timedelta(microseconds=1), -timedelta(hours=3)))
            fields[name] = as_utc(doc.timestamp) + jitter
    return SearchFilter.model_validate(fields)


def check_search_filters(
    backend: CorpusBackend,
    documents: Sequence[Document],
    *,
    n_probes: int = 200,
    k: int = 10,
    rank_preserving: bool = False,
    seed: int = 0,
) -> FilterReport:
    """Probe the search filters of ``backend`` (which holds exactly ``documents``)."""
    rng = random.Random(seed)
    docs = _sorted(documents)
    by_id = {d.id: d for d in docs}
    out = _Violations()
    searches = hits_checked = nonempty = 0
    for cutoff in _cutoffs(docs, rng, n_probes):
        filters = random_filter(docs, rng)
        matching = [d for d in docs if filters.matches(d)] or docs
        query = _words(matching[rng.randrange(len(matching))].text, rng, 3)
        where = f"search {query!r} with {_shown(filters)} at {cutoff}"
        got = backend.search(query, as_of=cutoff, k=k, filters=filters)
        searches += 1
        nonempty += bool(got)
        hits_checked += len(got)
        bad = [h.id for h in got if not _passes(h, by_id, filters, cutoff)]
        if bad:
            out.add(f"{where}: {bad[:3]} are future, unknown or outside the filter")
            continue
        full = backend.search(query, as_of=cutoff, k=len(docs))
        allowed = [h for h in full if _passes(h, by_id, filters, cutoff)]
        if len(got) != min(k, len(allowed)):
            out.add(
                f"{where}: {len(got)} hits, but {len(allowed)} matching documents are ranked "
                "(a filter applied after ranking returns fewer)"
            )
        elif rank_preserving and _pairs(got) != _pairs(allowed[:k]):
            out.add(f"{where}: {_pairs(got)[:3]}, expected {_pairs(allowed[:k])[:3]}")
    return out.report(FilterReport, searches=searches, hits_checked=hits_checked, nonempty=nonempty)


def _passes(
    hit: SearchHit, by_id: dict[str, Document], filters: SearchFilter, cutoff: datetime
) -> bool:
    doc = by_id.get(hit.id)
    return doc is not None and is_visible(doc.timestamp, cutoff) and filters.matches(doc)


def _pairs(hits: list[SearchHit]) -> list[tuple[str, float]]:
    return [(h.id, h.score) for h in hits]


def _shown(filters: SearchFilter) -> str:
    return filters.model_dump_json(exclude_none=True)
