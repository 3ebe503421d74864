"""One month partition of a BM25 index whose statistics can be taken "as of" any cutoff.

Documents are numbered by (timestamp, id) (their *ordinal*), so the documents visible at a cutoff
are a prefix of the ordinals and N, df and avgdl all have exact prefix forms. The files, the hit
columns and the mapped term tables are in docs/corpus.md ("As-of exactness", "One partition on
disk"); a partition of an earlier format version is refused (``read_manifest``).
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast, overload

import numpy as np
import numpy.typing as npt

from pastcast import safejson
from pastcast.atomic import atomic_directory
from pastcast.corpus._identity import document_line
from pastcast.corpus._text import STOPWORDS_UTF8, folded_words
from pastcast.cutoff import as_utc
from pastcast.npyfiles import load_npy, map_file
from pastcast.records import Document

FORMAT = "pastcast-bm25"
FORMAT_VERSION = 4  # 4: term score peaks; 3: term tables; 2: ids as a blob, term bounds
K1 = 1.2  # BM25's parameters (docs/corpus.md, "Scoring"): here, as the build's bounds use them
B = 0.75
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ARRAY_NAMES = (
    "timestamps",
    "doc_len",
    "len_prefix",
    "id_rank",
    "term_offsets",
    "post_ord",
    "post_tf",
    "doc_offsets",
    "hit_offsets",
    "term_max_tf",
    "term_min_len",
    "term_peak",
)
_ID_OFFSETS, _ID_STORE = "id_offsets.npy", "ids.bin"
_TERM_TABLE, _TERM_TEXT = ("term_hash", "term_id", "term_text_offsets"), "terms.bin"

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
F64 = npt.NDArray[np.float64]


def to_micros(ts: datetime) -> int:
    """An instant as integer microseconds since the epoch (exact: datetimes have µs resolution)."""
    return (as_utc(ts) - _EPOCH) // timedelta(microseconds=1)


def from_micros(micros: int) -> datetime:
    """The UTC instant ``micros`` microseconds after the epoch (inverse of ``to_micros``)."""
    return _EPOCH + timedelta(0, 0, micros)  # positional: a third faster than by keyword


class IdColumn(Sequence[str]):
    """Document ids sliced on demand from a UTF-8 blob: ``store[offsets[i]:offsets[i + 1]]``."""

    def __init__(self, store: bytes | memoryview, offsets: I64) -> None:
        self.store = store
        self.offsets = offsets
        self.view = offsets.data  # Python indexing of a memoryview: no numpy scalar per id
        self._n = len(offsets) - 1

    @classmethod
    def of(cls, ids: Sequence[str]) -> IdColumn:
        """``ids`` as a column (an index held in memory keeps a list)."""
        if isinstance(ids, IdColumn):
            return ids
        encoded = [i.encode() for i in ids]
        return cls(b"".join(encoded), _offsets(map(len, encoded), len(encoded)))

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._n))]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        return str(self.store[self.view[i] : self.view[i + 1]], "utf-8")

    def __iter__(self) -> Iterator[str]:
        store, view = self.store, self.view
        for i in range(self._n):
            yield str(store[view[i] : view[i + 1]], "utf-8")


_BLAKE2B_8 = hashlib.blake2b(digest_size=8)  # only ever copied: a copy costs half a new one


def term_hashes(terms: Iterable[bytes]) -> npt.NDArray[np.uint64]:
    """The terms' 64-bit keys in a ``TermTable`` (the same at build and at search), read from
    their digests in one call (a Python int per key cost more than hashing)."""
    digests = []
    for term in terms:
        h = _BLAKE2B_8.copy()
        h.update(term)
        digests.append(h.digest())
    return np.frombuffer(b"".join(digests), dtype="<u8").astype(np.uint64)


class TermTable(Mapping[str, int]):
    """A partition's vocabulary as a table sorted by term hash: ``hashes`` (ascending), the
    term ids in that order, and the terms' UTF-8 (``text[offsets[i]:offsets[i + 1]]``) that
    confirms a match. A look-up is a bisection and a byte comparison, so opening an index and
    searching it parse no vocabulary: the build writes the table and a search maps it.
    """

    def __init__(self, arrays: tuple[Any, I64, I64, Any]) -> None:
        self._arrays = arrays

    @classmethod
    def of(cls, terms: Sequence[bytes]) -> TermTable:
        """The table of the UTF-8 ``terms`` (term ``i`` has id ``i``)."""
        hashes = term_hashes(terms)
        order = np.argsort(hashes, kind="stable")
        in_order = [terms[i] for i in order.tolist()]
        offsets = _offsets(map(len, in_order), len(in_order))
        text = np.frombuffer(b"".join(in_order), dtype=np.uint8)
        return cls((hashes[order], order.astype(np.int64), offsets, text))

    @classmethod
    def mapped(cls, folder: Path, scattered: bool = False) -> TermTable:
        """The table ``save`` wrote into ``folder``, memory-mapped now (no page read): an append
        replacing the index after this was opened leaves these mappings' files."""
        hashes, ids, offsets = (_mapped(folder / f"{n}.npy", scattered) for n in _TERM_TABLE)
        text = np.frombuffer(_mapped(folder / _TERM_TEXT, scattered), np.uint8)
        return cls((hashes, ids, offsets, text))

    def arrays(self) -> tuple[Any, I64, I64, Any]:
        """(hashes, ids, offsets, text): see the class docstring."""
        return self._arrays

    def save(self, folder: Path) -> None:
        hashes, ids, offsets, text = self.arrays()
        for name, values in zip(_TERM_TABLE, (hashes, ids, offsets), strict=True):
            np.save(folder / f"{name}.npy", values)
        (folder / _TERM_TEXT).write_bytes(bytes(text))

    def get(self, term: str, default: Any = None) -> Any:
        hashes, ids, offsets, text = self.arrays()
        raw = term.encode()
        key = term_hashes([raw])[0]
        at = int(np.searchsorted(hashes, key))
        while at < len(hashes) and hashes[at] == key:  # equal hashes: the text decides
            if bytes(text[offsets[at] : offsets[at + 1]]) == raw:
                return int(ids[at])
            at += 1
        return default

    def __getitem__(self, term: str) -> int:
        tid: int | None = self.get(term)
        if tid is None:
            raise KeyError(term)
        return tid

    def __len__(self) -> int:
        return len(self.arrays()[0])

    def __iter__(self) -> Iterator[str]:
        """The terms in id order (decodes every term: merges and tests, not searches)."""
        _, ids, offsets, text = self.arrays()
        raw, bounds = bytes(text), offsets.tolist()
        by_id = [""] * len(ids)
        for at, tid in enumerate(ids.tolist()):
            by_id[tid] = raw[bounds[at] : bounds[at + 1]].decode()
        return iter(by_id)


