from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import pytest

from pastcast.corpus import (
    DocumentNotVisible,
    EmbeddedIndex,
    LeakageError,
    SearchHit,
    check_as_of_equivalence,
    check_no_leakage,
)
from pastcast.records import Document


def test_embedded_index_passes(docs: list[Document]) -> None:
    report = check_no_leakage(EmbeddedIndex.in_memory(docs), docs, n_probes=400, seed=1)
    assert report.violations == 0
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


@pytest.mark.parametrize(
    "flaw", ["inclusive", "post_filter_count", "read_no_check", "telling_message", "count"]
)
def test_leaky_backends_are_caught(docs: list[Document], flaw: str) -> None:
    backend = Leaky(EmbeddedIndex.in_memory(docs), docs, flaw)
    with pytest.raises(LeakageError):
        check_no_leakage(backend, docs, n_probes=300, seed=2)


def test_whole_corpus_statistics_are_caught(docs: list[Document]) -> None:
    """An index that filters future documents but keeps whole-corpus idf/avgdl differs."""

    class WholeStats:
        def __init__(self, subset: Sequence[Document]) -> None:
            self.index = EmbeddedIndex.in_memory(subset)  # statistics over all it holds

        def search(self, query: str, *, as_of: datetime, k: int = 10) -> list[SearchHit]:
            big = datetime.max.replace(tzinfo=as_of.tzinfo)
            hits = self.index.search(query, as_of=big, k=len(docs))
            return [h for h in hits if h.timestamp < as_of][:k]

        def read(self, doc_id: str, *, as_of: datetime) -> Document:
            return self.index.read(doc_id, as_of=as_of)

        def count_before(self, as_of: datetime) -> int:
            return self.index.count_before(as_of)

    with pytest.raises(LeakageError):
        check_as_of_equivalence(WholeStats, docs, n_cutoffs=5)
