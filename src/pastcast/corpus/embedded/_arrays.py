"""The in-memory and on-disk layout of a BM25 index whose statistics can be taken "as of" any
cutoff.

Documents are sorted by (timestamp, id) and numbered by that order (their *ordinal*). The
documents visible at a cutoff are then exactly a prefix ``0 .. n_t - 1`` of the ordinals, and
every corpus statistic BM25 needs has a prefix form:

* ``N = n_t`` (a bisection on the sorted timestamps);
* ``df`` of a term = the number of its postings with ordinal ``< n_t`` (postings are ascending,
  so another bisection);
* ``avgdl = len_prefix[n_t] / n_t`` (integer prefix sums, so the value is exact).

A query at a cutoff therefore sees the same numbers as an index built from the visible
documents alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from rich.console import Console
from rich.progress import Progress

from pastcast import safejson
from pastcast.corpus._identity import document_line
from pastcast.corpus._text import tokenize
from pastcast.cutoff import as_utc
from pastcast.records import Document

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "IndexArrays",
    "build_arrays",
    "from_micros",
    "load_arrays",
    "to_micros",
]

FORMAT = "pastcast-bm25"
FORMAT_VERSION = 1
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
)

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]


def to_micros(ts: datetime) -> int:
    """An instant as integer microseconds since the epoch (exact: datetimes have µs resolution)."""
    return (as_utc(ts) - _EPOCH) // timedelta(microseconds=1)


def from_micros(micros: int) -> datetime:
    """The UTC instant ``micros`` microseconds after the epoch (inverse of ``to_micros``)."""
    return _EPOCH + timedelta(microseconds=micros)


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
    vocab: dict[str, int]
    ids: list[str]
    store: bytes | memoryview  # JSON lines, one Document per ordinal
    manifest: dict[str, Any]

    def document(self, ordinal: int) -> Document:
        lo, hi = int(self.doc_offsets[ordinal]), int(self.doc_offsets[ordinal + 1])
        return Document.model_validate_json(bytes(self.store[lo:hi]))


def _sorted_unique(documents: Iterable[Document]) -> list[Document]:
    seen: set[str] = set()
    docs: list[Document] = []
    for doc in documents:
        if doc.id in seen:
            raise ValueError(f"duplicate document id {doc.id!r}")
        seen.add(doc.id)
        docs.append(doc)
    docs.sort(key=lambda d: (to_micros(d.timestamp), d.id))
    return docs


def build_arrays(documents: Iterable[Document], *, progress: bool = False) -> IndexArrays:
    """Index ``documents`` in memory (any order; ids must be unique)."""
    docs = _sorted_unique(documents)
    n = len(docs)
    vocab: dict[str, int] = {}
    term_ids, ords, tfs = array("q"), array("q"), array("q")
    doc_len = np.zeros(n, dtype=np.int32)
    store = bytearray()
    doc_offsets = np.zeros(n + 1, dtype=np.int64)
    digest = hashlib.sha256()
    with Progress(disable=not progress, transient=True, console=Console(stderr=True)) as bar:
        task = bar.add_task("indexing documents", total=n)
        for i, doc in enumerate(docs):
            tokens = tokenize(f"{doc.title}\n{doc.text}")
            doc_len[i] = len(tokens)
            for term, tf in Counter(tokens).items():
                term_ids.append(vocab.setdefault(term, len(vocab)))
                ords.append(i)
                tfs.append(tf)
            line = document_line(doc)
            digest.update(line)
            store += line
            doc_offsets[i + 1] = len(store)
            if i % 1000 == 0:
                bar.update(task, completed=i)
    tid = np.frombuffer(term_ids, dtype=np.int64)
    # A stable sort by term keeps each term's ordinals ascending (they were appended in order).
    order = np.argsort(tid, kind="stable")
    term_offsets = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(tid, minlength=len(vocab)), out=term_offsets[1:])
    ids = [d.id for d in docs]
    id_rank = np.empty(n, dtype=np.int64)
    id_rank[sorted(range(n), key=ids.__getitem__)] = np.arange(n, dtype=np.int64)
    len_prefix = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(doc_len, out=len_prefix[1:])
    manifest = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "doc_count": n,
        "vocab_size": len(vocab),
        "postings": len(tid),
        "content_sha256": digest.hexdigest(),
        "first_timestamp": docs[0].timestamp.isoformat() if docs else None,
        "last_timestamp": docs[-1].timestamp.isoformat() if docs else None,
    }
    return IndexArrays(
        timestamps=np.array([to_micros(d.timestamp) for d in docs], dtype=np.int64),
        doc_len=doc_len,
        len_prefix=len_prefix,
        id_rank=id_rank,
        term_offsets=term_offsets,
        post_ord=np.frombuffer(ords, dtype=np.int64)[order].astype(np.int32),
        post_tf=np.frombuffer(tfs, dtype=np.int64)[order].astype(np.int32),
        doc_offsets=doc_offsets,
        vocab=vocab,
        ids=ids,
        store=bytes(store),
        manifest=manifest,
    )


def save_arrays(arrays: IndexArrays, out_dir: Path, *, overwrite: bool = False) -> None:
    """Write ``arrays`` to ``out_dir`` atomically: a sibling temporary directory is renamed."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not overwrite:
        raise FileExistsError(f"{out_dir}: already exists (pass overwrite to replace it)")
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", dir=out_dir.parent))
    try:
        for name in _ARRAY_NAMES:
            np.save(tmp / f"{name}.npy", getattr(arrays, name))
        (tmp / "docs.jsonl").write_bytes(bytes(arrays.store))
        terms = sorted(arrays.vocab, key=arrays.vocab.__getitem__)
        (tmp / "vocab.json").write_text(json.dumps(terms, ensure_ascii=False))
        (tmp / "ids.json").write_text(json.dumps(arrays.ids, ensure_ascii=False))
        # The manifest is written last: its presence marks a complete index.
        (tmp / "manifest.json").write_text(json.dumps(arrays.manifest, indent=2) + "\n")
        if out_dir.exists():
            old = out_dir.with_name(f".{out_dir.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(out_dir, old)
            os.replace(tmp, out_dir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def load_arrays(index_dir: Path) -> IndexArrays:
    """Open an index written by ``save_arrays``; arrays and the text store are memory-mapped."""
    index_dir = Path(index_dir)
    manifest_path = index_dir / "manifest.json"
    if not manifest_path.is_file():
        raise FileNotFoundError(f"{index_dir}: not an index (no manifest.json)")
    manifest = safejson.loads(manifest_path.read_bytes())
    if manifest.get("format") != FORMAT or manifest.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"{manifest_path}: unsupported index format {manifest.get('format')!r} "
            f"version {manifest.get('version')!r} (expected {FORMAT!r} {FORMAT_VERSION})"
        )
    arrays = {
        # plain ndarray views of the mappings: slicing an np.memmap costs microseconds each
        name: np.asarray(np.load(index_dir / f"{name}.npy", mmap_mode="r", allow_pickle=False))
        for name in _ARRAY_NAMES
    }
    terms: list[str] = safejson.loads((index_dir / "vocab.json").read_bytes())
    ids: list[str] = safejson.loads((index_dir / "ids.json").read_bytes())
    store_path = index_dir / "docs.jsonl"
    store: bytes | memoryview
    if store_path.stat().st_size == 0:
        store = b""
    else:
        store = memoryview(np.memmap(store_path, dtype=np.uint8, mode="r"))  # type: ignore[arg-type]
    if len(ids) != manifest["doc_count"]:
        raise ValueError(
            f"{index_dir}: ids.json has {len(ids)} ids, manifest says {manifest['doc_count']}"
        )
    return IndexArrays(
        vocab={t: i for i, t in enumerate(terms)},
        ids=ids,
        store=store,
        manifest=manifest,
        **arrays,
    )