DIRECTORY_FILES = tuple(f"directory_{n}.npy" for n in ("hash", "starts", "block", "slot"))


@dataclass(frozen=True)
class TermDirectory:
    """Every partition's term table in one: the distinct term hashes (``keys``, ascending) and,
    for ``keys[g]``, the entries ``starts[g]:starts[g + 1]``, each a partition (``block``, in
    time order) and a position in its table (``slot``), whose text confirms the term. One
    look-up per query term finds it in every month, instead of one per term and month; the
    merge writes it, an index held in memory makes it when first searched."""

    keys: Any
    starts: I64
    block: I32
    slot: I32

    @classmethod
    def of(cls, tables: Sequence[TermTable]) -> TermDirectory:
        hashes = [t.arrays()[0] for t in tables]
        sizes = np.array([len(h) for h in hashes], dtype=np.int64)
        total = int(sizes.sum())
        if total == 0:
            empty = np.zeros(0, dtype=np.int32)
            return cls(np.zeros(0, dtype=np.uint64), np.zeros(1, dtype=np.int64), empty, empty)
        every = np.concatenate(hashes)
        order = np.argsort(every, kind="stable")  # equal hashes keep their months' order
        every = every[order]
        firsts = np.flatnonzero(np.r_[True, every[1:] != every[:-1]])
        keys = every[firsts]
        del every
        ends = np.cumsum(sizes)  # entry i of the concatenation: block b where ends[b - 1] <= i
        block = np.searchsorted(ends, order, side="right").astype(np.int32)
        slot = (order - (ends - sizes)[block]).astype(np.int32)
        return cls(keys, np.r_[firsts, total].astype(np.int64), block, slot)

    @classmethod
    def mapped(cls, folder: Path) -> TermDirectory:
        return cls(*(load_npy(folder / name, scattered=True) for name in DIRECTORY_FILES))

    def save(self, folder: Path) -> None:
        arrays = (self.keys, self.starts, self.block, self.slot)
        for name, values in zip(DIRECTORY_FILES, arrays, strict=True):
            np.save(folder / name, values)


