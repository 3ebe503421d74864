from __future__ import annotations

import random
from datetime import UTC, datetime

from pastcast.corpus.sources import CleanReport, RawPage, clean_pages
from pastcast.corpus.sources._clean import canonical_url, choose_timestamp, quality_problem

rng = random.Random(0)
VOCAB = [f"word{i}" for i in range(500)]


def body(n: int = 120) -> str:
    return " ".join(rng.choices(VOCAB, k=n))


def test_timestamp_cascade_records_the_rule() -> None:
    base = RawPage(id="a", text="x", crawl_time="2024-05-01T10:00:00Z")
    assert choose_timestamp(base) == (datetime(2024, 5, 1, 10, tzinfo=UTC), "crawl_time")
    published = base.model_copy(
        update={"date_published": "2024-04-01", "date_modified": "2024-04-03"}
    )
    # A bare date may be any time that day: the document counts from the end of the day.
    end_of_day = datetime(2024, 4, 1, 23, 59, 59, 999999, tzinfo=UTC)
    assert choose_timestamp(published) == (end_of_day, "date_published")
    placeholder = published.model_copy(update={"date_published": "1970-01-01T00:00:00Z"})
    assert choose_timestamp(placeholder) == (
        datetime(2024, 4, 3, 23, 59, 59, 999999, tzinfo=UTC),
        "date_modified",
    )
    garbage = placeholder.model_copy(update={"date_modified": "last week"})
    assert choose_timestamp(garbage)[1] == "crawl_time"  # type: ignore[index]
    far = RawPage(id="b", text="x", date_published="2099-01-01", crawl_time="2031-01-01")
    assert choose_timestamp(far) is None


def test_quality_filters() -> None:
    assert quality_problem("t", "too short") == "too_short"
    assert quality_problem("t", "Please enable JavaScript to view this page and continue on.") == (
        "boilerplate"
    )
    assert quality_problem("t", "spam " * 100) == "repetitive"
    assert quality_problem("t", "\n".join(["Share this", "a b c d e"] * 5 + [body(30)])) == (
        "repetitive"
    )
    assert quality_problem("t", body()) is None


def test_canonical_url() -> None:
    assert canonical_url("HTTP://WWW.Example.com/a/?utm_source=x&b=2&a=1#top") == (
        "https://example.com/a?a=1&b=2"
    )


def test_duplicates_keep_the_earliest_and_are_counted() -> None:
    text = body(1000)
    near = text.split()
    near[500] = "changed"  # one word differs: still a near duplicate
    pages = [
        RawPage(
            id="p1",
            url="https://x.org/a",
            title="Storm hits",
            text=text,
            date_published="2024-01-01T00:00:00Z",
        ),
        RawPage(
            id="p2",
            url="http://www.x.org/a/?utm_medium=y",
            title="Other",
            text=body(),
            date_published="2024-01-02T00:00:00Z",
        ),
        RawPage(id="p3", title="storm  HITS", text=body(), date_published="2024-01-05"),
        RawPage(id="p4", title="Near copy", text=" ".join(near), date_published="2024-01-06"),
        RawPage(id="p5", title="Storm hits", text=body(), date_published="2024-01-20"),
        RawPage(id="p6", title="Fresh", text=body(), date_published="2024-01-21"),
        RawPage(id="p7", title="Dateless", text=body(), date_published="0001-01-01"),
    ]
    report = CleanReport()
    kept = list(clean_pages(pages, report))
    assert [c.document.id for c in kept] == ["p1", "p5", "p6"]  # same title 15 days later: kept
    assert all(c.timestamp_rule == "date_published" for c in kept)
    assert report.removed == {
        "duplicate_url": 1,
        "duplicate_title": 1,
        "near_duplicate": 1,
        "no_usable_timestamp": 1,
    }
    assert report.kept == 3
