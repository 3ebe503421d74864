"""CC-News style records (JSON lines with metadata or raw HTML, and WARC) through the cleaning
cascade."""

from __future__ import annotations

import gzip
import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pastcast.corpus.sources import CCNewsReport, read_ccnews
from pastcast.corpus.sources._htmlmeta import parse_html


def body(n: int) -> str:
    topics = ["harbour", "council", "budget", "election", "storm", "rail", "vaccine", "tariff"]
    return " ".join(f"{topics[(n + i) % 8]}{n}x{i} report" for i in range(30))


def html_page(
    published: str | None = None, modified: str | None = None, ld: Any = None, n: int = 99
) -> str:
    metas = ""
    if published:
        metas += f'<meta property="article:published_time" content="{published}">'
    if modified:
        metas += f'<meta itemprop="dateModified" content="{modified}">'
    if ld is not None:
        metas += f'<script type="application/ld+json">{json.dumps(ld)}</script>'
    return (
        f"<html><head><title>Page title {n}</title>{metas}<script>var x = 1;</script></head>"
        f"<body><nav>Home | News</nav><p>{body(n)}</p><p>Second &amp; last paragraph.</p>"
        "</body></html>"
    )


def test_html_metadata_cascade() -> None:
    ld = {"@graph": [{"@type": "WebPage"}, {"@type": "NewsArticle", "datePublished": "2024-05-02"}]}
    meta = parse_html(html_page("2024-05-01T10:00:00Z", "2024-05-03T00:00:00Z", ld))
    assert meta.published == "2024-05-02"  # JSON-LD first
    assert meta.modified == "2024-05-03T00:00:00Z"
    assert meta.title == "Page title 99"
    assert meta.text.endswith("Second & last paragraph.") and "Home" not in meta.text
    assert "var x" not in meta.text
    plain = parse_html(html_page("2024-05-01T10:00:00Z"))
    assert plain.published == "2024-05-01T10:00:00Z" and plain.modified is None
    broken = parse_html('<script type="application/ld+json">{oops</script><p>x</p>')
    assert broken.published is None and broken.text == "x"


def record(n: int, **kw: Any) -> dict[str, Any]:
    rec = {
        "url": f"https://news.example.org/story/{n}",
        "title": f"Story number {n}",
        "maintext": body(n),
        "date_publish": None,
        "date_modify": None,
        "date_download": "2024-05-10 06:00:00",
    }
    return rec | kw


def write(path: Path, records: list[Any]) -> Path:
    data = "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)
    if path.name.endswith(".gz"):
        path.write_bytes(gzip.compress(data.encode()))
    else:
        path.write_text(data)
    return path


def test_cascade_filters_dedup_and_report(tmp_path: Path) -> None:
    records: list[Any] = [
        record(1, date_publish="2024-05-03 12:00:00"),
        record(2, date_publish="1970-01-01 00:00:00", date_modify="2024-05-04T00:00:00+02:00"),
        record(3, date_publish="2099-01-01"),  # out of range: crawl time used
        record(4, maintext=None, html=html_page("2024-05-02T08:00:00Z")),
        record(5, date_publish="2024-05-01"),  # a bare date counts from the end of its day
        record(6, maintext="Too short."),
        record(7, url="https://www.news.example.org/story/1/?utm_source=x"),  # same page as 1
        record(8, title="Story number 1", date_publish="2024-05-05 00:00:00"),  # title repeat
        record(9, maintext=body(1)),  # near-verbatim body of 1
        record(10, date_download=None),
        "{broken",
        record(11, title=7),
    ]
    path = write(tmp_path / "cc.jsonl.gz", records)
    report = CCNewsReport()
    rules = io.StringIO()
    docs = list(read_ccnews(path, report=report, rules_out=rules))
    ids = {d.url: d for d in docs}
    assert [d.url for d in docs] == [f"https://news.example.org/story/{n}" for n in (5, 4, 1, 2, 3)]
    assert ids["https://news.example.org/story/5"].timestamp == datetime(
        2024, 5, 1, 23, 59, 59, 999999, tzinfo=UTC
    )
    assert ids["https://news.example.org/story/2"].timestamp == datetime(2024, 5, 3, 22, tzinfo=UTC)
    assert ids["https://news.example.org/story/3"].timestamp == datetime(2024, 5, 10, 6, tzinfo=UTC)
    assert ids["https://news.example.org/story/4"].title == "Story number 4"
    assert ids["https://news.example.org/story/4"].text.startswith(body(99)[:40])
    assert report.clean.removed == {
        "too_short": 1,
        "duplicate_url": 1,
        "duplicate_title": 1,
        "near_duplicate": 1,
        "no_usable_timestamp": 1,
    }
    assert report.clean.timestamp_rule == {"date_published": 3, "date_modified": 1, "crawl_time": 1}
    assert report.malformed.total == 2 and report.records_read == 12
    lines = dict(line.split("\t") for line in rules.getvalue().splitlines())
    assert list(lines) == [d.id for d in docs]
    assert lines[ids["https://news.example.org/story/3"].id] == "crawl_time"
    assert lines[ids["https://news.example.org/story/2"].id] == "date_modified"
    assert any(line.startswith("removed (near_duplicate): 1") for line in report.lines())


def test_warc_pages(tmp_path: Path) -> None:
    warcio = pytest.importorskip("warcio")
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    path = tmp_path / "CC-NEWS-1.warc.gz"
    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        pages = [
            ("https://a.example.com/1", html_page("2024-06-01T09:00:00Z"), "text/html"),
            (
                "https://a.example.com/2",
                html_page(ld={"dateModified": "2024-06-02T09:00:00Z"}, n=7),
                "text/html; charset=utf-8",
            ),
            ("https://a.example.com/img", "GIF89a", "image/gif"),
        ]
        for url, page, ctype in pages:
            headers = StatusAndHeaders("200 OK", [("Content-Type", ctype)], protocol="HTTP/1.1")
            rec = writer.create_warc_record(
                url,
                "response",
                payload=io.BytesIO(page.encode()),
                http_headers=headers,
                warc_headers_dict={"WARC-Date": "2024-06-05T00:00:00Z"},
            )
            writer.write_record(rec)
    assert warcio is not None
    report = CCNewsReport()
    docs = list(read_ccnews(path, report=report))
    assert [d.url for d in docs] == ["https://a.example.com/1", "https://a.example.com/2"]
    assert docs[0].timestamp == datetime(2024, 6, 1, 9, tzinfo=UTC)
    assert docs[1].timestamp == datetime(2024, 6, 2, 9, tzinfo=UTC)
    assert report.records_read == 2
    assert report.clean.timestamp_rule == {"date_published": 1, "date_modified": 1}


def test_missing_source(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        next(read_ccnews(tmp_path / "none.jsonl"))