@dataclass(frozen=True)
class IndexArrays:
    """Everything an index holds; arrays may be memory-mapped files."""

    timestamps: I64  # µs since epoch, ascending, one per ordinal
    doc_len: I32  # number of terms per document
    len_prefix: I64  # len_prefix[n] = sum(doc_len[:n]); size n + 1
    id_rank: I64  # rank of each document's id in lexicographic id order (tie-breaking)
    term_offsets: I64  # postings of term t are post_ord[term_offsets[t]:term_offsets[t + 1]]
    post_ord: I32  # ordinals, ascending within a term
    post_tf: I32  # term frequency of each posting
    doc_offsets: I64  # byte offsets of each document's JSON line in the store; size n + 1
    vocab: TermTable
    ids: Sequence[str]
    store: bytes | memoryview  # JSON lines, one Document per ordinal
    manifest: dict[str, Any]
    # title of ordinal i: hit_store[hit_offsets[2i]:hit_offsets[2i + 1]], then its text up to
    # hit_offsets[2i + 2]
    hit_offsets: I64
    hit_store: bytes | memoryview
    # per term: its largest term frequency, the shortest document among its postings and its
    # postings' largest score over idf (the kernel's pruning bounds, ``term_bounds``)
    term_max_tf: I64
    term_min_len: I64
    term_peak: F64

    def lines(self) -> Iterator[bytes]:
        """The stored document lines in ordinal order (the lines a build spooled)."""
        store, offsets = self.store, np.asarray(self.doc_offsets).tolist()
        for lo, hi in itertools.pairwise(offsets):
            yield bytes(store[lo:hi])

    def document(self, ordinal: int) -> Document:
        lo, hi = int(self.doc_offsets[ordinal]), int(self.doc_offsets[ordinal + 1])
        return Document.model_validate_json(bytes(self.store[lo:hi]))


Row = tuple[int, str, str, str, str, str | None, str | None, str | None, bytes]
"""A document as a partition is built from it: (timestamp in µs, id, title, text, source,
thread_id, author, parent_id, its line); rows sort in ordinal order, by (timestamp, id)."""
_MAP_FIELDS = {"source": 4, "thread_id": 5, "author": 6, "parent_id": 7}  # in a ``Row``


def rows_of_documents(documents: Iterable[tuple[Document, bytes]]) -> list[Row]:
    """The rows of documents given with their lines (``document_line``)."""
    return [
        (
            to_micros(d.timestamp),
            d.id,
            d.title,
            d.text,
            d.source,
            d.thread_id,
            d.author,
            d.parent_id,
            line,
        )
        for d, line in documents
    ]


