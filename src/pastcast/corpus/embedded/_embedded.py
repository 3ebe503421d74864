"""``EmbeddedIndex``: a file-backed, month-partitioned BM25 backend whose results at cutoff
``t`` equal those of an index built from the documents before ``t`` alone, bit for bit
(docs/corpus.md, "The embedded BM25 index")."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pastcast.corpus._build_report import CorpusBuildReport
from pastcast.corpus._filter import SearchFilter
from pastcast.corpus._protocol import (
    DocumentNotVisible,
    SearchHit,
    ancestors_of,
    known_valid_hit,
    not_visible_message,
)
from pastcast.corpus._text import TOKENIZER, text_snippet, tokenize
from pastcast.corpus.embedded._arrays import (
    K1,
    B,
    IdColumn,
    IndexArrays,
    TermDirectory,
    from_micros,
    load_arrays,
)
from pastcast.corpus.embedded._bm25 import (
    AsOfStatistics,
    BlockTable,
    as_of_statistics,
    block_table,
    bm25_top_k,
    numpy_top_k,
)
from pastcast.corpus.embedded._maps import DocMaps
from pastcast.corpus.embedded._partitioned import (
    BuildOptions,
    Duplicates,
    MonthRunner,
    append_partitioned,
    build_partitioned,
    global_id_rank,
    index_manifest,
    load_index,
    partition_in_memory,
    summary,
)
from pastcast.corpus.embedded._read_reuse import ReadStamp
from pastcast.cutoff import as_utc, is_visible, visible_count
from pastcast.records import CorpusIdentity, Document

Ordinals = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


class EmbeddedIndex:
    """A BM25 index in one directory of month partitions, memory-mapped; a ``CorpusBackend``
    and a ``ThreadedBackend`` (its look-ups and filters over the maps of ``_maps``, every
    returned document's own timestamp checked once more)."""

    def __init__(
        self,
        parts: list[IndexArrays],
        id_rank: npt.NDArray[np.int64] | None = None,
        manifest: dict[str, object] | None = None,
        path: Path | None = None,
        *,
        id_order: npt.NDArray[np.int64] | None = None,
        directory: TermDirectory | None = None,
    ) -> None:
        self._parts = parts
        self.path = path
        self._manifest = manifest if manifest is not None else summary(parts)
        sizes = [len(p.ids) for p in parts]
        self._bases = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum(sizes, out=self._bases[1:])
        self._base_list: list[int] = self._bases.tolist()  # bisect: no numpy call per hit
        # a plain read-only view, made once: the kernel is compiled (and cached) for one kind of
        # array, and a view of a memory map per search cost microseconds
        self._id_rank = np.asarray(global_id_rank(parts) if id_rank is None else id_rank).view()
        self._id_rank.flags.writeable = False
        stamps = [np.asarray(p.timestamps) for p in parts]
        self._timestamps = np.concatenate(stamps) if stamps else np.zeros(0, dtype=np.int64)
        # Python views for building hits: indexing one costs a tenth of a numpy scalar lookup
        self._stamp_view = self._timestamps.data
        self._hit_columns = [_hit_columns(p) for p in parts]
        self._id_order = id_order
        self._directory = directory
        self._blocks: BlockTable | None = None
        self._identity: CorpusIdentity | None = None
        self._dating: dict[str, object] | None = None  # ``dating.json``, read by ``open``
        self._doc_maps: DocMaps | None = None
        self._comments: Mask | None = None
        self._ordinal_ids: list[str] | None = None

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        out_dir: Path | str,
        *,
        overwrite: bool = False,
        progress: bool = False,
        kind: str = "index",
        workers: int | None = None,
        removed: Callable[[], Mapping[str, int]] = dict,
        notes: Callable[[], Sequence[str]] = tuple,
        read: ReadStamp | None = None,
        runner: MonthRunner | None = None,
    ) -> EmbeddedIndex:
        """Index ``documents`` (any order) into month partitions under ``out_dir`` and open it
        (docs/corpus.md, "Build"; the options: ``BuildOptions``). ``overwrite`` replaces only an
        index pastcast built as the same ``kind`` (``pastcast.owned``), never other folders."""
        options = BuildOptions(progress, kind, workers, removed, notes, read, runner)
        build_partitioned(documents, Path(out_dir), options, overwrite=overwrite)
        return cls.open(out_dir)

    @classmethod
    def append(
        cls,
        documents: Iterable[Document],
        index_dir: Path | str,
        *,
        duplicates: Duplicates = "refuse",
        progress: bool = False,
        workers: int | None = None,
        removed: Callable[[], Mapping[str, int]] = dict,
        notes: Callable[[], Sequence[str]] = tuple,
        side_files: Callable[[Path], None] | None = None,
    ) -> EmbeddedIndex:
        """Add ``documents`` (any order, any months) to the index in ``index_dir`` and open it:
        the index a build of all the documents writes (docs/corpus.md, "Appends"). A repeated
        id is refused naming it, or skipped and counted with ``duplicates="skip"``."""
        index_dir = Path(index_dir)
        current = cls.open(index_dir)
        append_partitioned(
            documents,
            index_dir,
            lambda doc_id: current._ordinal_of(doc_id) is not None,
            BuildOptions(progress, workers=workers, removed=removed, notes=notes),
            duplicates=duplicates,
            side_files=side_files,
        )
        return cls.open(index_dir)

    @classmethod
    def open(cls, index_dir: Path | str) -> EmbeddedIndex:
        """Open an index directory (one an earlier version wrote is refused: build it again)."""
        from pastcast.corpus.sources import read_dating  # a build's side file

        parts, id_rank, manifest, id_order, directory = load_index(Path(index_dir))
        index = cls(
            parts, id_rank, manifest, Path(index_dir), id_order=id_order, directory=directory
        )
        # read now: an append may replace the directory while this index is open
        index._dating = read_dating(Path(index_dir))
        return index

    @classmethod
    def in_memory(cls, documents: Iterable[Document]) -> EmbeddedIndex:
        """An index held in memory only (tests, conformance checks, small corpora)."""
        return cls(partition_in_memory(documents))

    @property
    def manifest(self) -> dict[str, object]:
        return dict(self._manifest)

    @property
    def build_report(self) -> CorpusBuildReport | None:
        """What the build of this index did (None: held in memory, or built before reports)."""
        return None if self.path is None else CorpusBuildReport.load(self.path)

    @property
    def partition_bounds(self) -> list[tuple[int, int]]:
        """The global ordinal range ``[lo, hi)`` of each partition, in time order."""
        return list(itertools.pairwise(self._base_list))

    def __len__(self) -> int:
        return int(self._bases[-1])

    def identity(self) -> CorpusIdentity:
        """Which documents this index holds and how it ranks them (from the manifest)."""
        if self._identity is None:
            m = self._manifest
            stamps = self._timestamps
            self._identity = CorpusIdentity(
                spec="" if self.path is None else str(self.path),
                backend="bm25",
                retrieval="bm25",
                content_sha256=str(m["content_sha256"]),
                doc_count=len(self),
                first_timestamp=from_micros(int(stamps[0])) if len(stamps) else None,
                last_timestamp=from_micros(int(stamps[-1])) if len(stamps) else None,
                options={
                    "format": f"{m.get('format')} v{m.get('version')}",
                    "tokenizer": TOKENIZER,
                    "k1": K1,
                    "b": B,
                },
            )
            dating = self._dating
            if dating is not None:  # which date the documents carry, as the build counted
                options = {**self._identity.options, "dating": dating}
                self._identity = self._identity.model_copy(update={"options": options})
        return self._identity

    def close(self) -> None:
        """Nothing to release: the arrays are memory-mapped and dropped with the index."""

    # -- CorpusBackend ------------------------------------------------------------------------

    def count_before(self, as_of: datetime) -> int:
        """The number of documents with ``timestamp < as_of``."""
        return visible_count(self._timestamps, as_of)

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        ordinal = self._ordinal_of(doc_id)
        if ordinal is None or ordinal >= self.count_before(as_of):
            raise DocumentNotVisible(not_visible_message(doc_id, as_of))
        doc = self.read_ordinal(ordinal)
        if not is_visible(doc.timestamp, as_of):  # rechecked on the stored document itself
            raise DocumentNotVisible(not_visible_message(doc_id, as_of))
        return doc

    def search(
        self,
        query: str,
        *,
        as_of: datetime,
        k: int = 10,
        filters: SearchFilter | None = None,
        stats: AsOfStatistics | None = None,
    ) -> list[SearchHit]:
        """BM25 over the documents before ``as_of``; ``filters`` restrict which of them are
        ranked (the statistics stay those of every visible document). ``stats``: those of a
        whole corpus as of the same cutoff, this index being one shard of it (``open_months``)."""
        cutoff = as_utc(as_of)
        n = self.count_before(cutoff)
        terms = self.query_terms(query)
        allowed = self.filter_mask(filters, n)
        ordinals, scores = self.score(terms, n, k, allowed=allowed, stats=stats)
        return self._hits(ordinals.tolist(), scores.tolist(), terms, cutoff, n, filters)

    # -- ThreadedBackend and search filters ----------------------------------------------------

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

    def _visible(self, ords: Ordinals, as_of: datetime, limit: int, first: bool) -> list[Document]:
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

    def _ordinal_of(self, doc_id: str) -> int | None:
        """The ordinal of ``doc_id``: a bisection over the ids in lexicographic order (no map
        of every id is held)."""
        if self._id_order is None:
            self._id_order = np.argsort(self._id_rank, kind="stable")
        order = self._id_order
        at = bisect.bisect_left(range(len(order)), doc_id, key=lambda i: self._id_at(int(order[i])))
        if at < len(order) and self._id_at(int(order[at])) == doc_id:
            return int(order[at])
        return None

    def _id_at(self, ordinal: int) -> str:
        p = bisect.bisect_right(self._base_list, ordinal) - 1
        return self._parts[p].ids[ordinal - self._base_list[p]]

    # -- helpers shared with the dense and hybrid searchers -----------------------------------

    @staticmethod
    def query_terms(query: str) -> list[str]:
        """The query's terms, each once, in first-seen order."""
        return list(dict.fromkeys(tokenize(query)))

    @property
    def id_rank(self) -> npt.NDArray[np.int64]:
        """Rank of each ordinal's id in lexicographic id order (for tie-breaking)."""
        return self._id_rank

    def read_ordinal(self, ordinal: int) -> Document:
        p = bisect.bisect_right(self._base_list, ordinal) - 1
        return self._parts[p].document(ordinal - self._base_list[p])

    def read_title_text(self, ordinal: int) -> tuple[str, str]:
        """An ordinal's title and text, from the hit columns: no document parsed, a tenth of
        ``read_ordinal`` (what embedding a whole corpus reads)."""
        p = bisect.bisect_right(self._base_list, ordinal) - 1
        return _title_text(self._hit_columns[p], ordinal - self._base_list[p])

    def hits(
        self,
        ranked: Iterable[tuple[int, float]],
        query: str,
        as_of: datetime,
        filters: SearchFilter | None = None,
    ) -> list[SearchHit]:
        """``SearchHit``s for (ordinal, score) pairs, in the given order, from the hit columns
        (under ``filters``: the stored documents, their timestamps and the filter checked
        again). Every ordinal is checked against the cutoff once more, so a ranking that strayed
        past it fails loudly instead of leaking."""
        pairs = [(int(o), float(s)) for o, s in ranked]  # numpy scalars become Python's
        cutoff = as_utc(as_of)
        ordinals, scores = [o for o, _ in pairs], [s for _, s in pairs]
        terms = self.query_terms(query)
        return self._hits(ordinals, scores, terms, cutoff, self.count_before(cutoff), filters)

    def _hits(
        self,
        ordinals: list[int],
        scores: list[float],
        terms: list[str],
        cutoff: datetime,
        visible: int,
        filters: SearchFilter | None,
    ) -> list[SearchHit]:
        """``hits`` given the query's terms and ``visible = count_before(cutoff)``."""
        for ordinal in ordinals:  # before any lookup: a stray ordinal must not index anything
            if not 0 <= ordinal < visible:
                raise RuntimeError(f"index corrupt: ordinal {ordinal} ranked at cutoff {cutoff}")
        bases, stamps, columns = self._base_list, self._stamp_view, self._hit_columns
        out: list[SearchHit] = []
        for ordinal, score in zip(ordinals, scores, strict=True):
            p = bisect.bisect_right(bases, ordinal) - 1
            local = ordinal - bases[p]
            if filters is not None:
                out.append(self._stored_hit(p, local, score, terms, cutoff, filters))
                continue
            # stored columns of a visible ordinal, sliced here (a call per column was a third
            # of a hit): str, str, str and an aware UTC instant
            id_store, id_at, _, _ = columns[p]
            doc_id = str(id_store[id_at[local] : id_at[local + 1]], "utf-8")
            title, text = _title_text(columns[p], local)
            stamp, snippet = from_micros(stamps[ordinal]), text_snippet(text, terms)
            out.append(known_valid_hit(doc_id, stamp, title, score, snippet))
        return out

    def _stored_hit(
        self,
        p: int,
        local: int,
        score: float,
        terms: list[str],
        cutoff: datetime,
        filters: SearchFilter,
    ) -> SearchHit:
        """A hit from partition ``p``'s stored document, its cutoff and filter checked again."""
        doc = self._parts[p].document(local)
        if not is_visible(doc.timestamp, cutoff):
            raise RuntimeError(f"index corrupt: {doc.id!r} ranked at cutoff {cutoff}")
        if not filters.matches(doc):
            raise RuntimeError(f"index corrupt: {doc.id!r} ranked against its filter")
        return SearchHit(
            id=doc.id,
            timestamp=doc.timestamp,
            title=doc.title,
            score=score,
            snippet=text_snippet(doc.text, terms),
        )

    # -- scoring ------------------------------------------------------------------------------

    def score(
        self,
        terms: list[str],
        n: int,
        k: int,
        *,
        allowed: Mask | None = None,
        stats: AsOfStatistics | None = None,
    ) -> tuple[Ordinals, Scores]:
        """Top-``k`` ordinals and BM25 scores (then id ascending) among the ``allowed`` of the
        first ``n`` ordinals, with ``stats`` (a whole corpus's) in place of the index's own."""
        if self._blocks is None and allowed is None:
            # on the first unfiltered search
            self._blocks = block_table(self._parts, self._directory)
        parts, bases, rank, blocks = self._parts, self._bases, self._id_rank, self._blocks
        return bm25_top_k(
            parts, bases, rank, terms, n, k, allowed=allowed, blocks=blocks, stats=stats
        )

    def naive_score(self, terms: list[str], n: int, k: int) -> tuple[Ordinals, Scores]:
        """The baseline (benchmarks, tests): rank every document, then drop the future ones."""
        return numpy_top_k(self._parts, self._bases, self._id_rank, terms, n, k, future=True)


