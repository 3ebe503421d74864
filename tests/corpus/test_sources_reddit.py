"""Reading Pushshift-shaped Reddit dumps: mapping, floors, malformed lines, compression."""

from __future__ import annotations

import gzip
import importlib.util
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pastcast.corpus.sources import RedditFilters, RedditReport, read_reddit
from pastcast.corpus.sources._dumps import ZstdMissing

T = 1_704_067_200  # 2024-01-01 00:00 UTC
WORDS = " ".join(f"word{i}" for i in range(25))


def submission(sid: str = "abc", **kw: Any) -> dict[str, Any]:
    rec = {
        "id": sid,
        "created_utc": T,
        "author": "alice",
        "subreddit": "worldnews",
        "score": 10,
        "num_comments": 5,
        "title": "Ceasefire talks resume",
        "selftext": WORDS,
        "permalink": f"/r/worldnews/comments/{sid}/x/",
    }
    return rec | kw


def comment(cid: str, parent: str = "t3_abc", **kw: Any) -> dict[str, Any]:
    rec = {
        "id": cid,
        "created_utc": str(T + 60),
        "author": "bob",
        "subreddit": "worldnews",
        "score": 7,
        "link_id": "t3_abc",
        "parent_id": parent,
        "body": WORDS + " &amp; more",
    }
    return rec | kw


def write(path: Path, records: list[Any]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    data = "\n".join(lines) + "\n"
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(data.encode()))
    else:
        path.write_text(data)
    return path


def test_maps_submissions_and_comments(tmp_path: Path) -> None:
    path = write(tmp_path / "dump.jsonl", [submission(), comment("c1"), comment("c2", "t1_c1")])
    report = RedditReport()
    docs = list(read_reddit(path, report=report))
    assert [d.id for d in docs] == ["reddit:abc", "reddit:c1", "reddit:c2"]
    sub, c1, c2 = docs
    assert sub.timestamp == datetime(2024, 1, 1, tzinfo=UTC)
    assert c1.timestamp == datetime(2024, 1, 1, 0, 1, tzinfo=UTC)  # string created_utc
    assert sub.title == "Ceasefire talks resume" and sub.parent_id is None
    assert c1.title == "Re: Ceasefire talks resume"
    assert c1.text.endswith("& more")  # HTML entities undone
    assert {d.thread_id for d in docs} == {"reddit:abc"}
    assert (c1.parent_id, c2.parent_id) == ("reddit:abc", "reddit:c1")
    assert sub.source == "reddit/r/worldnews"
    assert sub.url == "https://www.reddit.com/r/worldnews/comments/abc/x/"
    assert (sub.author, c1.author) == ("alice", "bob")
    assert (report.submissions, report.comments, report.lines_read) == (1, 2, 3)


def test_comment_before_its_submission_has_empty_title(tmp_path: Path) -> None:
    path = write(tmp_path / "dump.jsonl", [comment("c1"), submission()])
    docs = list(read_reddit(path))
    assert docs[0].title == ""


def test_folder_reads_submission_files_first(tmp_path: Path) -> None:
    write(tmp_path / "RC_2024-01.jsonl", [comment("c1")])
    write(tmp_path / "RS_2024-01.jsonl.gz", [submission()])
    docs = list(read_reddit(tmp_path))
    assert [d.id for d in docs] == ["reddit:abc", "reddit:c1"]
    assert docs[1].title == "Re: Ceasefire talks resume"


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        (submission(id=None), "no_stable_id"),
        (submission(author="[deleted]"), "deleted_author"),
        (comment("c9", body="[removed]"), "deleted_body"),
        (submission(selftext="[deleted]"), "deleted_body"),
        (comment("c9", author="AutoModerator"), "bot_author"),
        (submission(score=4), "score_below_5"),
        (comment("c9", score="4"), "score_below_5"),
        (submission(num_comments=2), "fewer_than_3_comments"),
        (comment("c9", body="ok https://example.com/a"), "comment_under_5_non_url_chars"),
        (
            comment("c9", body="see https://example.com/" + "a" * 80 + " " + WORDS[:40]),
            "comment_mostly_link",
        ),
        (submission(selftext="short text", title="A title"), "fewer_than_20_words"),
        (comment("c9", body="nineteen " * 19), "fewer_than_20_words"),
    ],
)
def test_each_floor_removes_with_its_reason(
    tmp_path: Path, record: dict[str, Any], reason: str
) -> None:
    path = write(tmp_path / "d.jsonl", [record])
    report = RedditReport()
    filters = RedditFilters(bots=frozenset({"automoderator"}))
    assert list(read_reddit(path, filters=filters, report=report)) == []
    assert dict(report.removed.counts) == {reason: 1}
    assert report.removed.first_at[reason] == f"{path}:1"


