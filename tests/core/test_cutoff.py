from datetime import UTC, date, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pastcast.cutoff import (
    DayConvention,
    is_visible,
    last_complete_day,
    parse_cutoff,
    parse_timestamp,
    step_precedes_resolution,
    to_micros,
    visible_count,
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


@given(
    stamps=st.lists(st.datetimes(timezones=st.just(UTC)), max_size=40),
    cutoff=st.datetimes(timezones=st.just(UTC)),
)
def test_the_vectorised_rule_counts_what_is_visible_counts(
    stamps: list[datetime], cutoff: datetime
) -> None:
    micros = np.array(sorted(to_micros(s) for s in stamps), dtype=np.int64)
    assert visible_count(micros, cutoff) == sum(is_visible(s, cutoff) for s in stamps)


def test_a_step_must_precede_the_resolution_strictly() -> None:
    t = datetime(2024, 3, 5, 12, tzinfo=UTC)
    assert step_precedes_resolution(t - timedelta(microseconds=1), t)
    assert not step_precedes_resolution(t, t)
