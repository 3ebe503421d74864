"""News volume per UTC day from any corpus backend, for the Forecast-Dojo schedule."""

from __future__ import annotations

from datetime import date, timedelta

from pastcast.corpus import CorpusBackend
from pastcast.cutoff import cutoff_for_day


def daily_news_counts(backend: CorpusBackend, first: date, last: date) -> dict[date, int]:
    """Documents dated on each day in [first, last], from the backend's own cutoff counts.

    Uses only ``count_before``, so it works for every backend and reads no document text.
    """
    if last < first:
        return {}
    counts: dict[date, int] = {}
    before = backend.count_before(cutoff_for_day(first))
    day = first
    while day <= last:
        after = backend.count_before(cutoff_for_day(day + timedelta(days=1)))
        counts[day] = after - before
        before, day = after, day + timedelta(days=1)
    return counts