def rows_of_lines(lines: Sequence[bytes]) -> list[Row]:
    """The rows of stored document lines (``document_line``: every field present, the
    timestamp in UTC), read as one JSON array: a fifth of validating each line as a
    ``Document``, a half of reading them one ``json.loads`` at a time."""
    objects = json.loads(b"".join((b"[", b",".join(lines), b"]")))
    iso, epoch, us = datetime.fromisoformat, _EPOCH, timedelta(microseconds=1)
    return [
        (
            (iso(o["timestamp"]) - epoch) // us,
            o["id"],
            o["title"],
            o["text"],
            o["source"],
            o["thread_id"],
            o["author"],
            o["parent_id"],
            line,
        )
        for o, line in zip(objects, lines, strict=True)
    ]


def map_columns(rows: list[Row]) -> dict[str, list[str | None]]:
    """The fields of the maps (``_maps.FIELDS``), a column each, in the order of ``rows``."""
    return {f: cast(list[str | None], [r[i] for r in rows]) for f, i in _MAP_FIELDS.items()}


def ordered_rows(rows: list[Row]) -> list[Row]:
    """``rows`` in ordinal order; a repeated id is an error (the first repeated one named)."""
    if len({r[1] for r in rows}) != len(rows):
        seen: set[str] = set()
        for r in rows:
            if r[1] in seen:
                raise ValueError(f"duplicate document id {r[1]!r}")
            seen.add(r[1])
    return sorted(rows)  # ids are unique: tuples compare on (timestamp, id) alone


def build_arrays(documents: Iterable[Document]) -> IndexArrays:
    """Index ``documents`` in memory (any order; ids must be unique)."""
    rows = rows_of_documents((d, document_line(d)) for d in documents)
    return build_from_rows(ordered_rows(rows))


