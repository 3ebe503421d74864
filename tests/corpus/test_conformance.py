"""The conformance checks themselves: they report every violation they find, so a report with
``violations == 0`` means something. Deliberately leaky backends must each be caught."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest
from corpus_synth import make_docs, with_threads

from pastcast.corpus import (
    DocumentNotVisible,
    LeakageError,
    SearchHit,
    check_as_of_equivalence,
    check_no_leakage,
    check_thread_lookups,
)
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.records import Document


def test_embedded_index_passes(docs: list[Document]) -> None:
    report = check_no_leakage(EmbeddedIndex.in_memory(docs), docs, n_probes=400, seed=1)
    assert report.violations == 0 and report.first_violations == ()
    assert report.searches > 800 and report.reads > 400 and report.hits_checked > 1000


@dataclass
class Leaky:
    """Wraps a correct index and breaks one rule, to show the check catches it."""

    inner: EmbeddedIndex
    docs: Sequence[Document]
    flaw: str

    def search(self, query: str, *, as_of: datetime, k: int = 10) -> list[SearchHit]:
        if self.flaw == "inclusive":  # day-inclusive / `<=` style off-by-one
            hits = self.inner.search(query, as_of=as_of, k=k)
            extra = [d for d in self.docs if d.timestamp == as_of]
            return hits + [
                SearchHit(id=d.id, timestamp=d.timestamp, title=d.title, score=0.0) for d in extra
            ]
        if self.flaw == "post_filter_count":
            return self.inner.search(query, as_of=datetime.max.replace(tzinfo=as_of.tzinfo), k=k)
        if self.flaw == "future_title":  # visible hits, but titled with a later document's
            hits = self.inner.search(query, as_of=as_of, k=k)
            later = max(self.docs, key=lambda d: d.timestamp)
            return [h.model_copy(update={"title": later.title + " (updated)"}) for h in hits]
        return self.inner.search(query, as_of=as_of, k=k)

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        if self.flaw == "read_no_check":
            return self.inner.read(doc_id, as_of=datetime.max.replace(tzinfo=as_of.tzinfo))
        if self.flaw == "telling_message":
            try:
                return self.inner.read(doc_id, as_of=as_of)
            except DocumentNotVisible:
                if doc_id in {d.id for d in self.docs}:
                    raise DocumentNotVisible(f"document {doc_id!r} is in the future") from None
                raise
        return self.inner.read(doc_id, as_of=as_of)

    def count_before(self, as_of: datetime) -> int:
        n = self.inner.count_before(as_of)
        return n + 1 if self.flaw == "count" and n < len(self.docs) else n


# Each flaw and a word that the violations it causes must contain.
FLAWS = {
    "inclusive": "future document",
    "post_filter_count": "future document",
    "future_title": "title",
    "read_no_check": "future document was returned",
    "telling_message": "message differs",
    "count": "count_before",
}


@pytest.mark.parametrize("flaw", sorted(FLAWS))
def test_leaky_backends_are_counted(docs: list[Document], flaw: str) -> None:
    backend = Leaky(EmbeddedIndex.in_memory(docs), docs, flaw)
    report = check_no_leakage(backend, docs, n_probes=300, seed=2)
    assert report.violations > 0
    assert 0 < len(report.first_violations) <= min(report.violations, 20)
    assert all(FLAWS[flaw] in v for v in report.first_violations), report.first_violations
    with pytest.raises(LeakageError, match=f"{report.violations} violation"):
        check_no_leakage(backend, docs, n_probes=300, seed=2, raise_on_violation=True)


def test_every_violation_is_counted_not_only_the_first(docs: list[Document]) -> None:
    """The count goes on past the violations kept verbatim."""
    report = check_no_leakage(Leaky(EmbeddedIndex.in_memory(docs), docs, "count"), docs, seed=3)
    assert report.violations > 100 and len(report.first_violations) == 20


class WholeStats:
    """Filters future documents but keeps whole-corpus idf and avgdl."""

    def __init__(self, subset: Sequence[Document]) -> None:
        self.index = EmbeddedIndex.in_memory(subset)  # statistics over all it holds

    def search(self, query: str, *, as_of: datetime, k: int = 10) -> list[SearchHit]:
        big = datetime.max.replace(tzinfo=as_of.tzinfo)
        hits = self.index.search(query, as_of=big, k=len(self.index))
        return [h for h in hits if h.timestamp < as_of][:k]

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        return self.index.read(doc_id, as_of=as_of)

    def count_before(self, as_of: datetime) -> int:
        return self.index.count_before(as_of)


def test_whole_corpus_statistics_are_counted(docs: list[Document]) -> None:
    report = check_as_of_equivalence(WholeStats, docs, n_cutoffs=5)
    assert report.violations > 0 and "whole corpus gives" in report.first_violations[0]
    with pytest.raises(LeakageError):
        check_as_of_equivalence(WholeStats, docs, n_cutoffs=5, raise_on_violation=True)
    honest = check_as_of_equivalence(EmbeddedIndex.in_memory, docs, n_cutoffs=5)
    assert honest.violations == 0 and honest.nonempty > 0


def test_a_count_that_depends_on_the_future_is_counted(docs: list[Document]) -> None:
    class FutureCount(WholeStats):
        def count_before(self, as_of: datetime) -> int:
            return len(self.index)  # every document it holds, visible or not

    report = check_as_of_equivalence(FutureCount, docs, n_cutoffs=5)
    assert any(v.startswith("count_before") for v in report.first_violations)


# -- thread look-ups -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def threaded() -> list[Document]:
    return with_threads(make_docs(200, seed=7), seed=7)


def test_threaded_index_passes(threaded: list[Document]) -> None:
    report = check_thread_lookups(EmbeddedIndex.in_memory(threaded), threaded, seed=4)
    assert report.violations == 0, report.first_violations
    assert report.threads > 250 and report.authors > 250 and report.returned > 1000
    assert report.walks > 250


class LeakyThreads:
    """A correct index whose thread look-ups break one rule."""

    def __init__(self, docs: Sequence[Document], flaw: str) -> None:
        self.inner = EmbeddedIndex.in_memory(docs)
        self.flaw = flaw
        late = datetime.max.replace(tzinfo=docs[0].timestamp.tzinfo)
        self.late = late

    def has_threads(self) -> bool:
        return self.inner.has_threads()

    def post(self, doc_id: str, *, as_of: datetime) -> Document:
        if self.flaw == "post":
            return self.inner.post(doc_id, as_of=self.late)
        return self.inner.post(doc_id, as_of=as_of)

    def thread(self, thread_id: str, *, as_of: datetime, limit: int = 50) -> list[Document]:
        if self.flaw == "thread":  # one comment too late
            return self.inner.thread(thread_id, as_of=as_of + timedelta(hours=6), limit=limit)
        if self.flaw == "thread_message":
            try:
                return self.inner.thread(thread_id, as_of=as_of, limit=limit)
            except DocumentNotVisible:
                if thread_id.startswith("thread-"):
                    raise DocumentNotVisible(f"thread {thread_id!r} starts later") from None
                raise
        return self.inner.thread(thread_id, as_of=as_of, limit=limit)

    def author_posts(self, author: str, *, as_of: datetime, limit: int = 20) -> list[Document]:
        if self.flaw == "author":
            return self.inner.author_posts(author, as_of=self.late, limit=limit)
        return self.inner.author_posts(author, as_of=as_of, limit=limit)

    def ancestors(self, doc_id: str, *, as_of: datetime) -> list[Document]:
        if self.flaw == "ancestors":  # walks past the cutoff
            self.inner.read(doc_id, as_of=as_of)
            return self.inner.ancestors(doc_id, as_of=self.late)
        if self.flaw == "ancestors_order":  # direct parent first
            return self.inner.ancestors(doc_id, as_of=as_of)[::-1]
        return self.inner.ancestors(doc_id, as_of=as_of)

    def descendants(self, doc_id: str, *, as_of: datetime, limit: int = 50) -> list[Document]:
        if self.flaw == "descendants":  # a future document's replies
            return self.inner.descendants(doc_id, as_of=self.late, limit=limit)
        if self.flaw == "children_only":  # direct replies only, no deeper
            got = self.inner.descendants(doc_id, as_of=as_of, limit=50)
            return [d for d in got if d.parent_id == doc_id][:limit]
        return self.inner.descendants(doc_id, as_of=as_of, limit=limit)

    # CorpusBackend
    def search(self, query: str, *, as_of: datetime, k: int = 10) -> list[SearchHit]:
        return self.inner.search(query, as_of=as_of, k=k)

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        return self.inner.read(doc_id, as_of=as_of)

    def count_before(self, as_of: datetime) -> int:
        return self.inner.count_before(as_of)


@pytest.mark.parametrize(
    ("flaw", "word"),
    [
        ("thread", "future documents"),
        ("thread_message", "message differs"),
        ("author", "future documents"),
        ("post", "future document was returned"),
        ("ancestors", "future documents"),
        ("ancestors_order", "expected"),
        ("descendants", "future document"),
        ("children_only", "expected"),
    ],
)
def test_leaky_thread_lookups_are_counted(threaded: list[Document], flaw: str, word: str) -> None:
    report = check_thread_lookups(LeakyThreads(threaded, flaw), threaded, seed=5)
    assert report.violations > 0
    assert any(word in v for v in report.first_violations), report.first_violations
