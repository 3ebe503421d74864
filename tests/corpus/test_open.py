"""``open_backend``: one way to open every backend, with one-line errors, and the identity each
opened corpus reports (the same content hash for the same documents in any backend)."""

from __future__ import annotations

import importlib.util
import mmap
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from corpus_synth import START, make_docs

from pastcast import safejson
from pastcast.corpus import (
    CorpusIdentity,
    OpenedCorpus,
    content_digest,
    corpus_identity,
    open_backend,
    retrieval_modes,
    split_schema,
)
from pastcast.corpus.dense import DenseIndex, HybridIndex
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.embedded._arrays import TermTable, build_arrays, save_arrays
from pastcast.corpus.postgres import PostgresBackend
from pastcast.errors import FieldError
from pastcast.records import Document
from pastcast.retrying import redact_url

DOCS = make_docs(80, seed=3, span_days=70)  # three months


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("open") / "ix"
    EmbeddedIndex.build(DOCS, path)
    return path


# -- identity ----------------------------------------------------------------------------------


def test_identity_is_read_from_the_manifest_and_stable_across_reopen(index_dir: Path) -> None:
    first = open_backend(index_dir).identity()
    again = open_backend(str(index_dir)).identity()
    assert first == again
    assert first.content_sha256 == content_digest(DOCS) == content_digest(reversed(DOCS))
    assert first.doc_count == 80 and first.spec == str(index_dir)
    assert first.backend == first.retrieval == "bm25"
    assert first.first_timestamp == min(d.timestamp for d in DOCS)
    assert first.last_timestamp == max(d.timestamp for d in DOCS)
    assert first.options["tokenizer"] and first.options["k1"] == 1.2 and first.options["b"] == 0.75
    assert EmbeddedIndex.in_memory(DOCS).identity().content_sha256 == first.content_sha256


@pytest.mark.parametrize(
    "change",
    [
        {"text": "a different text"},
        {"title": "another title"},
        {"timestamp": DOCS[5].timestamp + timedelta(microseconds=1)},
        {"author": "someone"},
    ],
)
def test_the_hash_changes_when_a_document_changes(tmp_path: Path, change: dict[str, Any]) -> None:
    changed = [*DOCS[:5], DOCS[5].model_copy(update=change), *DOCS[6:]]
    EmbeddedIndex.build(changed, tmp_path / "ix")
    got = open_backend(tmp_path / "ix").identity().content_sha256
    assert got != content_digest(DOCS) and got == content_digest(changed)
    assert EmbeddedIndex.in_memory(DOCS[:-1]).identity().content_sha256 != content_digest(DOCS)


def test_an_index_of_the_earlier_layout_is_refused_in_one_line(tmp_path: Path) -> None:
    save_arrays(build_arrays(DOCS), tmp_path / "old")  # one partition, no month folders
    with pytest.raises(FieldError) as err:
        open_backend(tmp_path / "old")
    text = str(err.value)
    assert str(tmp_path / "old") in text and "build the index again" in text and "\n" not in text


def test_dense_and_hybrid_identities_name_the_embedder(index_dir: Path) -> None:
    pytest.importorskip("faiss")
    dense = open_backend(index_dir, "dense", embedder="hash-64")
    hybrid = open_backend(index_dir, "hybrid", embedder="hash-64", depth=50)
    assert isinstance(dense, DenseIndex) and isinstance(hybrid, HybridIndex)
    base = open_backend(index_dir).identity()
    for backend, name in ((dense, "dense"), (hybrid, "hybrid")):
        ident = backend.identity()
        assert ident.retrieval == ident.backend == name
        assert ident.content_sha256 == base.content_sha256
        assert ident.options["embedder"] == "hash-64" and ident.options["exact"] is True
        backend.close()
    assert hybrid.identity().options["depth"] == 50
    approx = open_backend(index_dir, "dense", embedder="hash-64", nprobe=4).identity()
    assert approx.options["exact"] is True  # no month reaches 1,000 documents: still exact


def test_corpus_identity_of_any_backend(index_dir: Path) -> None:
    assert corpus_identity(None) is None
    assert corpus_identity(open_backend(index_dir)) == open_backend(index_dir).identity()

    class Plain:  # a CorpusBackend that does not know its identity
        def search(self, query: str, *, as_of: Any, k: int = 10) -> list[Any]:
            return []

        def read(self, doc_id: str, *, as_of: Any) -> Document:
            raise LookupError

        def count_before(self, as_of: Any) -> int:
            return 0

    assert corpus_identity(Plain()) is None


