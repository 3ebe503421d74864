"""Small synthetic markets for the tests of this package."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from pastcast.markets import MarketHistory
from pastcast.records import DailyBelief, Event, Resolution


def day(s: str) -> date:
    return date.fromisoformat(s)


def at(s: str) -> datetime:
    return datetime.fromisoformat(s).replace(tzinfo=UTC)


def binary(
    eid: str,
    prices: list[float],
    *,
    start: str = "2025-06-01",
    label: str = "Yes",
    close: str | None = None,
    resolved: str | None = None,
    source: str = "polymarket",
) -> MarketHistory:
    """A binary market open at ``start`` with one price per day from ``start``."""
    d0 = day(start)
    close_dt = at(close) if close else at(start) + timedelta(days=len(prices) + 2)
    event = Event(
        id=eid,
        title=f"Question {eid}?",
        kind="binary",
        labels=("Yes", "No"),
        open_time=at(start),
        close_time=close_dt,
        source=source,
    )
    res = Resolution(event_id=eid, label=label, resolved_at=at(resolved) if resolved else close_dt)
    beliefs = tuple(
        DailyBelief(event_id=eid, day=d0 + timedelta(days=i), probs={"Yes": p, "No": 1 - p})
        for i, p in enumerate(prices)
    )
    return MarketHistory(event, res, beliefs)


def gamma_event(description: str) -> dict[str, Any]:
    """A resolved binary Polymarket event in Gamma's shape, with ``description`` as fetched."""
    return {
        "id": "101", "slug": "will-x", "title": "Will X ship by November?",
        "description": description, "negRisk": False,
        "markets": [{
            "id": "b", "question": "Will X ship by November?", "conditionId": "0xcb",
            "outcomes": '["Yes", "No"]', "outcomePrices": '["0", "1"]',
            "clobTokenIds": '["tok-yes", "tok-no"]', "negRisk": False,
            "startDate": "2025-07-01T00:00:00Z", "endDate": "2025-11-30T00:00:00Z",
            "closedTime": "2025-11-30 00:00:00+00", "umaResolutionStatus": "resolved",
        }],
    }  # fmt: skip
