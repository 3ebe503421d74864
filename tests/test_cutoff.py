from datetime import UTC, date, datetime

import pytest

from pastcast.cutoff import (
    DayConvention,
    is_visible,
    last_complete_day,
    parse_cutoff,
    parse_timestamp,
)


def test_date_means_start_of_day_by_default() -> None:
    assert parse_cutoff("2024-03-05") == datetime(2024, 3, 5, tzinfo=UTC)
    assert parse_cutoff(date(2024, 3, 5)) == datetime(2024, 3, 5, tzinfo=UTC)


def test_inclusive_convention_is_explicit() -> None:
    c = parse_cutoff("2024-03-05", DayConvention.INCLUSIVE)
    assert c == datetime(2024, 3, 6, tzinfo=UTC)
    assert is_visible(datetime(2024, 3, 5, 23, 59, 59, tzinfo=UTC), c)


def test_visibility_is_strict() -> None:
    c = datetime(2024, 3, 5, tzinfo=UTC)
    assert not is_visible(c, c)
    assert is_visible(datetime(2024, 3, 4, 23, 59, 59, 999999, tzinfo=UTC), c)
    assert not is_visible(datetime(2024, 3, 5, 0, 0, 0, 1, tzinfo=UTC), c)


def test_naive_timestamps_are_utc_and_offsets_are_converted() -> None:
    assert parse_timestamp("2024-03-05T10:00:00") == datetime(2024, 3, 5, 10, tzinfo=UTC)
    assert parse_timestamp("2024-03-05T10:00:00+02:00") == datetime(2024, 3, 5, 8, tzinfo=UTC)
    assert parse_timestamp("2024-03-05T10:00:00Z") == datetime(2024, 3, 5, 10, tzinfo=UTC)


def test_last_complete_day() -> None:
    assert last_complete_day(datetime(2024, 3, 5, tzinfo=UTC)) == date(2024, 3, 4)
    assert last_complete_day(datetime(2024, 3, 5, 12, tzinfo=UTC)) == date(2024, 3, 4)


def test_bad_timestamp() -> None:
    with pytest.raises(ValueError, match="ISO 8601"):
        parse_timestamp("yesterday")


def test_a_bare_publication_date_counts_from_the_end_of_its_day() -> None:
    from pastcast.cutoff import parse_publication_time

    ts = parse_publication_time("2024-03-05")
    assert not is_visible(ts, datetime(2024, 3, 5, 12, tzinfo=UTC))
    assert is_visible(ts, datetime(2024, 3, 6, tzinfo=UTC))
    assert parse_publication_time("2024-03-05T10:00:00Z") == datetime(2024, 3, 5, 10, tzinfo=UTC)
    with pytest.raises(ValueError):
        parse_publication_time("2024-13-05")