def _tokens(rows: list[Row]) -> tuple[I64, I32, list[bytes]]:
    """The term id of every kept token of ``rows`` in order, each document's token count and
    the terms by id, ids in first-seen order (as a dictionary per token assigned them): the
    month's folded words split and numbered by Arrow's hash table in one pass each, the
    stopwords dropped by their ids (a Python dictionary look-up per token was half a build)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    texts = [folded_words(f"{r[2]}\n{r[3]}") for r in rows]
    offsets = _offsets(map(len, texts), len(texts))
    blob = pa.py_buffer(b"".join(texts))
    folded = pa.Array.from_buffers(
        pa.large_string(), len(texts), [None, pa.py_buffer(offsets), blob]
    )
    words = pc.ascii_split_whitespace(folded)  # leading and doubled spaces give ""
    ends = _int64(words.offsets)
    counts = ends[1:] - ends[:-1]  # words a document
    encoded = pc.dictionary_encode(words.flatten())
    terms: list[bytes] = encoded.dictionary.cast(pa.large_binary()).to_pylist()
    dropped = np.fromiter(
        (t in STOPWORDS_UTF8 or not t for t in terms), dtype=bool, count=len(terms)
    )
    ids = _int64(encoded.indices)
    keep = ~dropped[ids]
    doc_of = np.repeat(np.arange(len(rows), dtype=np.int64), counts)[keep]
    doc_len = np.bincount(doc_of, minlength=len(rows)).astype(np.int32)
    renumber = np.arange(len(terms), dtype=np.int64) - np.cumsum(dropped)  # kept: in order
    return (
        renumber[ids[keep]],
        doc_len,
        [t for t, d in zip(terms, dropped.tolist(), strict=True) if not d],
    )


def _int64(array: Any) -> I64:
    """An Arrow array of integers with no nulls as int64, read from its buffer: pyarrow's own
    conversion imports pandas, half a second in a fresh process."""
    width = array.type.bit_width // 8
    data = np.frombuffer(array.buffers()[1], dtype=f"<i{width}")
    return data[array.offset : array.offset + len(array)].astype(np.int64)


def build_from_rows(rows: list[Row]) -> IndexArrays:
    """One partition of ``rows`` in ordinal order (``ordered_rows``), vectorised over the
    month: tokens, postings, stores and their offsets in a few passes each."""
    n = len(rows)
    term_ids, doc_len, terms = _tokens(rows)
    lines = [r[8] for r in rows]
    store = b"".join(lines)
    doc_offsets = _offsets(map(len, lines), n)
    hits = [part.encode() for r in rows for part in (r[2], r[3])]
    hit_store = b"".join(hits)
    hit_offsets = _offsets(map(len, hits), 2 * n)
    # One sort makes the postings: (term, ordinal) pairs in term-major order, each term's
    # ordinals ascending, with the term frequency as the pair's count.
    tokens_per_doc = np.repeat(np.arange(n, dtype=np.int64), doc_len)
    pairs_key, tf = np.unique(term_ids * n + tokens_per_doc, return_counts=True)
    post_tid = pairs_key // max(n, 1)
    term_offsets = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(np.bincount(post_tid, minlength=len(terms)), out=term_offsets[1:])
    ids = [r[1] for r in rows]
    id_rank = np.empty(n, dtype=np.int64)
    id_rank[sorted(range(n), key=ids.__getitem__)] = np.arange(n, dtype=np.int64)
    len_prefix = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(doc_len, out=len_prefix[1:])
    post_ord = (pairs_key - post_tid * n).astype(np.int32)
    max_tf, min_len, peak = term_bounds(
        term_offsets, post_ord, tf, doc_len, peak_avgdl(n, len_prefix)
    )
    manifest = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "doc_count": n,
        "vocab_size": len(terms),
        "postings": len(pairs_key),
        "content_sha256": hashlib.sha256(store).hexdigest(),
        "first_timestamp": from_micros(rows[0][0]).isoformat() if rows else None,
        "last_timestamp": from_micros(rows[-1][0]).isoformat() if rows else None,
    }
    return IndexArrays(
        timestamps=np.fromiter((r[0] for r in rows), dtype=np.int64, count=n),
        doc_len=doc_len,
        len_prefix=len_prefix,
        id_rank=id_rank,
        term_offsets=term_offsets,
        post_ord=post_ord,
        post_tf=tf.astype(np.int32),
        doc_offsets=doc_offsets,
        vocab=TermTable.of(terms),
        ids=ids,
        store=store,
        manifest=manifest,
        hit_offsets=hit_offsets,
        hit_store=hit_store,
        term_max_tf=max_tf,
        term_min_len=min_len,
        term_peak=peak,
    )


def _offsets(sizes: Iterator[int], count: int) -> I64:
    """``[0, s0, s0 + s1, ...]``: the offsets of ``count`` pieces of these sizes."""
    out = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.fromiter(sizes, dtype=np.int64, count=count), out=out[1:])
    return out


def peak_avgdl(n: int, len_prefix: Any) -> float:
    """The average length at which a partition's ``term_peak`` is taken: its own."""
    return int(len_prefix[n]) / max(n, 1)


def term_bounds(
    offsets: Any, post_ord: Any, post_tf: Any, doc_len: Any, avgdl: float
) -> tuple[I64, I64, F64]:
    """Per term of a partition: its largest term frequency, its shortest document, and its
    peak, the largest score of its postings divided by the idf, at average length ``avgdl``
    (``peak_avgdl``); 0 for a term without postings. Each bounds every prefix of the postings
    too; the peak, at a cutoff's average length A, scaled by max(1, A / avgdl) (a score grows
    with A, by at most that ratio). Here, not beside the kernel, so a build computes them
    without loading numba."""
    starts = np.asarray(offsets[:-1], dtype=np.int64)
    if len(post_ord) == 0:
        zero = np.zeros(len(starts), dtype=np.int64)
        return zero, zero.copy(), np.zeros(len(starts))
    starts = np.minimum(starts, len(post_ord) - 1)  # a term without postings: never looked up
    lens = np.asarray(doc_len, dtype=np.int64)[post_ord]
    tf = np.asarray(post_tf, dtype=np.float64)
    part = tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * (lens / avgdl)))
    max_tf = np.maximum.reduceat(np.asarray(post_tf, dtype=np.int64), starts)
    return max_tf, np.minimum.reduceat(lens, starts), np.maximum.reduceat(part, starts)


