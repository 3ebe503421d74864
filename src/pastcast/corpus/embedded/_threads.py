"""Thread and author look-ups for the embedded index, under the same cutoff as search, and the
search filters over the same maps (see ``_maps``).

Every returned document's own timestamp is checked once more before it is returned.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from pastcast.corpus._filter import SearchFilter
from pastcast.corpus._protocol import DocumentNotVisible, not_visible_message
from pastcast.corpus._walk import ancestors_of
from pastcast.corpus.embedded._maps import DocMaps
from pastcast.cutoff import as_utc, is_visible, visible_count
from pastcast.records import Document

if TYPE_CHECKING:
    from pastcast.corpus.embedded._arrays import IndexArrays

__all__ = ["ThreadLookups"]

I64 = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_]


class ThreadLookups:
    """The ``ThreadedBackend`` methods and the filter masks, mixed into ``EmbeddedIndex``."""

    _parts: list[IndexArrays]
    _timestamps: I64
    path: Path | None
    _doc_maps: DocMaps | None = None
    _comments: Mask | None = None
    _ordinal_ids: list[str] | None = None

    # Provided by the index this is mixed into.
    def count_before(self, as_of: datetime) -> int:
        raise NotImplementedError

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        raise NotImplementedError

    def read_ordinal(self, ordinal: int) -> Document:
        raise NotImplementedError

    @property
    def manifest(self) -> dict[str, object]:
        raise NotImplementedError

    def doc_maps(self) -> DocMaps:
        """The maps the build wrote, or (held in memory, or without them) computed now."""
        if self._doc_maps is None:
            sha = str(self.manifest.get("content_sha256", ""))
            loaded = DocMaps.load(self.path, sha) if self.path is not None else None
            self._doc_maps = loaded or DocMaps.from_parts(self._parts)
        return self._doc_maps

    def has_threads(self) -> bool:
        """Whether any document belongs to a thread (the thread tools are worth offering)."""
        return bool(self.doc_maps().threads.keys)

    def post(self, doc_id: str, *, as_of: datetime) -> Document:
        return self.read(doc_id, as_of=as_of)

    def thread(self, thread_id: str, *, as_of: datetime, limit: int = 50) -> list[Document]:
        """The first ``limit`` documents of a thread visible at the cutoff, in time order.

        A thread with no visible document raises ``DocumentNotVisible`` with the message of an
        unknown id, so a thread that starts later cannot be told from one that does not exist.
        """
        docs = self._visible(self.doc_maps().threads.ordinals(thread_id), as_of, limit, True)
        if not docs:
            raise DocumentNotVisible(not_visible_message(thread_id, as_of))
        return docs

    def author_posts(self, author: str, *, as_of: datetime, limit: int = 20) -> list[Document]:
        """The author's last ``limit`` documents before the cutoff, in time order (empty for
        an unknown author as for one who posts only later)."""
        return self._visible(self.doc_maps().authors.ordinals(author), as_of, limit, False)

    def ancestors(self, doc_id: str, *, as_of: datetime) -> list[Document]:
        """What a document replies to, root first, as far as it is visible; the document itself
        must be visible (else ``DocumentNotVisible``, as for an unknown id)."""
        doc = self.post(doc_id, as_of=as_of)
        return ancestors_of(partial(self.post, as_of=as_of), doc)

    def descendants(self, doc_id: str, *, as_of: datetime, limit: int = 50) -> list[Document]:
        """The first ``limit`` visible replies to a document, replies to those, and so on, in
        time order. Only visible documents are walked through; the document itself must be
        visible (else ``DocumentNotVisible``, as for an unknown id)."""
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        self.post(doc_id, as_of=as_of)
        n = self.count_before(as_of)
        parents, ids = self.doc_maps().parents, self.ordinal_ids()
        found: list[int] = []
        seen, frontier = {doc_id}, [doc_id]
        while frontier:
            replies = []
            for key in frontier:
                ords = parents.ordinals(key)
                for ordinal in ords[: int(np.searchsorted(ords, n, side="left"))].tolist():
                    if ids[ordinal] not in seen:
                        seen.add(ids[ordinal])
                        found.append(ordinal)
                        replies.append(ids[ordinal])
            frontier = replies
        return self._checked(sorted(found)[:limit], as_of)

    def ordinal_ids(self) -> list[str]:
        """Every document's id by ordinal."""
        if self._ordinal_ids is None:
            self._ordinal_ids = [i for p in self._parts for i in p.ids]
        return self._ordinal_ids

    def filter_mask(self, filters: SearchFilter | None, n: int) -> Mask | None:
        """Which of the ordinals ``[0, n)`` pass ``filters`` (None: every one)."""
        if filters is None or filters.is_empty():
            return None
        mask = np.ones(n, dtype=np.bool_)
        stamps = self._timestamps[:n]
        lower, upper = filters.time_range()
        if lower is not None:
            mask[: visible_count(stamps, lower)] = False  # ordinals are in time order
        if upper is not None:
            mask[visible_count(stamps, upper) :] = False
        maps = self.doc_maps()
        if filters.doc_type is not None:
            comments = self._comment_flags()[:n]
            mask &= comments if filters.doc_type == "comment" else ~comments
        if filters.author is not None:
            mask &= _members(maps.authors.ordinals(filters.author), n)
        if filters.source is not None:
            keys = [k for k in maps.sources.keys if filters.source_matches(k)]
            ords = [maps.sources.ordinals(k) for k in keys]
            mask &= _members(np.concatenate(ords) if ords else np.zeros(0, np.int64), n)
        return mask

    def _comment_flags(self) -> Mask:
        """True for each ordinal that replies to another document."""
        if self._comments is None:
            flags = np.zeros(len(self._timestamps), dtype=np.bool_)
            flags[np.asarray(self.doc_maps().parents.ords)] = True
            self._comments = flags
        return self._comments

    def _visible(self, ords: I64, as_of: datetime, limit: int, first: bool) -> list[Document]:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, got {limit}")
        n = int(np.searchsorted(ords, self.count_before(as_of), side="left"))
        chosen = ords[:n][:limit] if first else ords[:n][-limit:]
        return self._checked(chosen.tolist(), as_of)

    def _checked(self, ordinals: list[int], as_of: datetime) -> list[Document]:
        cutoff = as_utc(as_of)
        out = []
        for ordinal in ordinals:
            doc = self.read_ordinal(ordinal)
            if not is_visible(doc.timestamp, cutoff):  # rechecked on the stored document itself
                raise RuntimeError(f"index corrupt: {doc.id!r} returned at cutoff {cutoff}")
            out.append(doc)
        return out


def _members(ords: I64, n: int) -> Mask:
    out = np.zeros(n, dtype=np.bool_)
    ords = np.asarray(ords)
    out[ords[ords < n]] = True
    return out
