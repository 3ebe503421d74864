"""`pastcast corpus build` from Reddit dumps, Parquet article tables and CC-News records."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.corpus.embedded import EmbeddedIndex

runner = CliRunner()
T = 1_714_521_600  # 2024-05-01 00:00 UTC
WORDS = " ".join(f"w{i}" for i in range(25))


def build(source: str, out: Path) -> str:
    result = runner.invoke(app, ["corpus", "build", source, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return result.output


def test_reddit(tmp_path: Path) -> None:
    sub = {"id": "s1", "created_utc": T, "author": "al", "subreddit": "news", "score": 9,
           "num_comments": 4, "title": "Launch day", "selftext": WORDS}  # fmt: skip
    com = {"id": "c1", "created_utc": T + 5, "author": "bo", "subreddit": "news", "score": 9,
           "link_id": "t3_s1", "parent_id": "t3_s1", "body": WORDS}  # fmt: skip
    low = com | {"id": "c2", "score": 1}
    dump = tmp_path / "RC_2024-05.jsonl"
    dump.write_text("\n".join([json.dumps(sub), json.dumps(com), json.dumps(low), "{oops"]))
    output = build(f"reddit:{dump}", tmp_path / "idx")
    assert "indexed 2 documents" in output
    assert "kept 1 submissions and 1 comments" in output
    assert "removed (score_below_5): 1" in output
    assert "malformed, skipped (record: invalid JSON" in output
    index = EmbeddedIndex.open(tmp_path / "idx")
    assert index.has_threads()
    from datetime import UTC, datetime

    listed = index.thread("reddit:s1", as_of=datetime(2024, 5, 2, tzinfo=UTC))
    assert [d.id for d in listed] == ["reddit:s1", "reddit:c1"]


def test_reddit_zst_without_zstandard(tmp_path: Path) -> None:
    if importlib.util.find_spec("zstandard") is not None:
        pytest.skip("zstandard is installed here")
    dump = tmp_path / "RS_2024-05.zst"
    dump.write_bytes(b"\x28\xb5\x2f\xfd")
    result = runner.invoke(app, ["corpus", "build", f"reddit:{dump}", "--out", str(tmp_path / "i")])
    assert result.exit_code == 2 and "zstandard" in result.output
    assert not (tmp_path / "i").exists()


def test_parquet(tmp_path: Path) -> None:
    rows = [
        {"article_id": "a1", "title": "T1", "text": "Body one.", "url": "https://x.org/1",
         "published_date": "2025-03-01T10:00:00Z", "lang": "en"},
        {"article_id": "a2", "title": "T2", "text": "Body two.", "url": "https://x.org/2",
         "published_date": "not a date", "lang": "en"},
    ]  # fmt: skip
    table = tmp_path / "articles.parquet"
    pq.write_table(pa.Table.from_pylist(rows), table)
    output = build(f"parquet:{table}", tmp_path / "idx")
    assert "indexed 1 documents" in output and "rows read 2, kept 1" in output
    reason = "column published_date: not an ISO 8601 date or time"
    assert f"rows skipped ({reason}): 1 (first at {table}: row 2)" in output
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.Table.from_pylist([{"title": "x"}]), bad)
    result = runner.invoke(app, ["corpus", "build", f"parquet:{bad}", "--out", str(tmp_path / "b")])
    assert result.exit_code == 2 and "missing required column 'text'" in result.output


def test_ccnews(tmp_path: Path) -> None:
    text = " ".join(f"term{i}" for i in range(40))
    recs = [
        {"url": "https://n.org/a", "title": "A", "maintext": text, "date_publish": "2024-05-02"},
        {"url": "https://n.org/a", "title": "B", "maintext": text, "date_download": "2024-05-03"},
        {"url": "https://n.org/c", "title": "C", "maintext": "short", "date_modify": "2024-05-02"},
    ]
    src = tmp_path / "cc.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in recs))
    out = tmp_path / "idx"
    output = build(f"ccnews:{src}", out)
    assert "indexed 1 documents" in output
    assert "removed (duplicate_url): 1" in output and "removed (too_short): 1" in output
    assert "dated by date_published: 1" in output
    rules = (out / "timestamp_rules.tsv").read_text().splitlines()
    assert len(rules) == 1 and rules[0].endswith("\tdate_published")
    assert not list(tmp_path.glob(".*.tsv"))


def test_unknown_kind_lists_the_new_ones(tmp_path: Path) -> None:
    result = runner.invoke(app, ["corpus", "build", "rss:x", "--out", str(tmp_path / "i")])
    assert result.exit_code == 2
    assert "reddit" in result.output and "parquet" in result.output and "ccnews" in result.output
