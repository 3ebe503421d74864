"""Rounds of a replay built from a dataset's resolved markets: the benchmark price at each
commit deadline (its source recorded) and the pluggable market selectors (docs/arena.md,
"Rounds"), from a dataset's daily beliefs or from the CLOB (``ClobPrices``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol

import numpy as np
from pydantic import Field

from pastcast.cutoff import as_utc, cutoff_for_day, is_visible, step_precedes_resolution
from pastcast.dataset import Dataset
from pastcast.markets.sources import ClobCache
from pastcast.records import BINARY_LABELS, Record, UtcDatetime
from pastcast.registry import ComponentSpec, Registry
from pastcast_arena._protocol import condition_id_for, to_bp
from pastcast_arena._records import UNCATEGORIZED, ArenaMarket, BenchmarkPrice, Round


def benchmark_from_book(
    market_id: str, best_bid: float, best_ask: float, observed_at: datetime, deadline: datetime
) -> BenchmarkPrice:
    """The mid-price of a book observed at (or just before) the deadline."""
    if is_visible(deadline, observed_at):
        raise ValueError(f"{market_id}: the book was observed after the commit deadline")
    if not 0.0 <= best_bid <= best_ask <= 1.0:
        raise ValueError(f"{market_id}: bid {best_bid} / ask {best_ask} is not a valid book")
    return BenchmarkPrice(
        market_id=market_id,
        price_bp=to_bp((best_bid + best_ask) / 2),
        source="book-mid",
        observed_at=observed_at,
    )


def benchmark_from_trades(
    market_id: str, trades: Sequence[tuple[datetime, float]], deadline: datetime
) -> BenchmarkPrice:
    """The last trade strictly before the deadline (trades at or after it are ignored)."""
    before = [(as_utc(t), p) for t, p in trades if is_visible(t, deadline)]
    if not before:
        raise ValueError(f"{market_id}: no trade before the commit deadline")
    at, price = max(before, key=lambda tp: tp[0])
    return BenchmarkPrice(
        market_id=market_id, price_bp=to_bp(price), source="last_trade", observed_at=at
    )


def benchmark_from_dataset(
    dataset: Dataset, event_id: str, deadline: datetime
) -> BenchmarkPrice | None:
    """The YES belief of the last whole UTC day before the deadline (None when there is none)."""
    belief = dataset.market_at(event_id, deadline)
    if belief is None or BINARY_LABELS[0] not in belief.probs:
        return None
    return BenchmarkPrice(
        market_id=event_id,
        price_bp=to_bp(belief.probs[BINARY_LABELS[0]]),
        source="daily",
        observed_at=cutoff_for_day(belief.day + timedelta(days=1)),
    )


class DeadlinePrices(Protocol):
    """Prices and traded volumes of a dataset's markets at a deadline, from outside the dataset
    (the CLOB); ``None`` where the source has none. Nothing at or after ``deadline`` is used."""

    def benchmark(
        self, dataset: Dataset, event_id: str, deadline: datetime
    ) -> BenchmarkPrice | None: ...

    def volume(self, event_id: str, start: datetime, end: datetime) -> float | None:
        """Shares traded in [start, end)."""
        ...


# Deadline prices from Polymarket's CLOB, read through a ``ClobCache`` (offline once fetched,
# so a replay is the same every time): docs/arena.md, "Deadline prices from the CLOB".


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

    def __init__(self, cache: ClobCache, markets: Mapping[str, ClobMarket]) -> None:
        self.cache, self.markets = cache, dict(markets)
        self.window = timedelta(hours=24)

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


class Candidate(Record):
    """A market that may enter a round, with what selectors rank it by."""

    market: ArenaMarket
    benchmark: BenchmarkPrice
    activity: float = Field(ge=0)
    """Sum of absolute daily price moves over the lookback window before the deadline."""
    volume: float | None = Field(default=None, ge=0)
    """Shares traded in the 24 hours before the deadline, where the source reports it."""
    volume_prior: float | None = Field(default=None, ge=0)
    """Mean shares traded a day over the lookback window before those 24 hours."""


def _by_volume(c: Candidate) -> tuple[float, float, str]:
    return (-(c.volume if c.volume is not None else -1.0), -c.activity, c.market.market_id)


def trend(c: Candidate) -> float | None:
    """The last 24 hours' volume over the mean day's before them (a floor of one share a day, so
    a market that just started trading ranks high, not infinitely)."""
    if c.volume is None or c.volume_prior is None:
        return None
    return c.volume / max(c.volume_prior, 1.0)


Selector = Callable[[Sequence[Candidate], int, int], tuple[Candidate, ...]]
"""(candidates, k, round index) -> the k chosen markets, in round order."""

SELECTORS: Registry[Selector] = Registry("round_selector")


def _first_by(key: Callable[[Candidate], Any]) -> Selector:
    """The k candidates first in ``key``'s order (ties by market id inside ``key``)."""

    def select(cands: Sequence[Candidate], k: int, round_index: int) -> tuple[Candidate, ...]:
        return tuple(sorted(cands, key=key)[:k])

    return select