def _hit_columns(part: IndexArrays) -> tuple[Any, Any, Any, Any]:
    """A partition's ids and their offsets, its titles' and texts' offsets and their UTF-8."""
    ids = IdColumn.of(part.ids)
    return ids.store, ids.view, part.hit_offsets.data, part.hit_store


def _title_text(columns: tuple[Any, Any, Any, Any], local: int) -> tuple[str, str]:
    """A partition's title and text of its ``local`` ordinal, from its hit columns."""
    _, _, offsets, store = columns
    at = 2 * local
    mid = offsets[at + 1]
    return str(store[offsets[at] : mid], "utf-8"), str(store[mid : offsets[at + 2]], "utf-8")


def _members(ords: Ordinals, n: int) -> Mask:
    out = np.zeros(n, dtype=np.bool_)
    ords = np.asarray(ords)
    out[ords[ords < n]] = True
    return out


# -- month shards: one shard's partitions opened alone (ordinals local to it); the statistics of
# disjoint shards add up to the whole index's (``AsOfStatistics``), so a shard scoring with the
# sum scores every document as the whole index does (docs/corpus.md, "The month-sharded corpus")


@dataclass(frozen=True)
class IndexMonth:
    """One month partition of an index directory, as its manifest lists it."""

    name: str
    doc_count: int
    first_timestamp: datetime
    last_timestamp: datetime
    content_sha256: str


