"""A truncated input file is reported as such: one line naming the file (and line) and saying it
is cut short, never a bare parse error, a generic "aborted" or an empty success."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.cli import app

runner = CliRunner()


def _docs(n: int) -> bytes:
    rows = [
        {"id": f"d{i}", "timestamp": "2024-03-05", "title": "t", "text": f"w {i}"} for i in range(n)
    ]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _error(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("error: ") and sum(x.startswith("error") for x in lines) == 1
    return lines[-1]


def test_a_jsonl_source_cut_mid_line(tmp_path: Path) -> None:
    data = _docs(10)
    cut = tmp_path / "docs.jsonl"
    end = len(data) // 2 + 7  # within a line
    cut.write_bytes(data[:end])
    line = data[:end].count(b"\n") + 1
    message = _error(["corpus", "build", f"jsonl:{cut}", "--out", str(tmp_path / "i")])
    assert f"{cut}:{line}:" in message and "cut short" in message


@pytest.mark.parametrize("kind", ["ccnews", "reddit"])
def test_a_compressed_dump_cut_short(tmp_path: Path, kind: str) -> None:
    packed = gzip.compress(_docs(2000))
    cut = tmp_path / "dump.jsonl.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    message = _error(["corpus", "build", f"{kind}:{cut}", "--out", str(tmp_path / "i")])
    assert str(cut) in message and "cut short" in message
