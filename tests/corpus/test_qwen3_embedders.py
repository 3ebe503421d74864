"""The papers' Qwen3 embedders against a loopback server in the shape vLLM, TEI and llama.cpp
answer (``/v1/embeddings``, the model's dimension): documents are sent as they are, queries with
the model's instruction, and the ranking is the inner product of unit vectors over documents
before the cutoff; the address comes from the name or the environment, and without one the
error names both; a server of another dimension is refused. Also through pgvector."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from corpus_synth import START, make_docs
from embedding_server import embedding_server, vector_of

from pastcast.corpus.dense import resolve_embedder
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.errors import FieldError

faiss = pytest.importorskip("faiss")
from pastcast.corpus.dense import DenseIndex, embedding_text  # noqa: E402

TASK = "Given a web search query, retrieve relevant passages that answer the query"


def unit(text: str, dim: int) -> np.ndarray:  # type: ignore[type-arg]
    v = np.asarray(vector_of(text, dim), dtype=np.float64)
    return v / np.linalg.norm(v)


@pytest.mark.parametrize(
    ("name", "served", "dim"),
    [("qwen3-embedding-0.6b", "Qwen/Qwen3-Embedding-0.6B", 1024)],
)
def test_queries_carry_the_instruction_and_documents_do_not(
    name: str, served: str, dim: int
) -> None:
    docs = make_docs(40, seed=7)
    with embedding_server(dim=dim) as server:
        embedder = resolve_embedder(f"{name}:{server.url}")
        assert embedder.name == name  # the model's name alone: any server, any address
        dense = DenseIndex(EmbeddedIndex.in_memory(docs), embedder)
        cutoff = START + timedelta(days=20)
        hits = dense.search("election storm", as_of=cutoff, k=5)
        asked = f"Instruct: {TASK}\nQuery:election storm"
        assert server.received[asked] == 1
        assert "election storm" not in server.received
        assert all(server.received[embedding_text(d)] == 1 for d in docs)
        assert {m for m in server.models} == {served}
        visible = [d for d in docs if d.timestamp < cutoff]
        scores = [float(unit(embedding_text(d), dim) @ unit(asked, dim)) for d in visible]
        best = [visible[i].id for i in np.argsort(scores)[::-1][:5]]
        assert [h.id for h in hits] == best
        assert all(h.timestamp < cutoff for h in hits)


def test_the_address_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PASTCAST_EMBEDDING_URL", raising=False)
    with pytest.raises(FieldError, match=r"PASTCAST_EMBEDDING_URL.*qwen3-embedding-8b:http"):
        resolve_embedder("qwen3-embedding-8b")
    with embedding_server(dim=4096) as server:
        monkeypatch.setenv("PASTCAST_EMBEDDING_URL", server.url)
        embedder = resolve_embedder("qwen3-embedding-8b:?task=Find+news&model=qwen3-8b")
        vectors = embedder.encode(["a", "b"])
        assert vectors.shape == (2, 4096)
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        assert server.models == {"qwen3-8b"}
        encode_queries = embedder.encode_queries  # type: ignore[attr-defined]
        encode_queries(["q"])
        assert server.received["Instruct: Find news\nQuery:q"] == 1


def test_a_server_of_another_dimension_is_refused_naming_it() -> None:
    with embedding_server(dim=384) as server:
        embedder = resolve_embedder(f"qwen3-embedding-8b:{server.url}")
        with pytest.raises(ValueError, match="384-d vectors where Qwen/Qwen3-Embedding-8B gives"):
            embedder.encode(["a document"])


def test_an_unknown_option_is_one_line_naming_it() -> None:
    with pytest.raises(FieldError, match="unknown option 'dimensions'"):
        resolve_embedder("qwen3-embedding-0.6b:http://127.0.0.1:9/v1?dimensions=64")


def test_pgvector_ranks_by_the_same_vectors(pg_url: str, tmp_path: Path) -> None:
    from pastcast.corpus import open_backend
    from pastcast.corpus.postgres import PostgresBackend

    docs = make_docs(50, seed=8)
    cutoff = START + timedelta(days=25)
    with embedding_server(dim=1024) as server:
        name = f"qwen3-embedding-0.6b:{server.url}"
        PostgresBackend.build(docs, pg_url, schema="qwen3", embedder=resolve_embedder(name)).close()
        backend = open_backend(f"{pg_url}?schema=qwen3", "dense", embedder=name)
        try:
            hits = backend.search("ceasefire talks", as_of=cutoff, k=5)
        finally:
            backend.close()
        asked = f"Instruct: {TASK}\nQuery:ceasefire talks"
        assert server.received[asked] >= 1
    visible = [d for d in docs if d.timestamp < cutoff]
    scores = [float(unit(embedding_text(d), 1024) @ unit(asked, 1024)) for d in visible]
    assert [h.id for h in hits] == [visible[i].id for i in np.argsort(scores)[::-1][:5]]


WORLD = "world:0,n_events=4,n_documents=200"  # a small world: its news embedded in a second


@pytest.mark.parametrize(
    ("preset", "name", "dim"),
    [("dojo", "qwen3-embedding-8b", 4096), ("hindcast", "qwen3-embedding-0.6b", 1024)],
)
def test_the_papers_presets_search_by_their_qwen3_embedder(
    preset: str, name: str, dim: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run under a paper's preset searches densely with the paper's embedder: without a
    server it stops in one line naming the variable and the option; with one it runs, the
    documents embedded there and the run's corpus recording the embedder."""
    from typer.testing import CliRunner

    from pastcast.cli import app
    from pastcast.runlog import read_run_log

    def run(out: Path) -> object:
        args = ["run", "--preset", preset, "--agent", "uniform", "--dataset", WORLD]
        args += ["--max-events", "1", "--no-python-tool", "--out", str(out)]
        return CliRunner().invoke(app, args)

    monkeypatch.delenv("PASTCAST_EMBEDDING_URL", raising=False)
    refused = run(tmp_path / "no-server" / "run.jsonl")
    assert refused.exit_code == 2
    (line,) = refused.output.splitlines()
    assert line.startswith("error: ") and "PASTCAST_EMBEDDING_URL=http://HOST:PORT/v1" in line
    assert f"{name}:http://HOST:PORT/v1" in line
    assert not (tmp_path / "no-server" / "run.jsonl").exists()
    with embedding_server(dim=dim) as server:
        monkeypatch.setenv("PASTCAST_EMBEDDING_URL", server.url)
        ran = run(tmp_path / "served" / "run.jsonl")
        assert ran.exit_code == 0, ran.output
        assert sum(server.received.values()) > 0
    corpus = read_run_log(tmp_path / "served" / "run.jsonl").header.corpus
    assert corpus is not None and corpus.retrieval == "dense"
    assert corpus.options.get("embedder") == name
