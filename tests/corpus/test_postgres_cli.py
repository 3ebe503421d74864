"""``pastcast corpus build/search/read`` against a PostgreSQL database given by URL."""

from __future__ import annotations

import json
from pathlib import Path

from corpus_synth import make_docs
from test_corpus_cli import DOCS
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.corpus.postgres import PostgresBackend

runner = CliRunner()


def _with_password(url: str) -> str:
    """The same server with a password in the URL (the test server trusts local users)."""
    return url.replace("postgres@", "postgres:s3cret-pw@", 1)


def test_build_search_read_through_a_database_url(tmp_path: Path, pg_url: str) -> None:
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    url = _with_password(pg_url)
    build = ["corpus", "build", f"jsonl:{src}", "--backend", "postgres", "--url", url]
    result = runner.invoke(app, [*build, "--schema", "cli_corpus"])
    assert result.exit_code == 0, result.output
    assert "indexed 2 documents into schema 'cli_corpus'" in result.output
    assert "s3cret-pw" not in result.output
    again = runner.invoke(app, [*build, "--schema", "cli_corpus"])
    assert again.exit_code == 2 and "overwrite" in again.output
    assert "s3cret-pw" not in again.output

    search = ["corpus", "search", url, "ceasefire", "--schema", "cli_corpus", "--json"]
    result = runner.invoke(app, [*search, "--as-of", "2024-03-05"])
    assert result.exit_code == 0, result.output
    assert [h["id"] for h in json.loads(result.output)] == ["early"]  # "late" is at 00:00
    result = runner.invoke(app, [*search, "--as-of", "2024-03-05T00:00:01Z"])
    assert [h["id"] for h in json.loads(result.output)] == ["late", "early"]

    read = ["corpus", "read", url, "late", "--schema", "cli_corpus", "--json"]
    result = runner.invoke(app, [*read, "--as-of", "2024-03-06"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["title"] == "Ceasefire agreed"
    result = runner.invoke(app, [*read, "--as-of", "2024-03-05"])
    assert result.exit_code == 2 and "no document 'late' is visible" in result.output

    # The embedded index over the same file ranks the same documents with the same scores.
    out = tmp_path / "index"
    assert runner.invoke(app, ["corpus", "build", f"jsonl:{src}", "--out", str(out)]).exit_code == 0
    embedded = runner.invoke(
        app, ["corpus", "search", str(out), "ceasefire", "--json", "--as-of", "2024-03-06"]
    )
    pg = runner.invoke(app, [*search, "--as-of", "2024-03-06"])
    assert json.loads(pg.output) == json.loads(embedded.output)


def test_database_errors_are_one_line_without_the_password(pg_url: str) -> None:
    url = _with_password(pg_url)
    PostgresBackend.build(make_docs(5), pg_url, schema="cli_plain", overwrite=True).close()
    cases = [
        (
            ["corpus", "search", url, "x", "--as-of", "2024-01-01", "--schema", "nothing_here"],
            "holds no corpus",
        ),
        (["corpus", "read", url, "x", "--as-of", "2024-01-01", "--schema", "Bad;"], "lowercase"),
        (
            [
                "corpus",
                "search",
                "postgresql://u:s3cret-pw@127.0.0.1:1/db?connect_timeout=2",
                "x",
                "--as-of",
                "2024-01-01",
            ],
            "cannot connect",
        ),
        (
            ["corpus", "search", url + "?schema=cli_plain", "x", "--as-of", "2024-01-01"]
            + ["--retrieval", "dense"],
            "holds no embeddings",
        ),
        (["corpus", "build", "jsonl:/nonexistent.jsonl", "--backend", "postgres"], "--url"),
        (["corpus", "build", "jsonl:/nonexistent.jsonl", "--url", url], "only with the postgres"),
    ]
    for args, message in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "s3cret-pw" not in result.output
        assert "Traceback" not in result.output
