"""What a dense or hybrid searcher answers from its ``EmbeddedIndex`` rather than by ranking."""

from __future__ import annotations

from datetime import datetime

from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.records import Document

__all__ = ["IndexLookups"]


class IndexLookups:
    """Reads, counts and thread look-ups of a searcher over an ``EmbeddedIndex``: the index's own,
    so that choosing dense or hybrid ranking changes nothing else an agent can do."""

    index: EmbeddedIndex

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        return self.index.read(doc_id, as_of=as_of)

    def count_before(self, as_of: datetime) -> int:
        return self.index.count_before(as_of)

    def has_threads(self) -> bool:
        return self.index.has_threads()

    def post(self, doc_id: str, *, as_of: datetime) -> Document:
        return self.index.post(doc_id, as_of=as_of)

    def thread(self, thread_id: str, *, as_of: datetime, limit: int = 50) -> list[Document]:
        return self.index.thread(thread_id, as_of=as_of, limit=limit)

    def author_posts(self, author: str, *, as_of: datetime, limit: int = 20) -> list[Document]:
        return self.index.author_posts(author, as_of=as_of, limit=limit)

    def ancestors(self, doc_id: str, *, as_of: datetime) -> list[Document]:
        return self.index.ancestors(doc_id, as_of=as_of)

    def descendants(self, doc_id: str, *, as_of: datetime, limit: int = 50) -> list[Document]:
        return self.index.descendants(doc_id, as_of=as_of, limit=limit)
