"""Document sources are registered components: opened by kind, options checked, extensible."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.cli import app
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sources import SourceRun, open_source, sources
from pastcast.errors import FieldError
from pastcast.records import Document
from pastcast.registry import Registry

runner = CliRunner()
DOC = {"id": "a", "timestamp": "2024-03-01T00:00:00Z", "title": "Launch", "text": "It flew."}


def test_built_in_sources() -> None:
    assert isinstance(sources, Registry) and sources.group == "pastcast.sources"
    assert {"jsonl", "wcep", "reddit", "parquet", "ccnews"} <= set(sources.names())
    assert "workdir" in sources.get("ccnews").parameters()


def test_open_source_checks_path_and_options(tmp_path: Path) -> None:
    src = tmp_path / "docs.jsonl"
    src.write_text(json.dumps(DOC) + "\n{broken\n")
    run = open_source("jsonl", src, lenient=True)
    assert [d.id for d in run.documents] == ["a"]
    assert sum(run.skipped().values()) == 1  # counted by reason
    with pytest.raises(FieldError, match=r"missing.jsonl: no such file"):
        open_source("jsonl", tmp_path / "missing.jsonl")
    with pytest.raises(FieldError, match="no such folder"):
        open_source("wcep", src)
    with pytest.raises(FieldError, match=r"source 'jsonl': .*'since'.*accepted arguments"):
        open_source("jsonl", src, since=None)
    with pytest.raises(FieldError, match=r"unknown source 'rss' \(known: ccnews"):
        open_source("rss", src)


def test_an_option_the_source_does_not_take_is_refused_by_the_cli(tmp_path: Path) -> None:
    src = tmp_path / "docs.jsonl"
    src.write_text(json.dumps(DOC) + "\n")
    out = tmp_path / "index"
    args = ["corpus", "build", f"jsonl:{src}", "--out", str(out), "--since", "2024-01-01"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "'since'" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not out.exists()


def _plain(path: Path, *, prefix: str = "p") -> Iterator[Document]:
    """Plain text files, one document each, dated by nothing but a fixed day."""
    for i, file in enumerate(sorted(path.iterdir())):
        yield Document(
            id=f"{prefix}{i}",
            timestamp=datetime(2024, 3, 1, tzinfo=UTC),
            title=file.stem,
            text=file.read_text(),
        )


@pytest.fixture
def plain_source() -> Iterator[None]:
    sources.add("test-plain", _plain)
    yield
    sources.remove("test-plain")


def test_a_registered_source_builds_an_index(tmp_path: Path, plain_source: None) -> None:
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "one.txt").write_text("the launch went well")
    run = open_source("test-plain", folder, prefix="q")
    assert isinstance(run, SourceRun) and [d.id for d in run.documents] == ["q0"]
    out = tmp_path / "index"
    result = runner.invoke(app, ["corpus", "build", f"test-plain:{folder}", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "indexed 1 documents" in result.output
    hits = EmbeddedIndex.open(out).search("launch", as_of=datetime(2024, 4, 1, tzinfo=UTC))
    assert [h.id for h in hits] == ["p0"]