@SELECTORS.register("volume-activity")
def volume_activity() -> Selector:
    """Highest 24-hour volume first, then most price activity (the paper's curation)."""
    return _first_by(_by_volume)


@SELECTORS.register("volume-24h")
def volume_24h(min_volume: float = 0.0) -> Selector:
    """Highest share volume in the 24 hours before the deadline first (the paper's volume
    filtering); markets with no more than ``min_volume``, or none reported, only after them,
    by price activity."""

    def key(c: Candidate) -> tuple[int, float, float, str]:
        ok = c.volume is not None and c.volume > min_volume
        return (0 if ok else 1, -(c.volume or 0.0) if ok else 0.0, -c.activity, c.market.market_id)

    return _first_by(key)


@SELECTORS.register("trending")
def trending() -> Selector:
    """Markets whose last 24 hours traded most above their usual day first (``trend``: the
    24-hour volume over the mean day's of the lookback window before it), then by 24-hour
    volume; markets without volumes after them, by price activity."""

    def key(c: Candidate) -> tuple[int, float, tuple[float, float, str]]:
        t = trend(c)
        return (0 if t is not None else 1, -(t or 0.0), _by_volume(c))

    return _first_by(key)


@SELECTORS.register("random")
def random_markets(seed: int = 0) -> Selector:
    """k markets drawn uniformly, reproducibly from (seed, round index)."""

    def select(cands: Sequence[Candidate], k: int, round_index: int) -> tuple[Candidate, ...]:
        ordered = sorted(cands, key=lambda c: c.market.market_id)
        rng = np.random.default_rng([seed, round_index])
        pick = rng.choice(len(ordered), size=min(k, len(ordered)), replace=False)
        return tuple(ordered[int(i)] for i in sorted(pick))

    return select


def _activity(dataset: Dataset, event_id: str, deadline: datetime, lookback_days: int) -> float:
    first = (deadline - timedelta(days=lookback_days)).date()
    vals = [
        y
        for b in dataset.beliefs_before(event_id, deadline)
        if b.day >= first and (y := b.probs.get(BINARY_LABELS[0])) is not None
    ]
    return float(np.abs(np.diff(vals)).sum()) if len(vals) > 1 else 0.0


class RoundPlan(Record):
    """How a replay builds its rounds from a dataset."""

    markets: int = Field(default=7, ge=1, le=64)
    rounds: int = Field(default=20, ge=1)
    start: UtcDatetime | None = None
    """First commit deadline (default: the first day on which enough markets qualify)."""
    interval_days: int = Field(default=7, ge=1)
    reveal_hours: int = Field(default=24, ge=1)
    max_price_age_days: int = Field(default=3, ge=1)
    """A market needs a belief from one of the last N days before the deadline."""
    lookback_days: int = Field(default=7, ge=1)
    reuse_markets: bool = False
    selector: ComponentSpec = ComponentSpec(kind="round_selector", name="volume-activity")


