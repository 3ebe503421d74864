"""Benchmark prices and volumes at a replayed commit deadline from Polymarket's CLOB, read through
a ``ClobCache`` (offline once fetched, so a replay is the same every time): docs/arena.md,
"Deadline prices from the CLOB"."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from pydantic import Field

from pastcast.cutoff import as_utc, is_visible
from pastcast.dataset import Dataset
from pastcast.markets.sources import ClobCache
from pastcast.records import Record
from pastcast_arena._protocol import to_bp
from pastcast_arena._records import BenchmarkPrice
from pastcast_arena._rounds import benchmark_from_book, benchmark_from_dataset

__all__ = ["ClobMarket", "ClobPrices", "clob_markets"]


class ClobMarket(Record):
    """The CLOB ids of a binary market: its YES token and its condition (for the trades)."""

    token: str = Field(min_length=1)
    condition: str = ""


def clob_markets(recorded: object, where: str) -> dict[str, ClobMarket]:
    """The ``clob_tokens`` a Polymarket import records (event id -> ``{token, condition}``)."""
    if not isinstance(recorded, Mapping) or not recorded:
        raise ValueError(f"{where}: no CLOB tokens recorded (a Polymarket import records them)")
    out = {}
    for eid, value in recorded.items():
        try:
            out[str(eid)] = ClobMarket.model_validate(value)
        except ValueError as exc:
            msg = str(exc).splitlines()[0]
            raise ValueError(f"{where}: clob_tokens[{eid!r}]: {msg}") from None
    return out


class ClobPrices:
    """``DeadlinePrices`` from the CLOB for the markets in ``markets``; others get the
    dataset's daily belief, labelled as the fallback."""

    def __init__(
        self, cache: ClobCache, markets: Mapping[str, ClobMarket], window_hours: int = 24
    ) -> None:
        if window_hours < 1:
            raise ValueError(f"window_hours: at least 1, got {window_hours}")
        self.cache, self.markets = cache, dict(markets)
        self.window = timedelta(hours=window_hours)

    def benchmark(
        self, dataset: Dataset, event_id: str, deadline: datetime
    ) -> BenchmarkPrice | None:
        deadline = as_utc(deadline)
        market = self.markets.get(event_id)
        if market is not None:
            books = [
                q
                for q in self.cache.books(market.token)
                if is_visible(q[2], deadline) and deadline - q[2] <= self.window
            ]
            if books:
                bid, ask, at = books[-1]
                return benchmark_from_book(event_id, bid, ask, at, deadline)
            end = int(deadline.timestamp())
            start = int((deadline - self.window).timestamp())
            history = self.cache.minute_history(market.token, start, end)
            before = [(t, p) for t, p in history or () if t < end]
            if before:
                t, p = max(before)
                return BenchmarkPrice(
                    market_id=event_id,
                    price_bp=to_bp(p),
                    source="clob-minute",
                    observed_at=datetime.fromtimestamp(t, deadline.tzinfo),
                )
        daily = benchmark_from_dataset(dataset, event_id, deadline)
        return None if daily is None else daily.model_copy(update={"source": "daily-mean-fallback"})

    def volume(self, event_id: str, start: datetime, end: datetime) -> float | None:
        market = self.markets.get(event_id)
        if market is None or not market.condition:
            return None
        s, e = int(as_utc(start).timestamp()), int(as_utc(end).timestamp())
        trades = self.cache.trades(market.condition, s, e)
        return None if trades is None else float(sum(size for t, size in trades if s <= t < e))
