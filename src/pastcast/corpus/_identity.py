"""The content hash of a corpus, the same whichever backend holds the documents: the SHA-256 of
its UTC months' digests in time order, a month's the SHA-256 of its documents' JSON lines in
``(timestamp, id)`` order. The embedded index stores the months' digests in its manifest, so
its identity costs nothing; the PostgreSQL backend computes it when it loads the documents."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from pastcast.cutoff import as_utc
from pastcast.records import Document

DIGEST_SCHEME = "sha256-months"
"""Names the rule above, so that a stored digest made by another rule is not taken for it."""


def document_line(doc: Document) -> bytes:
    """A document as it is hashed (and stored by the embedded index): one JSON line."""
    return doc.model_dump_json().encode() + b"\n"


def combine_month_digests(month_digests: Iterable[str]) -> str:
    """The corpus digest from its months' digests, given in time order."""
    digest = hashlib.sha256()
    for month in month_digests:
        digest.update(month.encode())
    return digest.hexdigest()


class MonthDigests:
    """The corpus digest of document lines fed in ``(timestamp, id)`` order."""

    def __init__(self) -> None:
        self._done: list[str] = []
        self._month = ""
        self._digest = hashlib.sha256()

    def add(self, month: str, line: bytes) -> None:
        """One document's line; ``month`` (``YYYY-MM``, UTC) never decreases from call to call."""
        if month != self._month:
            if self._month:
                self._done.append(self._digest.hexdigest())
            self._month, self._digest = month, hashlib.sha256()
        self._digest.update(line)

    def hexdigest(self) -> str:
        months = [*self._done, self._digest.hexdigest()] if self._month else self._done
        return combine_month_digests(months)


def content_digest(documents: Iterable[Document]) -> str:
    """The corpus digest of ``documents`` (any order; ids are assumed unique)."""
    digests = MonthDigests()
    for doc in sorted(documents, key=lambda d: (as_utc(d.timestamp), d.id)):
        digests.add(as_utc(doc.timestamp).strftime("%Y-%m"), document_line(doc))
    return digests.hexdigest()
