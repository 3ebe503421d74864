"""Dates: every accepted spelling of a bare date follows the same rule (a publication dated only by
its day is public at the end of that day; a cutoff date means its start), and dates at the ends
of the calendar give a one-line ValueError, never an OverflowError."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pastcast.corpus.sources import RawPage, read_article_table, read_jsonl_documents
from pastcast.corpus.sources._clean import choose_timestamp
from pastcast.cutoff import (
    DayConvention,
    end_of_day,
    parse_cutoff,
    parse_publication_time,
    parse_timestamp,
)

DAY = date(2024, 3, 5)
END = datetime.combine(DAY, time.max, tzinfo=UTC)
START = datetime.combine(DAY, time(0), tzinfo=UTC)
# Every spelling of 2024-03-05 that the parsers accept (ISO 8601 extended, basic, week dates).
SPELLINGS = ("2024-03-05", "20240305", "2024-W10-2", "2024W102", " 2024-03-05 ", "2024-03-05Z")


@pytest.mark.parametrize("text", SPELLINGS)
def test_every_bare_date_spelling_is_published_at_the_end_of_its_day(text: str) -> None:
    assert parse_publication_time(text) == END


@pytest.mark.parametrize("text", SPELLINGS)
def test_every_bare_date_spelling_is_a_cutoff_at_its_start(text: str) -> None:
    assert parse_cutoff(text) == START
    assert parse_timestamp(text) == START
    assert parse_cutoff(text, DayConvention.INCLUSIVE) == START + timedelta(days=1)


def test_an_offset_after_a_bare_date_is_refused() -> None:
    # Python would read "2024-03-05-05:00" as 05:00 on that day, which nobody means.
    for text in ("2024-03-05-05:00", "2024-03-05+02:00", "2024-03-05x12:00"):
        for call in (parse_cutoff, parse_publication_time, parse_timestamp):
            with pytest.raises(ValueError, match="expected T"):
                call(text)


def test_times_are_taken_as_given() -> None:
    assert parse_publication_time("20240305T120000Z") == datetime(2024, 3, 5, 12, tzinfo=UTC)
    assert parse_publication_time("2024-03-05T00:00:00") == START


def test_the_ends_of_the_calendar() -> None:
    assert parse_publication_time("9999-12-31") == datetime.max.replace(tzinfo=UTC)
    assert end_of_day(date.max) == datetime.max.replace(tzinfo=UTC)
    assert parse_cutoff("0001-01-01") == datetime.min.replace(tzinfo=UTC)
    assert parse_cutoff("9999-12-31") == datetime(9999, 12, 31, tzinfo=UTC)


@pytest.mark.parametrize(
    ("call", "text"),
    [
        (parse_cutoff, "99999-01-01"),
        (parse_publication_time, "99999-01-01"),
        (parse_timestamp, "+10000-01-01"),
        (parse_timestamp, "0001-01-01T00:00:00+01:00"),
        (parse_publication_time, "0001-01-01T00:00:00+01:00"),
        (parse_cutoff, "9999-12-31T23:59:59-01:00"),
        (parse_publication_time, "9999-12-31-01:00"),
        (parse_publication_time, "0001-01-01+01:00"),
        (parse_cutoff, "0001-01-01+01:00"),
        (parse_cutoff, "2024-02-30"),
        (parse_cutoff, ""),
        (parse_publication_time, "   "),
        (parse_cutoff, "\x00"),
        (parse_cutoff, "9" * 5000),
    ],
)
def test_unrepresentable_dates_are_one_line_value_errors(call: object, text: str) -> None:
    with pytest.raises(ValueError) as err:
        call(text)  # type: ignore[operator]
    assert "\n" not in str(err.value)
    assert len(str(err.value)) < 300


def test_the_day_after_the_last_day_is_no_cutoff() -> None:
    with pytest.raises(ValueError, match="9999-12-31"):
        parse_cutoff("9999-12-31", DayConvention.INCLUSIVE)
    with pytest.raises(ValueError, match="9999-12-31"):
        parse_cutoff(date.max, DayConvention.INCLUSIVE)


@given(st.text(max_size=40))
def test_date_parsers_raise_only_value_errors(text: str) -> None:
    for call in (parse_cutoff, parse_publication_time, parse_timestamp):
        try:
            value = call(text)
        except ValueError:
            continue
        assert value.tzinfo is not None


@given(st.dates())
def test_any_date_in_basic_spelling_follows_the_end_of_day_rule(day: date) -> None:
    basic = day.strftime("%Y%m%d") if day.year >= 1000 else f"{day.year:04d}{day:%m%d}"
    assert parse_publication_time(basic) == datetime.combine(day, time.max, tzinfo=UTC)
    assert parse_publication_time(day.isoformat()) == datetime.combine(day, time.max, tzinfo=UTC)


def test_readers_place_basic_dates_at_the_end_of_the_day(tmp_path: Path) -> None:
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text(
        json.dumps({"id": "a", "timestamp": "20240305", "title": "t", "text": "x y z"}) + "\n",
        encoding="utf-8",
    )
    assert [d.timestamp for d in read_jsonl_documents(jsonl)] == [END]

    table = tmp_path / "articles.parquet"
    pq.write_table(
        pa.table(
            {
                "title": ["t", "u"],
                "text": ["some text", "more text"],
                "article_id": ["1", "2"],
                "url": ["https://a.example/x", "https://b.example/y"],
                "published_date": ["20240305", "2024-W10-2"],
            }
        ),
        table,
    )
    assert [d.timestamp for d in read_article_table(table)] == [END, END]

    page = RawPage(id="p", url=None, title="t", text="x", date_published="20240305")
    assert choose_timestamp(page) == (END, "date_published")
