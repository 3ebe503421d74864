"""The contract every corpus backend satisfies: the cutoff is a required argument of every call
and is enforced inside the backend, before ranking."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol, runtime_checkable

from pydantic import BaseModel

from pastcast.corpus._filter import SearchFilter
from pastcast.cutoff import as_utc
from pastcast.records import CorpusIdentity, Document, Record, UtcDatetime


class DocumentNotVisible(LookupError):
    """Raised by ``read`` for an id that is unknown or not strictly before the cutoff, with the
    same message for both (``not_visible_message``), so that it reveals nothing of the future."""


def not_visible_message(doc_id: str, as_of: datetime) -> str:
    return f"no document {doc_id!r} is visible as of {as_utc(as_of).isoformat()}"


class SearchHit(Record):
    id: str
    timestamp: UtcDatetime
    title: str
    score: float
    snippet: str = ""


_HIT_FIELDS = frozenset(SearchHit.model_fields)
# the model's slots, each set through its own descriptor: a third of ``object.__setattr__``'s cost
_SLOTS = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
_set_dict, _set_fields, _set_extra, _set_private = (BaseModel.__dict__[s].__set__ for s in _SLOTS)


def known_valid_hit(
    doc_id: str, timestamp: datetime, title: str, score: float, snippet: str
) -> SearchHit:
    """A ``SearchHit`` of values that are valid already (an index's stored columns), not
    validated again: validation was a fifth of a search's hits, and ``model_construct``, whose
    object this is, loops over the fields in Python and costs more than validating."""
    hit = SearchHit.__new__(SearchHit)
    _set_dict(
        hit,
        {"id": doc_id, "timestamp": timestamp, "title": title, "score": score, "snippet": snippet},
    )
    _set_fields(hit, set(_HIT_FIELDS))  # its own: model_copy updates it
    _set_extra(hit, None)
    _set_private(hit, None)
    return hit


@runtime_checkable
class CorpusBackend(Protocol):
    """A dated corpus queried as of a cutoff: ``search`` ranks only documents with ``timestamp <
    as_of``, statistics over those alone, ties by id, ``filters`` applied before ranking (passed
    only when not empty); ``read`` re-checks the cutoff."""

    def search(
        self, query: str, *, as_of: datetime, k: int = 10, filters: SearchFilter | None = None
    ) -> list[SearchHit]: ...

    def read(self, doc_id: str, *, as_of: datetime) -> Document: ...

    def count_before(self, as_of: datetime) -> int: ...


@runtime_checkable
class ThreadedBackend(CorpusBackend, Protocol):
    """A corpus whose documents form threads and have authors; the look-ups' rules are in
    docs/corpus.md ("Thread and author look-ups") and ``check_thread_lookups``."""

    def has_threads(self) -> bool: ...

    def post(self, doc_id: str, *, as_of: datetime) -> Document: ...

    def thread(self, thread_id: str, *, as_of: datetime, limit: int = 50) -> list[Document]: ...

    def author_posts(self, author: str, *, as_of: datetime, limit: int = 20) -> list[Document]: ...

    def ancestors(self, doc_id: str, *, as_of: datetime) -> list[Document]: ...

    def descendants(self, doc_id: str, *, as_of: datetime, limit: int = 50) -> list[Document]: ...


class IndexLookups:
    """Everything but ``search`` answered by ``index``, the backend a searcher ranks over:
    choosing dense or hybrid ranking changes nothing else an agent can do."""

    index: ThreadedBackend

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


@runtime_checkable
class OpenedCorpus(CorpusBackend, Protocol):
    """A backend as ``open_backend`` returns it: its identity, and resources until ``close``."""

    def identity(self) -> CorpusIdentity: ...

    def close(self) -> None: ...


def corpus_identity(backend: CorpusBackend | None) -> CorpusIdentity | None:
    """``backend``'s identity, or None for a backend that does not know it (or none)."""
    return backend.identity() if isinstance(backend, OpenedCorpus) else None


MAX_DEPTH = 1000
"""The most ancestors listed: a guard against reply links that form a cycle in bad data."""


def ancestors_of(post: Callable[[str], Document], doc: Document) -> list[Document]:
    """The documents ``doc`` replies to, from the thread's root down to its direct parent.

    ``post`` reads a document under the cutoff. The walk stops at a parent that is not visible
    (or unknown), so nothing past the cutoff is listed and nothing tells which it was.
    """
    chain: list[Document] = []
    seen = {doc.id}
    parent = doc.parent_id
    while parent and parent not in seen and len(chain) < MAX_DEPTH:
        try:
            found = post(parent)
        except DocumentNotVisible:
            break
        chain.append(found)
        seen.add(parent)
        parent = found.parent_id
    chain.reverse()
    return chain