def test_identity_round_trips_as_a_record(index_dir: Path) -> None:
    ident = open_backend(index_dir).identity()
    assert CorpusIdentity.model_validate_json(ident.model_dump_json()) == ident


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "options", "message"),
    [
        (("NOWHERE",), {}, "not an index directory"),
        (("INDEX", "fuzzy"), {}, "retrieval 'fuzzy': unknown (choose from bm25, dense, hybrid)"),
        (("INDEX",), {"nprobe": 3}, "accepted arguments: spec"),
        (("INDEX", "dense"), {"embedder": "nope"}, "unknown embedder 'nope'"),
        (("postgresql://u:pw@127.0.0.1:notaport/db",), {}, "postgresql://u@127.0.0.1:notaport"),
        (("postgresql://u:pw@127.0.0.1/db",), {"nprobe": 3}, "backend 'postgres': no argument"),
        (("postgresql://u@h/db?schema=a",), {"schema": "b"}, "schema 'a' in the URL, 'b'"),
        (("postgresql://u@h/db", "fuzzy"), {}, "unknown for a database"),
    ],
)
def test_errors_are_one_line(
    index_dir: Path, tmp_path: Path, args: tuple[str, ...], options: dict[str, Any], message: str
) -> None:
    spec, *rest = args
    spec = {"NOWHERE": str(tmp_path), "INDEX": str(index_dir)}.get(spec, spec)
    with pytest.raises(FieldError) as err:
        open_backend(spec, *rest, **options)
    text = str(err.value)
    assert message in text and "\n" not in text and ":pw@" not in text


def test_dense_without_the_extra_says_so(index_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "faiss" else real(name, *a)
    )
    for mode in ("dense", "hybrid"):
        with pytest.raises(FieldError, match=r"needs the 'dense' extra.*missing: faiss"):
            open_backend(index_dir, mode, embedder="hash-64")


def test_every_mode_opens_an_opened_corpus(index_dir: Path) -> None:
    pytest.importorskip("faiss")
    assert retrieval_modes() == ("bm25", "dense", "hybrid")
    cutoff = START + timedelta(days=40)
    for mode in retrieval_modes():
        backend = open_backend(
            index_dir, mode, **({} if mode == "bm25" else {"embedder": "hash-64"})
        )
        assert isinstance(backend, OpenedCorpus)
        assert backend.count_before(cutoff) == sum(d.timestamp < cutoff for d in DOCS)
        assert all(h.timestamp < cutoff for h in backend.search("election", as_of=cutoff))
        backend.close()


# -- database URLs -----------------------------------------------------------------------------


def test_urls_lose_their_password_and_keep_their_parameters() -> None:
    assert redact_url("postgresql://u:s3cret@h:5432/db?sslmode=require") == (
        "postgresql://u@h:5432/db?sslmode=require"
    )
    assert redact_url("postgresql://h/db?password=s3cret&options=-c%20x") == (
        "postgresql://h/db?options=-c%20x"
    )
    assert split_schema("postgresql://h/db?options=-c%20x&schema=news") == (
        "postgresql://h/db?options=-c%20x",
        "news",
    )
    assert split_schema("postgresql://h/db") == ("postgresql://h/db", None)
    with pytest.raises(ValueError, match="twice"):
        split_schema("postgresql://h/db?schema=a&schema=b")


def test_postgres_identity_equals_the_embedded_one(pg_url: str, index_dir: Path) -> None:
    url = pg_url.replace("postgres@", "postgres:s3cret-pw@", 1)
    PostgresBackend.build(DOCS, url, schema="ident").close()
    pg = open_backend(f"{url}?schema=ident")
    try:
        ident = pg.identity()
        assert ident.content_sha256 == open_backend(index_dir).identity().content_sha256
        assert ident.backend == "postgres" and ident.retrieval == "bm25"
        assert ident.options["schema"] == "ident" and "s3cret" not in ident.model_dump_json()
        assert ident.doc_count == 80
        assert ident.first_timestamp == min(d.timestamp for d in DOCS)
    finally:
        pg.close()


def test_postgres_dense_needs_embeddings_of_the_same_model(pg_url: str) -> None:
    from corpus_synth import HashEmbedder

    PostgresBackend.build(DOCS[:20], pg_url, schema="plain").close()
    with pytest.raises(FieldError, match="holds no embeddings"):
        open_backend(f"{pg_url}?schema=plain", "hybrid")
    PostgresBackend.build(DOCS[:20], pg_url, schema="hashed", embedder=HashEmbedder()).close()
    with pytest.raises(FieldError, match="embedded with 'hash-64', not 'all-minilm"):
        open_backend(pg_url, "dense", schema="hashed", embedder="all-minilm-l6-v2")
    dense = open_backend(pg_url, "dense", schema="hashed")  # the model named by the corpus
    try:
        assert dense.identity().options["embedder"] == "hash-64"
        assert dense.identity().retrieval == "dense"
    finally:
        dense.close()


def test_opening_and_searching_parse_no_vocabulary(
    index_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search maps each month's term table and bisects it: no vocabulary is parsed or
    decoded whole, and no months are merged (a merge decodes every term), so the first search
    after opening costs a few pages, not a pass over every term."""
    index = EmbeddedIndex.open(index_dir)
    words = next(iter(DOCS[-1].text.split()), "market")

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a vocabulary was parsed or decoded whole")

    monkeypatch.setattr(safejson, "loads", refuse)
    monkeypatch.setattr(TermTable, "__iter__", refuse)
    hits = index.search(f"{words} market", as_of=DOCS[-1].timestamp + timedelta(days=1))
    assert hits  # the search ran and found the documents
    tables = [part.vocab.arrays()[0] for part in index._parts]
    assert len(tables) > 1 and all(isinstance(t.base, mmap.mmap) for t in tables)
