"""`--json` on the commands that build something: one JSON value on stdout and nothing else
(progress bars and notes go to stderr)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.cli import app

runner = CliRunner()

DOCS = [
    {"id": "a", "timestamp": "2024-03-01T10:00:00Z", "title": "Talks", "text": "They met."},
    {"id": "b", "timestamp": "2024-03-02T10:00:00Z", "title": "Deal", "text": "They signed."},
]


def test_corpus_build_json(tmp_path: Path) -> None:
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in DOCS) + "{broken\n")
    out = tmp_path / "index"
    result = runner.invoke(
        app, ["corpus", "build", f"jsonl:{src}", "--out", str(out), "--lenient", "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["indexed"] == 2 and summary["into"] == str(out)
    # the report: which date each document carries (JSONL records none), kept beside the index
    assert summary["report"] == [
        f"dating provenance of the documents: {out / 'dating.json'}",
        "dated by unrecorded: 2 (100.0%)",
    ]
    [(reason, count)] = summary["skipped"].items()
    assert "invalid JSON" in reason and count == 1
    text = runner.invoke(
        app, ["corpus", "build", f"jsonl:{src}", "--out", str(out), "--lenient", "--overwrite"]
    )
    assert text.exit_code == 0, text.output
    assert text.stdout.startswith(f"indexed 2 documents into {out}\n")
    assert "\nskipped 1 malformed lines:\n" in text.stdout


def test_run_progress_goes_to_stderr(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    result = runner.invoke(
        app, ["run", "--agent", "uniform", "--max-events", "1", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(f"{out}: ") and len(result.stdout.splitlines()) == 1
    assert "forecast steps" in result.stderr


def test_json_output_writes_an_iterator_as_the_list_it_yields(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # a long list (a run audit's findings) is written an item at a time, never held
    from pastcast.cli._common import print_json

    rows = [{"x": float("nan"), "text": "two\nlines"}, [1, {"y": []}], "z"]
    value: dict[str, object] = {"a": 1, "rows": rows, "nested": {"k": [2, {"m": None}]}, "e": []}
    print_json(value)
    whole = capsys.readouterr().out
    print_json({**value, "rows": iter(rows), "e": iter([])})
    assert capsys.readouterr().out == whole
    assert json.loads(whole)["rows"][0] == {"x": None, "text": "two\nlines"}
