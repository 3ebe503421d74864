"""The search filter block: what each field means, and the conformance check that catches a
backend which ignores a filter or applies it after ranking (every registered backend runs it in
``test_leakage.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from corpus_synth import make_docs, with_threads
from pydantic import ValidationError

from pastcast.corpus import DocumentNotVisible, SearchFilter, SearchHit, check_search_filters
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.records import Document

DOCS = with_threads(make_docs(200, seed=31), seed=31)
T = datetime(2024, 3, 5, 12, tzinfo=UTC)


def doc(**fields: object) -> Document:
    base: dict[str, object] = {"id": "d", "timestamp": T, "text": "x"}
    return Document.model_validate(base | fields)


def test_each_field_means_what_the_docs_say() -> None:
    comment = doc(parent_id="p", source="reddit/r/politics", author="alice")
    post = doc(source="reddit/r/politics")
    assert SearchFilter(doc_type="comment").matches(comment)
    assert not SearchFilter(doc_type="comment").matches(post)
    assert SearchFilter(doc_type="submission").matches(post)
    assert not SearchFilter(doc_type="submission").matches(doc(parent_id="p"))
    assert SearchFilter(doc_type="submission").matches(doc(parent_id=""))  # no parent
    for given in ("politics", "r/politics", "reddit/r/politics", "/r/Politics/", "POLITICS"):
        assert SearchFilter(source=given).matches(post), given
    for other in ("itics", "reddit", "r/pol", "worldnews"):
        assert not SearchFilter(source=other).matches(post), other
    assert SearchFilter(author="alice").matches(comment)
    assert not SearchFilter(author="Alice").matches(comment)  # names are exact
    assert SearchFilter(month="2024-03").matches(post)
    assert not SearchFilter(month="2024-02").matches(post)
    assert SearchFilter(since=T).matches(post)  # the lower bound is inclusive
    assert not SearchFilter(since=datetime(2024, 3, 5, 12, 0, 0, 1, tzinfo=UTC)).matches(post)
    both = SearchFilter(month="2024-03", since=datetime(2024, 3, 6, tzinfo=UTC))
    assert both.time_range() == (datetime(2024, 3, 6, tzinfo=UTC), datetime(2024, 4, 1, tzinfo=UTC))
    assert SearchFilter(month="2024-12").time_range()[1] == datetime(2025, 1, 1, tzinfo=UTC)
    assert SearchFilter().is_empty() and not SearchFilter(author="a").is_empty()


@pytest.mark.parametrize(
    ("fields", "word"),
    [
        ({"month": "2024-13"}, "YYYY-MM"),
        ({"month": "March"}, "YYYY-MM"),
        ({"source": " / "}, "source: empty"),
        ({"author": " "}, "author: empty"),
        ({"doc_type": "post"}, "doc_type"),
    ],
)
def test_bad_filters_are_refused(fields: dict[str, str], word: str) -> None:
    with pytest.raises(ValidationError, match=word):
        SearchFilter.model_validate(fields)


def test_the_embedded_index_filters_before_ranking() -> None:
    index = EmbeddedIndex.in_memory(DOCS)
    report = check_search_filters(index, DOCS, n_probes=300, rank_preserving=True, seed=1)
    assert report.violations == 0, report.first_violations
    assert report.nonempty > 150 and report.hits_checked > 600


def test_a_narrow_filter_still_fills_k() -> None:
    """One author's documents: an index that filtered its top 10 would return one or two."""
    index = EmbeddedIndex.in_memory(DOCS)
    cutoff = datetime(2030, 1, 1, tzinfo=UTC)
    query = "election ceasefire tariff merger storm " + " ".join(f"w{i}" for i in range(40))
    mine = [d for d in DOCS if d.author == "author-3"]
    hits = index.search(query, as_of=cutoff, k=10, filters=SearchFilter(author="author-3"))
    assert len(hits) == 10 and len(mine) > 10
    assert {h.id for h in hits} <= {d.id for d in mine}
    unfiltered = index.search(query, as_of=cutoff, k=10)
    assert sum(h.id in {d.id for d in mine} for h in unfiltered) < 10


def test_a_filter_never_widens_the_cutoff() -> None:
    index = EmbeddedIndex.in_memory(DOCS)
    first = min(d.timestamp for d in DOCS)
    later = SearchFilter(since=datetime(2030, 1, 1, tzinfo=UTC))
    assert (
        index.search("election w1 w2", as_of=datetime(2031, 1, 1, tzinfo=UTC), filters=later) == []
    )
    month = SearchFilter(month=first.strftime("%Y-%m"))
    assert index.search("election w1 w2", as_of=first, k=50, filters=month) == []
    with pytest.raises(DocumentNotVisible):
        index.read(max(DOCS, key=lambda d: d.timestamp).id, as_of=first)


@dataclass
class Faulty:
    """A correct index whose filtering is broken in one way, to show the check catches it."""

    inner: EmbeddedIndex
    docs: Sequence[Document]
    flaw: str

    def search(
        self, query: str, *, as_of: datetime, k: int = 10, filters: SearchFilter | None = None
    ) -> list[SearchHit]:
        if self.flaw == "ignores":
            return self.inner.search(query, as_of=as_of, k=k)
        if self.flaw == "after_ranking" and filters is not None:
            hits = self.inner.search(query, as_of=as_of, k=k)
            keep = {d.id for d in self.docs if filters.matches(d)}
            return [h for h in hits if h.id in keep]
        if self.flaw == "month_widens" and filters is not None and filters.month:
            upper = filters.time_range()[1]
            return self.inner.search(query, as_of=max(as_of, upper or as_of), k=k, filters=filters)
        return self.inner.search(query, as_of=as_of, k=k, filters=filters)

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        return self.inner.read(doc_id, as_of=as_of)

    def count_before(self, as_of: datetime) -> int:
        return self.inner.count_before(as_of)


@pytest.mark.parametrize(
    ("flaw", "word"),
    [
        ("ignores", "outside the filter"),
        ("after_ranking", "applied after ranking"),
        ("month_widens", "are future"),
    ],
)
def test_faulty_filters_are_counted(flaw: str, word: str) -> None:
    backend = Faulty(EmbeddedIndex.in_memory(DOCS), DOCS, flaw)
    report = check_search_filters(backend, DOCS, n_probes=300, seed=2)
    assert report.violations > 0
    assert any(word in v for v in report.first_violations), report.first_violations
