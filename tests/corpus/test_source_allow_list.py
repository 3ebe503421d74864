"""A source allow-list for corpus builds (Hindcast's fixed set of communities): documents from
other sources are left out and counted, names that matched nothing are reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sources import allow_sources, open_source, read_allow_list
from pastcast.cutoff import parse_cutoff

runner = CliRunner()
LATER = parse_cutoff("2025-01-01")
T = 1_704_067_200  # 2024-01-01 00:00 UTC
WORDS = " ".join(f"word{i}" for i in range(25))


def submission(sid: str, subreddit: str) -> dict[str, Any]:
    return {"id": sid, "created_utc": T, "author": "al", "subreddit": subreddit, "score": 9,
            "num_comments": 4, "title": "Talks resume", "selftext": WORDS}  # fmt: skip


def comment(cid: str, link: str, subreddit: str) -> dict[str, Any]:
    return {"id": cid, "created_utc": T + 5, "author": "bo", "subreddit": subreddit, "score": 9,
            "link_id": link, "parent_id": link, "body": WORDS}  # fmt: skip


def _dump(tmp_path: Path) -> Path:
    records = [
        submission("a1", "worldnews"),
        comment("c1", "t3_a1", "worldnews"),
        submission("b1", "nba"),
        submission("p1", "Politics"),
    ]
    path = tmp_path / "RS_2024-01.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_only_allowed_sources_are_kept_and_the_rest_counted(tmp_path: Path) -> None:
    run = allow_sources(open_source("reddit", _dump(tmp_path)), ["worldnews", "r/politics", "nfl"])
    kept = list(run.documents)
    assert sorted(d.source for d in kept) == [
        "reddit/r/Politics",
        "reddit/r/worldnews",
        "reddit/r/worldnews",
    ]
    lines = run.report_lines()
    assert any("kept 3 documents, removed 1 from other sources" in x for x in lines)
    assert any("no document from: nfl" in x for x in lines)


def test_exact_sources_and_domains_match(tmp_path: Path) -> None:
    docs = tmp_path / "d.jsonl"
    rows = [
        {"id": "1", "timestamp": "2024-01-02", "title": "t", "text": "a", "source": "reuters.com"},
        {
            "id": "2",
            "timestamp": "2024-01-02",
            "title": "t",
            "text": "b",
            "source": "notreuters.com",
        },
        {"id": "3", "timestamp": "2024-01-02", "title": "t", "text": "c", "source": "wcep:Sports"},
    ]
    docs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    run = allow_sources(open_source("jsonl", docs), ["Reuters.com", "sports"])
    assert [d.id for d in run.documents] == ["1", "3"]


def test_allow_list_files_skip_comments_and_blanks(tmp_path: Path) -> None:
    path = tmp_path / "subs.txt"
    path.write_text("# Hindcast's communities\nworldnews\n\n  r/politics  # US politics\n")
    assert read_allow_list(path) == ("worldnews", "r/politics")
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(ValueError, match=r"empty\.txt: no source names"):
        read_allow_list(tmp_path / "empty.txt")


def test_cli_build_with_an_allow_list(tmp_path: Path) -> None:
    subs = tmp_path / "subs.txt"
    subs.write_text("worldnews\n")
    out = tmp_path / "idx"
    res = runner.invoke(
        app,
        ["corpus", "build", f"reddit:{_dump(tmp_path)}", "--out", str(out)]
        + ["--allow-sources", str(subs), "--allow-source", "nba", "--json"],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["indexed"] == 3
    assert any("removed 1 from other sources" in line for line in summary["report"])
    index = EmbeddedIndex.open(out)
    assert index.count_before(LATER) == 3
    bad = runner.invoke(
        app,
        ["corpus", "build", f"reddit:{_dump(tmp_path)}", "--out", str(tmp_path / "x")]
        + ["--allow-sources", str(tmp_path / "missing.txt")],
    )
    assert bad.exit_code == 2 and bad.stderr.startswith("error: --allow-sources")
    assert bad.stderr.count("\n") == 1 and not (tmp_path / "x").exists()
