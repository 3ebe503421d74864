"""Cutoff semantics, defined once for the whole package.

A cutoff is a timezone-aware UTC instant. A document (or price, or resolution) is visible at a
cutoff iff its timestamp is *strictly before* the cutoff. A calendar date given as a cutoff means
00:00:00 UTC of that date: the agent forecasts at the start of the day, as Hindcast's strict
``created_at < t0``. Forecast-Dojo's day-inclusive convention (everything dated on the day itself
is visible) is available as the explicit ``DayConvention.INCLUSIVE`` and is never the default.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy loads on first use: the CLI's help and the package start without it
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DayConvention",
    "age_days",
    "as_utc",
    "cutoff_for_day",
    "end_of_day",
    "is_naive_timestamp",
    "is_visible",
    "last_complete_day",
    "parse_cutoff",
    "parse_publication_time",
    "parse_timestamp",
    "step_precedes_resolution",
    "to_micros",
    "visible_count",
]


class DayConvention(StrEnum):
    """How a calendar date is turned into a cutoff instant."""

    START_OF_DAY = "start_of_day"
    """Date d means d 00:00:00 UTC: nothing dated on d is visible (the default)."""

    INCLUSIVE = "inclusive"
    """Date d means (d+1) 00:00:00 UTC: everything dated on d is visible (Forecast-Dojo)."""


def as_utc(value: datetime) -> datetime:
    """Return ``value`` as an aware UTC datetime; naive datetimes are taken to be UTC."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def cutoff_for_day(day: date, convention: DayConvention = DayConvention.START_OF_DAY) -> datetime:
    """The cutoff instant that a calendar day stands for under ``convention``."""
    start = datetime.combine(day, time(0, 0), tzinfo=UTC)
    if convention is DayConvention.INCLUSIVE:
        if day == date.max:
            raise ValueError(f"the day after {day.isoformat()}: {_BEYOND}")
        return start + timedelta(days=1)
    return start


_BEYOND = "beyond the calendar (0001-01-01 to 9999-12-31 UTC)"
_SEPARATORS = ("T", "t", " ")


def _shown(text: str) -> str:
    """``text`` for an error message: quoted, and cut when long."""
    return repr(text if len(text) <= 40 else text[:40] + "...")


def _date(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _parse(text: str) -> tuple[datetime, bool]:
    """An ISO 8601 date or instant and whether it was a bare date: one without a time of day,
    in any spelling (``YYYY-MM-DD``, ``YYYYMMDD``, week dates; ``Z`` after it changes nothing).
    A bare date comes back as its naive midnight (UTC). The date and the time must be separated
    by ``T`` or a space: Python reads ``2024-03-05-05:00`` as 05:00, not as a zone."""
    raw = text.strip()
    if not raw:
        raise ValueError("empty timestamp")
    zulu = raw.endswith(("Z", "z"))
    body = raw[:-1] if zulu else raw
    day = _date(body) if len(body) <= 10 else None  # no date spelling is longer
    if day is not None:
        return datetime.combine(day, time(0, 0)), True
    try:
        value = datetime.fromisoformat(raw[:-1] + "+00:00" if zulu else raw)
    except ValueError:
        raise ValueError(f"not an ISO 8601 date or timestamp: {_shown(text)}") from None
    if not any(_date(raw[:k]) and raw[k : k + 1] in _SEPARATORS for k in (10, 8, 7)):
        raise ValueError(f"{_shown(text)}: expected T between the date and the time")
    return value, False


def parse_timestamp(text: str) -> datetime:
    """Parse an ISO 8601 timestamp (``Z`` accepted); a bare date is 00:00 UTC of that date."""
    value, _ = _parse(text)
    return _utc(value, text)


def is_naive_timestamp(text: str) -> bool:
    """Whether ``text`` is an instant with a time of day but no UTC offset (``parse_timestamp``
    takes it to be UTC, which an importer should say); False for a bare date or an error."""
    try:
        value, bare = _parse(text)
    except ValueError:
        return False
    return not bare and value.tzinfo is None


def _utc(value: datetime, text: str) -> datetime:
    try:
        return as_utc(value)
    except OverflowError:  # an offset that moves the instant off the calendar
        raise ValueError(f"{_shown(text)}: {_BEYOND}") from None


def parse_publication_time(text: str) -> datetime:
    """When a document became public. A bare date means the *end* of that day.

    A document dated only by its day may have appeared at any time that day, so it must not be
    visible at an intraday cutoff of the same day: it is placed at 23:59:59.999999 UTC. Every
    spelling of a bare date follows this rule (see ``_parse``); full timestamps are taken as
    given.
    """
    value, bare = _parse(text)
    return end_of_day(value.date()) if bare else _utc(value, text)


def age_days(timestamp: datetime, cutoff: datetime) -> float:
    """How old ``timestamp`` is at ``cutoff``, in days, rounded to 1e-5 day (under a second):
    what is public at the end of a day is 0 days old at the next midnight."""
    return round((as_utc(cutoff) - as_utc(timestamp)).total_seconds() / 86400.0, 5)


def end_of_day(day: date) -> datetime:
    """The last microsecond of a UTC day: when something dated only by that day counts as public."""
    return datetime.combine(day, time.max, tzinfo=UTC)


def parse_cutoff(
    value: str | date | datetime, convention: DayConvention = DayConvention.START_OF_DAY
) -> datetime:
    """Turn a user-given cutoff (a date, a datetime, or their ISO text) into a UTC instant.

    Dates (including a bare date in any spelling, see ``_parse``) follow ``convention``; instants
    are taken as given. Raises ``ValueError`` for text that is no date or instant, or one off the
    calendar.
    """
    if isinstance(value, datetime):
        return as_utc(value)
    if isinstance(value, date):
        return cutoff_for_day(value, convention)
    parsed, bare = _parse(value)
    return cutoff_for_day(parsed.date(), convention) if bare else _utc(parsed, value)


def is_visible(timestamp: datetime, cutoff: datetime) -> bool:
    """The one visibility rule: strictly before the cutoff."""
    return as_utc(timestamp) < as_utc(cutoff)


def step_precedes_resolution(cutoff: datetime, resolved_at: datetime) -> bool:
    """A forecast step is allowed only at a cutoff strictly before the resolution instant
    (at the instant itself the outcome is public)."""
    return as_utc(cutoff) < as_utc(resolved_at)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_micros(value: datetime) -> int:
    """Microseconds since the Unix epoch: the integer form of an instant in stored arrays."""
    return (as_utc(value) - _EPOCH) // timedelta(microseconds=1)


def visible_count(sorted_micros: npt.NDArray[np.int64], cutoff: datetime) -> int:
    """The vectorised twin of ``is_visible``: how many of ``sorted_micros`` (ascending
    microseconds since the epoch) are strictly before ``cutoff``."""
    import numpy as np

    return int(np.searchsorted(sorted_micros, to_micros(cutoff), side="left"))


def last_complete_day(cutoff: datetime) -> date:
    """The last UTC day that has entirely ended by ``cutoff``.

    A daily aggregate (such as the mean market price of a day) is visible at a cutoff only when
    its whole day lies before the cutoff.
    """
    # A cutoff at exactly midnight ends the previous day; otherwise the current day is partial.
    return as_utc(cutoff).date() - timedelta(days=1)
