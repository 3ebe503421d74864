"""Document vectors computed elsewhere: a ``.npy`` with its ids file, or Parquet keyed by id,
give the same search as vectors computed here; wrong dimensions, NaNs, missing, unknown or
repeated ids are refused naming the file and the id."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from corpus_synth import START, HashEmbedder, make_docs
from embedding_server import embedding_server

from pastcast.corpus import open_backend
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.errors import FieldError

faiss = pytest.importorskip("faiss")
from pastcast.corpus.dense import (  # noqa: E402
    DenseIndex,
    embedding_text,
    load_vectors,
)

CUTOFF = START + timedelta(days=45)


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, list[str], np.ndarray]:  # type: ignore[type-arg]
    """An index, its ids in ordinal order and their vectors (the hash embedder's)."""
    index = EmbeddedIndex.build(make_docs(120, seed=41), tmp_path / "ix")
    docs = [index.read_ordinal(i) for i in range(len(index))]
    vectors = HashEmbedder().encode([embedding_text(d) for d in docs])
    return tmp_path / "ix", [d.id for d in docs], vectors


def write_npy(folder: Path, ids: list[str], vectors: np.ndarray) -> Path:  # type: ignore[type-arg]
    path = folder / "vectors.npy"
    np.save(path, vectors)
    (folder / "vectors.ids.txt").write_text("\n".join(ids) + "\n")
    return path


def write_parquet(folder: Path, ids: list[str], vectors: np.ndarray) -> Path:  # type: ignore[type-arg]
    path = folder / "vectors.parquet"
    table = pa.table({"id": ids, "embedding": [list(map(float, v)) for v in vectors]})
    pq.write_table(table, path)
    return path


@pytest.mark.parametrize("write", [write_npy, write_parquet])
def test_precomputed_vectors_search_as_computed_ones(
    corpus: tuple[Path, list[str], np.ndarray],  # type: ignore[type-arg]
    tmp_path: Path,
    write: object,
) -> None:
    ix, ids, vectors = corpus
    order = np.random.default_rng(3).permutation(len(ids))  # any order: ids decide
    path = write(tmp_path, [ids[i] for i in order], 5.0 * vectors[order])  # type: ignore[operator]
    imported = open_backend(ix, "dense", embedder="hash-64", vectors=str(path))
    assert imported.identity().options["vectors"] == "precomputed"
    computed = DenseIndex(EmbeddedIndex.in_memory(make_docs(120, seed=41)), HashEmbedder())
    for query in ("election storm", "w3 tariff"):
        got = imported.search(query, as_of=CUTOFF, k=10)
        want = computed.search(query, as_of=CUTOFF, k=10)
        assert [h.id for h in got] == [h.id for h in want]
        assert [h.score for h in got] == pytest.approx([h.score for h in want], abs=1e-6)
    again = open_backend(ix, "dense")  # kept with the index, and its model recorded there
    assert again.identity().options["vectors"] == "precomputed"
    assert again.identity().options["embedder"] == "hash-64"
    assert again.search("merger", as_of=CUTOFF) == imported.search("merger", as_of=CUTOFF)


def _refused(path: Path, ids: list[str], match: str, **options: object) -> None:
    with pytest.raises(FieldError, match=match):
        load_vectors(path, ids, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("write", [write_npy, write_parquet])
def test_bad_vectors_are_refused_naming_the_file_and_the_id(
    corpus: tuple[Path, list[str], np.ndarray],  # type: ignore[type-arg]
    tmp_path: Path,
    write: object,
) -> None:
    _, ids, vectors = corpus
    put = write  # type: ignore[assignment]
    name = "vectors.npy" if write is write_npy else "vectors.parquet"

    nan = vectors.copy()
    nan[17, 3] = np.nan
    path = put(tmp_path, ids, nan)  # type: ignore[operator]
    _refused(path, ids, rf"{name}: id '{ids[17]}' has a vector that is not finite")

    path = put(tmp_path, ids[:-1], vectors[:-1])  # type: ignore[operator]
    _refused(path, ids, rf"vectors.*: no vector for id '{ids[-1]}' \(1 of 120")

    unknown = [*ids[:5], "not-a-document", *ids[6:]]
    path = put(tmp_path, unknown, vectors)  # type: ignore[operator]
    _refused(path, ids, rf"{name}: id 'not-a-document' is not a document of the corpus")

    twice = [*ids[:5], ids[0], *ids[6:]]
    path = put(tmp_path, twice, vectors)  # type: ignore[operator]
    _refused(path, ids, rf"{name}: id '{ids[0]}' has more than one vector")

    path = put(tmp_path, ids, vectors)  # type: ignore[operator]
    _refused(path, ids, rf"{name}: id '{ids[0]}' has a vector of dimension 64, expected 32", dim=32)


def test_a_ragged_parquet_column_names_the_id(
    corpus: tuple[Path, list[str], np.ndarray],  # type: ignore[type-arg]
    tmp_path: Path,
) -> None:
    _, ids, vectors = corpus
    rows = [list(map(float, v)) for v in vectors]
    rows[9] = rows[9][:-1]
    pq.write_table(pa.table({"id": ids, "embedding": rows}), tmp_path / "ragged.parquet")
    _refused(
        tmp_path / "ragged.parquet",
        ids,
        rf"ragged.parquet: id '{ids[9]}' has a vector of dimension 63, expected 64",
    )
    pq.write_table(pa.table({"id": ids}), tmp_path / "bare.parquet")
    _refused(tmp_path / "bare.parquet", ids, "bare.parquet: no column 'embedding'")


def test_an_ids_file_that_does_not_match_is_refused(
    corpus: tuple[Path, list[str], np.ndarray],  # type: ignore[type-arg]
    tmp_path: Path,
) -> None:
    _, ids, vectors = corpus
    path = write_npy(tmp_path, ids, vectors)
    (tmp_path / "vectors.ids.txt").write_text("\n".join(ids[:-3]) + "\n")
    _refused(path, ids, r"vectors.ids.txt: 117 ids for the 120 rows of .*vectors.npy")
    (tmp_path / "vectors.ids.txt").unlink()
    _refused(path, ids, r"vectors.npy: its ids file .*vectors.ids.txt cannot be read")


def test_a_query_model_of_another_dimension_refuses_the_import(
    corpus: tuple[Path, list[str], np.ndarray],  # type: ignore[type-arg]
    tmp_path: Path,
) -> None:
    ix, ids, vectors = corpus
    path = write_npy(tmp_path, ids, vectors[:, :48])
    with pytest.raises(FieldError, match=r"vectors.npy: id .* dimension 48, expected 64"):
        open_backend(ix, "dense", embedder="hash-64", vectors=str(path))


def test_the_command_line_imports_vectors_and_searches_approximately(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from pastcast.cli._app import app

    docs = make_docs(120, seed=41)
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(d.model_dump_json() + "\n" for d in docs))
    vectors = HashEmbedder().encode([embedding_text(d) for d in docs])
    path = write_npy(tmp_path, [d.id for d in docs], vectors)
    runner = CliRunner()
    out = tmp_path / "ix"
    args = ["corpus", "build", f"jsonl:{src}", "--out", str(out), "--embedder", "hash-64"]
    result = runner.invoke(app, [*args, "--vectors", str(path), "--nprobe", "2"])
    assert result.exit_code == 0, result.output
    assert list(out.glob("dense-hash-64.npy"))
    cutoff = CUTOFF.isoformat()
    search = ["corpus", "search", str(out), "election storm", "--as-of", cutoff, "--json"]
    exact = runner.invoke(app, [*search, "--retrieval", "dense", "--embedder", "hash-64"])
    approx = runner.invoke(
        app, [*search, "--retrieval", "dense", "--embedder", "hash-64", "--nprobe", "2"]
    )
    assert exact.exit_code == approx.exit_code == 0, exact.output + approx.output
    assert all(h["timestamp"] < cutoff for h in json.loads(approx.output))
    (tmp_path / "vectors.ids.txt").write_text("\n".join(d.id for d in docs[1:]) + "\n")
    again = runner.invoke(app, [*args, "--overwrite", "--vectors", str(path)])
    assert again.exit_code == 2
    assert "--vectors" in again.output and "vectors.ids.txt: 119 ids" in again.output
    bare = ["corpus", "build", f"jsonl:{src}", "--out", str(tmp_path / "other")]
    alone = runner.invoke(app, [*bare, "--vectors", str(path)])
    assert alone.exit_code == 2 and "--vectors" in alone.output and "embedder" in alone.output


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The command line in a process of its own: nothing imported before it but what it does."""
    src = Path(__file__).resolve().parents[2] / "src"
    code = "import sys; from pastcast.cli import main; sys.exit(main())"
    env = {**os.environ, "PYTHONPATH": str(src)}
    command = [sys.executable, "-c", code, *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)


def _one_error_line(stderr: str) -> str:
    """The one error line a refusal prints, the last (progress lines may come before it)."""
    (line,) = [line for line in stderr.splitlines() if line.startswith("error")]
    assert stderr.rstrip().endswith(line)
    return line


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[list[str], Path, list[str]]]:
    """A JSONL source of 60 documents, a ``corpus build`` of it into ``ix`` through a loopback
    embedding server of 16 dimensions (the query model) and the documents' ids."""
    docs = make_docs(60, seed=43)
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(d.model_dump_json() + "\n" for d in docs))
    with embedding_server(dim=16) as server:
        spec = f"openai-compatible:m@{server.url}"
        build = ["corpus", "build", f"jsonl:{src}", "--out", str(tmp_path / "ix")]
        yield [*build, "--embedder", spec], tmp_path / "ix", [d.id for d in docs]


def test_parquet_vectors_import_from_the_command_line(
    served: tuple[list[str], Path, list[str]], tmp_path: Path
) -> None:
    build, out, ids = served
    vectors = np.random.default_rng(5).standard_normal((len(ids), 16))
    path = write_parquet(tmp_path, ids, vectors)
    done = _cli(*build, "--vectors", str(path))
    assert done.returncode == 0, done.stderr
    (stored,) = out.glob("dense-*.npy")
    want = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    index = EmbeddedIndex.open(out)
    order = [ids.index(index.read_ordinal(i).id) for i in range(len(index))]
    np.testing.assert_allclose(np.load(stored), want[order], atol=1e-6)


def test_a_refused_import_leaves_nothing_and_the_corrected_command_runs(
    served: tuple[list[str], Path, list[str]], tmp_path: Path
) -> None:
    build, out, ids = served
    vectors = np.random.default_rng(6).standard_normal((len(ids), 16))
    path = write_npy(tmp_path, ids, vectors)
    (tmp_path / "vectors.ids.txt").write_text("\n".join(ids[:-1] + ["doc-elsewhere"]) + "\n")
    before = sorted(tmp_path.iterdir())
    refused = _cli(*build, "--vectors", str(path))
    assert refused.returncode == 2, refused.stderr
    assert _one_error_line(refused.stderr).startswith("error: --vectors")
    assert "vectors.npy: id 'doc-elsewhere' is not a document of the corpus" in refused.stderr
    assert sorted(tmp_path.iterdir()) == before  # no index, no work folder, no side file
    write_npy(tmp_path, ids, vectors)
    again = _cli(*build, "--vectors", str(path))
    assert again.returncode == 0, again.stderr
    assert list(out.glob("dense-*.npy"))


def test_an_empty_npy_is_refused_naming_it(
    served: tuple[list[str], Path, list[str]], tmp_path: Path
) -> None:
    build, out, ids = served
    path = tmp_path / "vectors.npy"
    path.write_bytes(b"")
    (tmp_path / "vectors.ids.txt").write_text("\n".join(ids) + "\n")
    refused = _cli(*build, "--vectors", str(path))
    assert refused.returncode == 2, refused.stderr
    assert _one_error_line(refused.stderr).startswith("error: --vectors")
    assert f"{path}: not a readable .npy matrix (an empty file)" in refused.stderr
    assert not out.exists()
