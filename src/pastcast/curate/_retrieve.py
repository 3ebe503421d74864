"""Evidence retrieval for the judges: each query on each leg (BM25, dense) as of the judging date
within a window, the ranked lists fused by reciprocal rank (k = 60), the best unique documents.

Every leg is a ``CorpusBackend`` searched with ``as_of``: the backend applies the cutoff before
ranking, as it does for agents. The window's start is applied to the ranked hits (backends take
no lower bound), so each leg is asked for more than it keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from pastcast.corpus import CorpusBackend, SearchHit
from pastcast.corpus.dense import RRF_K
from pastcast.records import Document

_OVERFETCH = 4
"""How many more hits a leg is asked for when a window start will drop some."""


def fuse_rankings(rankings: Sequence[Sequence[SearchHit]]) -> list[tuple[SearchHit, float]]:
    """Reciprocal-rank fusion of any number of ranked lists of hits, by document id: each list
    adds 1 / (RRF_K + rank) to a document's score; ties go to the earlier id."""
    scores: dict[str, float] = {}
    first: dict[str, SearchHit] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, start=1):
            scores[hit.id] = scores.get(hit.id, 0.0) + 1.0 / (RRF_K + rank)
            first.setdefault(hit.id, hit)
    order = sorted(scores, key=lambda i: (-scores[i], i))
    return [(first[i], scores[i]) for i in order]


@dataclass
class Retriever:
    """Fused retrieval over ``legs`` (the first one also reads the documents' texts)."""

    legs: Sequence[CorpusBackend]
    per_query: int = 10
    """Hits each leg contributes per query."""
    window_days: int | None = 180
    """Only documents from this many days before the judging date (None: all before it)."""
    doc_chars: int = 800
    """Characters of each document's text shown to a judge."""

    def __post_init__(self) -> None:
        if not self.legs:
            raise ValueError("retrieval needs at least one corpus leg")

    def ranked(self, query: str, as_of: datetime) -> list[list[SearchHit]]:
        """Each leg's top ``per_query`` hits for ``query`` within the window."""
        since = None if self.window_days is None else as_of - timedelta(days=self.window_days)
        fetch = self.per_query * (_OVERFETCH if since is not None else 1)
        out = []
        for leg in self.legs:
            hits = leg.search(query, as_of=as_of, k=fetch)
            out.append([h for h in hits if since is None or h.timestamp >= since][: self.per_query])
        return out

    def best(
        self, queries: Sequence[str], as_of: datetime, limit: int
    ) -> list[tuple[SearchHit, float]]:
        """The ``limit`` best unique documents over every query and leg, fused by RRF."""
        return fuse_rankings([r for q in queries for r in self.ranked(q, as_of)])[:limit]

    def read(self, hit: SearchHit, as_of: datetime) -> Document:
        """The document behind ``hit``, read as of the same date (the backend re-checks it)."""
        return self.legs[0].read(hit.id, as_of=as_of)

    def excerpt(self, doc: Document) -> str:
        text = " ".join(doc.text.split())
        if len(text) > self.doc_chars:
            text = text[: self.doc_chars].rsplit(" ", 1)[0] + " ..."
        return text