def save_arrays(
    arrays: IndexArrays, out_dir: Path, extra: Callable[[Path], None] | None = None
) -> None:
    """Write ``arrays`` to ``out_dir`` atomically (replacing it): a sibling temporary directory
    is renamed. ``extra`` writes more files there before the manifest (which marks it whole)."""
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    with atomic_directory(out_dir) as tmp:
        for name in _ARRAY_NAMES:
            np.save(tmp / f"{name}.npy", getattr(arrays, name))
        (tmp / "docs.jsonl").write_bytes(bytes(arrays.store))
        (tmp / "hits.bin").write_bytes(bytes(arrays.hit_store))
        arrays.vocab.save(tmp)
        ids = IdColumn.of(arrays.ids)
        np.save(tmp / _ID_OFFSETS, ids.offsets)
        (tmp / _ID_STORE).write_bytes(bytes(ids.store))
        if extra is not None:
            extra(tmp)
        # The manifest is written last: its presence marks a complete index.
        manifest = {**arrays.manifest, "format": FORMAT, "version": FORMAT_VERSION}
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def read_manifest(folder: Path, expected: tuple[str, int]) -> dict[str, Any]:
    """The manifest of an index folder, refused unless of the ``expected`` (format, version):
    one that an earlier version of pastcast wrote is built again, not read."""
    path = folder / "manifest.json"
    if not path.is_file():
        raise FileNotFoundError(f"{folder}: not an index (no manifest.json)")
    manifest: dict[str, Any] = safejson.loads(path.read_bytes())
    got = (manifest.get("format"), manifest.get("version"))
    if got != expected:
        raise ValueError(
            f"{folder}: index format {got[0]!r} version {got[1]!r}, expected {expected[0]!r} "
            f"version {expected[1]} (written by an earlier version of pastcast?): build the "
            "index again with 'pastcast corpus build'"
        )
    return manifest


_READ_AHEAD = ("timestamps", "doc_len")
"""Arrays a search reads in runs, so faults keep the device's read-ahead: the timestamps (read
whole at open) and the lengths of a term's documents. A term's postings are read without it:
a search asks for the pages of each of their ranges longer than a page before scoring it
(``_bm25._prefetch``), where the read-ahead read the megabytes around them: a cold first
search at 5M, 1.1 to 1.35 s against 0.6 to 0.7 s (docs/measurements/scale.md)."""


def load_arrays(index_dir: Path, scattered: bool = False) -> IndexArrays:
    """Open an index written by ``save_arrays``; arrays and the text store are memory-mapped,
    ``scattered`` for a search, which reads a few pages of each but ``_READ_AHEAD``: a device's
    read-ahead (8 MB on some) would read the term tables, ids and stores whole."""
    index_dir, few = Path(index_dir), scattered
    manifest = read_manifest(index_dir, (FORMAT, FORMAT_VERSION))
    arrays = {
        n: _mapped(index_dir / f"{n}.npy", few and n not in _READ_AHEAD) for n in _ARRAY_NAMES
    }
    ids = IdColumn(_mapped(index_dir / _ID_STORE, few), _mapped(index_dir / _ID_OFFSETS, few))
    if len(ids) != manifest["doc_count"]:
        raise ValueError(f"{index_dir}: {len(ids)} ids, manifest says {manifest['doc_count']}")
    return IndexArrays(
        vocab=TermTable.mapped(index_dir, few),
        ids=ids,
        store=_mapped(index_dir / "docs.jsonl", few),
        manifest=manifest,
        hit_store=_mapped(index_dir / "hits.bin", few),
        **arrays,
    )


def _mapped(path: Path, scattered: bool = False) -> Any:
    """A ``.npy`` file's array, or another file's bytes, memory-mapped; ``scattered``: a search's
    (``load_npy``)."""
    return (
        load_npy(path, scattered=scattered)
        if path.suffix == ".npy"
        else map_file(path, scattered=scattered)
    )
