"""Nasty inputs for the fuzz suite: files that are truncated, not UTF-8, nested too deeply, full of
NUL bytes or huge numbers, and folders that only look like pastcast's; plus valid inputs of
every kind (built once, small) for the values a case does not replace. A plugin's fuzz suite adds
its own to the workspace (the arena's rounds and ledger: arena/tests/test_arena_cli_fuzz.py)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from _tiny import tiny_dataset
from pastcast.cli import app
from pastcast.dataset import save_dataset

FB_FIXTURE = Path(__file__).parents[1] / "markets" / "fixtures" / "fb"


def _docs(n: int, stamp: str = "2024-03-05") -> str:
    rows = [
        {"id": f"d{i}", "timestamp": stamp, "title": f"title {i}", "text": f"some words {i}"}
        for i in range(n)
    ]
    return "".join(json.dumps(r) + "\n" for r in rows)


@dataclass(frozen=True)
class Workspace:
    """Valid inputs (``good``) and nasty files and folders (``bad``), by name."""

    root: Path
    good: dict[str, Path]
    bad: dict[str, Path]


def truncate(path: Path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: max(1, int(len(data) * keep))])


def build_workspace(root: Path) -> Workspace:
    root.mkdir(parents=True, exist_ok=True)
    runner = CliRunner()
    good: dict[str, Path] = {}
    bad: dict[str, Path] = {}

    good["docs"] = root / "docs.jsonl"
    good["docs"].write_text(_docs(4), encoding="utf-8")
    good["index"] = root / "index"
    assert (
        runner.invoke(
            app, ["corpus", "build", f"jsonl:{good['docs']}", "--out", str(good["index"])]
        ).exit_code
        == 0
    )

    tiny = tiny_dataset()
    good["dataset"] = root / "dataset"
    save_dataset(replace(tiny, splits={e.id: "eval" for e in tiny.events}), good["dataset"])

    good["run_log"] = root / "runs" / "run.jsonl"
    result = runner.invoke(
        app,
        ["run", "-a", "uniform", "--dataset", str(good["dataset"]), "--out", str(good["run_log"])],
    )
    assert result.exit_code == 0, result.output

    good["fb"] = root / "fb"
    shutil.copytree(FB_FIXTURE, good["fb"])
    derived = good["fb"] / "derived"
    (derived / "questions.fixture.jsonl").rename(derived / "markets_resolved.jsonl")
    (derived / "values.fixture.csv").rename(derived / "daily_values.csv")

    # -- nasty files ---------------------------------------------------------------------------
    nasty = root / "nasty"
    nasty.mkdir()
    files: dict[str, bytes] = {
        "empty": b"",
        "nul": b"\x00" * 4096,
        "latin1": b'{"id": "a", "timestamp": "2024-03-05", "title": "caf\xe9", "text": "x y"}\n',
        "deep": b"[" * 200_000,
        "deep_object": b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n",
        "huge_int": b'{"id": "a", "timestamp": 1' + b"0" * 5000 + b', "text": "x"}\n',
        "calendar_edges": _docs(1, "0001-01-01").encode()
        + _docs(1, "9999-12-31").encode().replace(b'"d0"', b'"d1"')
        + _docs(1, "99999-01-01").encode().replace(b'"d0"', b'"d2"'),
        "one_long_line": b'{"id": "a", "title": "' + b"x" * 3_000_000 + b'"}\n',
        "binary": bytes(range(256)) * 64,
    }
    for name, data in files.items():
        bad[name] = nasty / f"{name}.jsonl"
        bad[name].write_bytes(data)
    # Compressed and columnar inputs cut short, as an interrupted download leaves them.
    table = nasty / "articles.parquet"
    pq.write_table(
        pa.table(
            {
                "title": ["t"] * 200,
                "text": [f"some text {i}" for i in range(200)],
                "article_id": [str(i) for i in range(200)],
                "url": ["https://a.example/x"] * 200,
                "published_date": ["2024-03-05"] * 200,
            }
        ),
        table,
    )
    truncate(table)
    bad["truncated_parquet"] = table
    bad["truncated_gz"] = nasty / "docs.jsonl.gz"
    bad["truncated_gz"].write_bytes(gzip.compress(_docs(500).encode()))
    truncate(bad["truncated_gz"])
    bad["truncated_jsonl"] = nasty / "docs-cut.jsonl"
    bad["truncated_jsonl"].write_text(_docs(10), encoding="utf-8")
    truncate(bad["truncated_jsonl"], 0.55)
    bad["truncated_log"] = nasty / "run.jsonl"
    shutil.copy(good["run_log"], bad["truncated_log"])
    shutil.copy(good["run_log"].with_suffix(".header.json"), nasty / "run.header.json")
    truncate(bad["truncated_log"], 0.6)
    bad["empty_dir"] = nasty / "empty_dir"
    bad["empty_dir"].mkdir()
    bad["fifo"] = nasty / "pipe.jsonl"  # opening it for reading waits for a writer forever
    os.mkfifo(bad["fifo"])

    # Folders that look like pastcast's: a dataset with a truncated table, one whose manifest is
    # nested too deeply, an index with a truncated array and one with a manifest not UTF-8.
    bad["dataset_truncated_parquet"] = nasty / "dataset_truncated"
    shutil.copytree(good["dataset"], bad["dataset_truncated_parquet"])
    truncate(next(bad["dataset_truncated_parquet"].glob("events*.parquet")))
    bad["dataset_deep_manifest"] = nasty / "dataset_deep"
    shutil.copytree(good["dataset"], bad["dataset_deep_manifest"])
    (bad["dataset_deep_manifest"] / "manifest.json").write_bytes(b"[" * 200_000)
    bad["index_truncated_array"] = nasty / "index_truncated"
    shutil.copytree(good["index"], bad["index_truncated_array"])
    truncate(next(bad["index_truncated_array"].rglob("*.npy")))
    bad["index_latin1_manifest"] = nasty / "index_latin1"
    shutil.copytree(good["index"], bad["index_latin1_manifest"])
    (bad["index_latin1_manifest"] / "manifest.json").write_bytes(b'{"format": "caf\xe9"}')
    bad["fb_truncated"] = nasty / "fb_truncated"
    shutil.copytree(good["fb"], bad["fb_truncated"])
    truncate(bad["fb_truncated"] / "derived" / "markets_resolved.jsonl", 0.3)
    return Workspace(root, good, bad)
