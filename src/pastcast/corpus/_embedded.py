"""``EmbeddedIndex``: a file-backed BM25 backend whose results are exact "as of" any cutoff.

A search at cutoff ``t`` returns the same ids, order and scores (bit for bit) as an index built
from only the documents with ``timestamp < t``: see ``_arrays`` for the prefix statistics. The
floating-point work is the same in both cases too: each posting's contribution is computed
elementwise from identical inputs (IEEE basic operations, ``math.log`` for the scalar idf) and
contributions are added per document in query-term order.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from pastcast.corpus._arrays import IndexArrays, build_arrays, load_arrays, save_arrays, to_micros
from pastcast.corpus._protocol import DocumentNotVisible, SearchHit
from pastcast.corpus._tokenize import tokenize
from pastcast.cutoff import as_utc
from pastcast.records import Document

__all__ = ["K1", "B", "EmbeddedIndex", "not_visible_message"]

K1 = 1.2
B = 0.75
SNIPPET_CHARS = 200
_WORD = re.compile(r"\w+", re.UNICODE)
Ordinals = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float64]


def not_visible_message(doc_id: str, as_of: datetime) -> str:
    """The one message for an unknown *or* future id, so it reveals nothing about the future."""
    return f"no document {doc_id!r} is visible as of {as_utc(as_of).isoformat()}"


def _snippet(doc: Document, terms: list[str]) -> str:
    """About ``SNIPPET_CHARS`` characters around the first query term in the text, or its start."""
    text = doc.text
    wanted = set(terms)
    start = 0
    for m in _WORD.finditer(text):
        if unicodedata.normalize("NFKC", m.group()).casefold() in wanted:
            start = max(0, m.start() - SNIPPET_CHARS // 4)
            break
    piece = text[start : start + SNIPPET_CHARS].strip()
    prefix = "…" if start > 0 else ""
    suffix = "…" if start + SNIPPET_CHARS < len(text) else ""
    return f"{prefix}{piece}{suffix}"


class EmbeddedIndex:
    """A BM25 index in one directory, memory-mapped; satisfies ``CorpusBackend``."""

    def __init__(self, arrays: IndexArrays, path: Path | None = None) -> None:
        self._a = arrays
        self.path = path
        self._ord: dict[str, int] = {doc_id: i for i, doc_id in enumerate(arrays.ids)}

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        out_dir: Path | str,
        *,
        overwrite: bool = False,
        progress: bool = False,
    ) -> EmbeddedIndex:
        """Index ``documents`` into ``out_dir`` (written atomically) and open it."""
        save_arrays(build_arrays(documents, progress=progress), Path(out_dir), overwrite=overwrite)
        return cls.open(out_dir)

    @classmethod
    def open(cls, index_dir: Path | str) -> EmbeddedIndex:
        """Open an index directory written by ``build`` without rebuilding anything."""
        return cls(load_arrays(Path(index_dir)), Path(index_dir))

    @classmethod
    def in_memory(cls, documents: Iterable[Document]) -> EmbeddedIndex:
        """An index held in memory only (tests, conformance checks, small corpora)."""
        return cls(build_arrays(documents))

    @property
    def manifest(self) -> dict[str, object]:
        return dict(self._a.manifest)

    def __len__(self) -> int:
        return len(self._a.ids)

    # -- CorpusBackend ------------------------------------------------------------------------

    def count_before(self, as_of: datetime) -> int:
        """The number of documents with ``timestamp < as_of``."""
        return int(np.searchsorted(self._a.timestamps, to_micros(as_of), side="left"))

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        ordinal = self._ord.get(doc_id)
        if ordinal is None or ordinal >= self.count_before(as_of):
            raise DocumentNotVisible(not_visible_message(doc_id, as_of))
        return self._a.document(ordinal)

    def search(self, query: str, *, as_of: datetime, k: int = 10) -> list[SearchHit]:
        ordinals, scores = self.score(self.query_terms(query), self.count_before(as_of), k)
        return self.hits(zip(ordinals.tolist(), scores.tolist(), strict=True), query)

    # -- helpers shared with the dense and hybrid searchers -----------------------------------

    @staticmethod
    def query_terms(query: str) -> list[str]:
        """The query's terms, each once, in first-seen order."""
        return list(dict.fromkeys(tokenize(query)))

    @property
    def id_rank(self) -> npt.NDArray[np.int64]:
        """Rank of each ordinal's id in lexicographic id order (for tie-breaking)."""
        return self._a.id_rank

    def read_ordinal(self, ordinal: int) -> Document:
        return self._a.document(ordinal)

    def hits(self, ranked: Iterable[tuple[int, float]], query: str) -> list[SearchHit]:
        """``SearchHit``s for (ordinal, score) pairs, in the given order."""
        terms = self.query_terms(query)
        out = []
        for ordinal, score in ranked:
            doc = self._a.document(ordinal)
            out.append(
                SearchHit(
                    id=doc.id,
                    timestamp=doc.timestamp,
                    title=doc.title,
                    score=score,
                    snippet=_snippet(doc, terms),
                )
            )
        return out

    # -- scoring ------------------------------------------------------------------------------

    def score(self, terms: list[str], n: int, k: int) -> tuple[Ordinals, Scores]:
        """Top-``k`` ordinals and BM25 scores over the first ``n`` ordinals only.

        Ranking: score descending, then document id ascending.
        """
        a = self._a
        empty = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64))
        if n <= 0 or k <= 0:
            return empty
        avgdl = int(a.len_prefix[n]) / n
        scores = np.zeros(n, dtype=np.float64)
        touched = []
        for term in terms:
            tid = a.vocab.get(term)
            if tid is None:
                continue
            lo, hi = int(a.term_offsets[tid]), int(a.term_offsets[tid + 1])
            df = int(np.searchsorted(a.post_ord[lo:hi], n, side="left"))
            if df == 0:
                continue
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            ords = np.asarray(a.post_ord[lo : lo + df])
            tf = a.post_tf[lo : lo + df].astype(np.float64)
            norm = K1 * (1.0 - B + B * (a.doc_len[ords] / avgdl))
            scores[ords] += idf * (tf * (K1 + 1.0)) / (tf + norm)
            touched.append(ords)
        if not touched:
            return empty
        cand = np.unique(np.concatenate(touched)).astype(np.int64)
        cand_scores = scores[cand]
        if len(cand) > k:
            # Keep every candidate tied with the k-th best score, then order exactly.
            kth = np.partition(cand_scores, len(cand) - k)[len(cand) - k]
            keep = cand_scores >= kth
            cand, cand_scores = cand[keep], cand_scores[keep]
        order = np.lexsort((a.id_rank[cand], -cand_scores))[:k]
        return cand[order], cand_scores[order]