def test_floors_at_their_boundary_keep(tmp_path: Path) -> None:
    words20 = " ".join(["w"] * 20)
    records = [submission(score=5, num_comments=3, title="", selftext=words20)]
    records.append(comment("c1", score=5, body=words20))
    assert len(list(read_reddit(write(tmp_path / "d.jsonl", records)))) == 2


def test_no_floors_keeps_low_engagement(tmp_path: Path) -> None:
    path = write(tmp_path / "d.jsonl", [submission(score=0, num_comments=0, selftext="")])
    assert len(list(read_reddit(path, filters=RedditFilters.none()))) == 1


def test_malformed_lines_are_counted_never_silent(tmp_path: Path) -> None:
    records: list[Any] = [
        "{not json",
        "[1, 2]",
        {"id": "x1", "created_utc": T},
        submission("s1", created_utc="yesterday"),
        submission("s2", created_utc=None),
        comment("c1", link_id="abc"),
        comment("c2", parent_id="t2_zz"),
        submission("s3", score="lots"),
        submission("s4", score=None),
        submission("s5", selftext=5),
        submission("ok"),
        submission("ok"),
    ]
    report = RedditReport()
    docs = list(read_reddit(write(tmp_path / "d.jsonl", records), report=report))
    assert [d.id for d in docs] == ["reddit:ok"]
    assert report.malformed.total == 10
    assert report.removed.counts == {"duplicate_id": 1}
    reasons = set(report.malformed.counts)
    assert any(r.startswith("record: invalid JSON") for r in reasons)
    assert "record: neither a submission (title) nor a comment (body)" in reasons
    assert any(r.startswith("field created_utc") for r in reasons)
    assert any(r.startswith("field link_id") for r in reasons)
    assert any(r.startswith("field parent_id") for r in reasons)
    assert "field score: missing" in reasons
    lines = report.lines()
    assert lines[0] == "lines read 12; kept 1 submissions and 0 comments"
    assert len(lines) == 1 + len(report.removed.counts) + len(report.malformed.counts)


def test_zst_without_zstandard_is_a_clear_error(tmp_path: Path) -> None:
    if importlib.util.find_spec("zstandard") is not None:
        pytest.skip("zstandard is installed here")
    path = tmp_path / "RC_2024-01.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd")
    with pytest.raises(ZstdMissing, match="zstandard"):
        next(read_reddit(path))


def test_zst_dump_with_a_long_window_reads_like_the_plain_file(tmp_path: Path) -> None:
    zstandard = pytest.importorskip("zstandard")
    (tmp_path / "plain").mkdir()
    records = [submission(), comment("c1"), "{broken", comment("c2", "t1_c1")]
    plain = write(tmp_path / "plain" / "RC_2024-01.jsonl", records)
    # As the dumps are made: streamed (no content size), long-distance matching and a window
    # beyond the decoder's default limit.
    params = zstandard.ZstdCompressionParameters.from_level(19, window_log=28, enable_ldm=True)
    packed = tmp_path / "RC_2024-01.zst"
    with (
        packed.open("wb") as fh,
        zstandard.ZstdCompressor(compression_params=params).stream_writer(fh) as writer,
    ):
        writer.write(plain.read_bytes())
    assert zstandard.get_frame_parameters(packed.read_bytes()).window_size == 2**28
    with pytest.raises(zstandard.ZstdError, match="too much memory"):
        zstandard.ZstdDecompressor().stream_reader(packed.open("rb")).read()
    want_report, got_report = RedditReport(), RedditReport()
    want = list(read_reddit(plain, report=want_report))
    got = list(read_reddit(packed, report=got_report))
    assert got == want and len(got) == 3
    # the same counts and reasons, each located in its own file and line
    assert got_report.lines() == [
        line.replace(str(plain), str(packed)) for line in want_report.lines()
    ]
    assert f"{packed}:3" in got_report.lines()[1]


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        next(read_reddit(tmp_path / "nope.jsonl"))