def dataset_candidates(
    dataset: Dataset,
    deadline: datetime,
    plan: RoundPlan,
    exclude: set[str],
    prices: DeadlinePrices | None = None,
) -> list[Candidate]:
    """Binary events open at the deadline, unresolved until after the reveal window (so the
    outcome cannot be known when forecasting) and priced within ``max_price_age_days``; with
    ``prices``, the benchmark and the volumes come from it."""
    reveal = deadline + timedelta(hours=plan.reveal_hours)
    out = []
    for event in dataset.events:
        if event.kind != "binary" or event.id in exclude:
            continue
        if not is_visible(event.open_time, deadline):
            continue
        res = dataset.resolutions.get(event.id)
        if res is not None and not step_precedes_resolution(reveal, res.resolved_at):
            continue
        if prices is None:
            bench = benchmark_from_dataset(dataset, event.id, deadline)
        else:
            bench = prices.benchmark(dataset, event.id, deadline)
        if bench is None or deadline - bench.observed_at > timedelta(days=plan.max_price_age_days):
            continue
        if is_visible(deadline, bench.observed_at):  # a source that broke the rule
            raise ValueError(f"{event.id}: benchmark price observed after the deadline")
        volume = prior = None
        if prices is not None:
            day = timedelta(days=1)
            volume = prices.volume(event.id, deadline - day, deadline)
            before = prices.volume(
                event.id, deadline - day * (plan.lookback_days + 1), deadline - day
            )
            prior = None if before is None else before / plan.lookback_days
        market = ArenaMarket(
            market_id=event.id,
            condition_id=condition_id_for(event.id),
            question=event.title,
            category=event.category or UNCATEGORIZED,
        )
        out.append(
            Candidate(
                market=market,
                benchmark=bench,
                activity=_activity(dataset, event.id, deadline, plan.lookback_days),
                volume=volume,
                volume_prior=prior,
            )
        )
    return out


def _first_deadline(dataset: Dataset, plan: RoundPlan) -> datetime:
    if plan.start is not None:
        return plan.start
    days = sorted({b.day for beliefs in dataset.beliefs.values() for b in beliefs})
    if not days:
        raise ValueError(f"dataset {dataset.id}: no market prices to build rounds from")
    return cutoff_for_day(days[0] + timedelta(days=1))


def plan_rounds(
    dataset: Dataset, plan: RoundPlan | None = None, prices: DeadlinePrices | None = None
) -> tuple[Round, ...]:
    """Up to ``plan.rounds`` rounds, one every ``interval_days``; a deadline with fewer than k
    qualifying markets is skipped. Round ids count from 1 in deadline order. ``prices``: the
    benchmark prices and volumes at each deadline (else the dataset's daily beliefs)."""
    plan = plan or RoundPlan()
    select: Selector = SELECTORS.rebuild(plan.selector)
    deadline = _first_deadline(dataset, plan)
    last = max((r.resolved_at for r in dataset.resolutions.values()), default=deadline)
    used: set[str] = set()
    rounds: list[Round] = []
    index = 0
    while len(rounds) < plan.rounds and deadline < last:
        cands = dataset_candidates(
            dataset, deadline, plan, set() if plan.reuse_markets else used, prices
        )
        if len(cands) >= plan.markets:
            chosen = select(cands, plan.markets, index)
            rounds.append(
                Round(
                    round_id=len(rounds) + 1,
                    markets=tuple(c.market for c in chosen),
                    commit_deadline=deadline,
                    reveal_deadline=deadline + timedelta(hours=plan.reveal_hours),
                    selector=plan.selector.name,
                    benchmarks=tuple(c.benchmark for c in chosen),
                )
            )
            used.update(c.market.market_id for c in chosen)
        index += 1
        deadline += timedelta(days=plan.interval_days)
    return tuple(rounds)