def index_months(index_dir: Path | str) -> list[IndexMonth]:
    """The month partitions of an index directory, in time order."""
    return [
        IndexMonth(
            str(p["name"]),
            int(p["doc_count"]),
            datetime.fromisoformat(str(p["first_timestamp"])),
            datetime.fromisoformat(str(p["last_timestamp"])),
            str(p["content_sha256"]),
        )
        for p in index_manifest(Path(index_dir))["partitions"]
    ]


def open_months(index_dir: Path | str, months: list[str]) -> EmbeddedIndex:
    """The partitions ``months`` (consecutive, in time order) of an index directory, opened as
    one index of their own (memory-mapped)."""
    known = {m.name: m for m in index_months(index_dir)}
    parts = []
    for name in months:
        if name not in known:
            raise ValueError(f"{index_dir}: no month partition {name!r}")
        arrays = load_arrays(Path(index_dir) / "parts" / name, scattered=True)
        if arrays.manifest["content_sha256"] != known[name].content_sha256:
            raise ValueError(f"{index_dir}: partition {name} does not match the manifest")
        parts.append(arrays)
    return EmbeddedIndex(parts)


def shard_statistics(index: EmbeddedIndex, terms: list[str], as_of: datetime) -> AsOfStatistics:
    """The shard's statistics over its documents before ``as_of``."""
    n = index.count_before(as_of)
    return as_of_statistics(index._parts, index._bases, terms, n)
