"""Benchmark prices at the commit deadline and the market selectors of replayed rounds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from arena_helpers import needs_evm, synthetic_dataset
from pastcast.cutoff import cutoff_for_day
from pastcast.errors import FieldError
from pastcast.registry import ComponentSpec
from pastcast_arena import (
    SELECTORS,
    ArenaMarket,
    BenchmarkPrice,
    Candidate,
    RoundPlan,
    benchmark_from_book,
    benchmark_from_dataset,
    benchmark_from_trades,
    plan_rounds,
    trend,
)

D = datetime(2025, 1, 20, 16, 0, tzinfo=UTC)


def test_mid_price_from_a_book_last_trade_otherwise() -> None:
    mid = benchmark_from_book("m", 0.58, 0.62, D - timedelta(seconds=1), D)
    assert (mid.price_bp, mid.source) == (6000, "book-mid")
    with pytest.raises(ValueError, match="after the commit deadline"):
        benchmark_from_book("m", 0.58, 0.62, D + timedelta(seconds=1), D)
    with pytest.raises(ValueError, match="not a valid book"):
        benchmark_from_book("m", 0.7, 0.6, D, D)
    trades = [(D - timedelta(hours=2), 0.41), (D - timedelta(minutes=1), 0.43), (D, 0.99)]
    last = benchmark_from_trades("m", trades, D)
    # a trade at the deadline itself is not before it
    assert (last.price_bp, last.source, last.observed_at) == (4300, "last_trade", trades[1][0])
    with pytest.raises(ValueError, match="no trade before"):
        benchmark_from_trades("m", trades[2:], D)


def test_dataset_benchmark_is_the_last_whole_day_before_the_deadline() -> None:
    ds = synthetic_dataset()
    eid = "syn:005"
    b = benchmark_from_dataset(ds, eid, D)  # type: ignore[arg-type]
    assert b is not None and b.source == "daily"
    day = D.date() - timedelta(days=1)  # the deadline's own day is not over at 16:00
    belief = next(x for x in ds.beliefs[eid] if x.day == day)  # type: ignore[attr-defined]
    assert b.price_bp == round(belief.probs["Yes"] * 10_000)
    assert b.observed_at == cutoff_for_day(D.date()) <= D


def test_planned_rounds_never_contain_a_market_resolved_before_the_reveal_window() -> None:
    needs_evm()  # condition ids are keccak of market ids
    ds = synthetic_dataset()
    plan = RoundPlan(markets=4, rounds=6, start=D, interval_days=5)
    rounds = plan_rounds(ds, plan)  # type: ignore[arg-type]
    assert [r.round_id for r in rounds] == list(range(1, len(rounds) + 1)) and len(rounds) >= 4
    seen: set[str] = set()
    for r in rounds:
        assert r.k == 4 and r.commit_deadline >= D
        for m, b in zip(r.markets, r.benchmarks, strict=True):
            ev, res = ds.event(m.market_id), ds.resolutions[m.market_id]  # type: ignore[attr-defined]
            assert ev.open_time < r.commit_deadline
            assert res.resolved_at > r.reveal_deadline
            assert b.observed_at <= r.commit_deadline
            assert m.market_id not in seen  # a market enters one round only by default
            seen.add(m.market_id)
    # volume-activity: with no volume data the most active markets come first
    again = plan_rounds(ds, plan)  # type: ignore[arg-type]
    assert again == rounds


def test_random_selector_is_seeded_and_the_registry_checks_arguments() -> None:
    needs_evm()
    ds = synthetic_dataset()
    spec = SELECTORS.spec("random", seed=4)
    plan = RoundPlan(markets=3, rounds=3, start=D, selector=spec)
    a, b = plan_rounds(ds, plan), plan_rounds(ds, plan)  # type: ignore[arg-type]
    assert a == b
    other = plan_rounds(ds, plan.model_copy(update={"selector": SELECTORS.spec("random", seed=5)}))  # type: ignore[arg-type]
    assert [r.markets for r in other] != [r.markets for r in a]
    assert {"volume-activity", "random"} <= set(SELECTORS.names())
    with pytest.raises(FieldError, match="seeds"):
        SELECTORS.spec("random", seeds=1)
    with pytest.raises(FieldError, match="unknown round_selector"):
        SELECTORS.rebuild(ComponentSpec(kind="round_selector", name="nope"))


def _cand(
    mid: str, volume: float | None, prior: float | None = None, activity: float = 0.0
) -> Candidate:
    market = ArenaMarket(market_id=mid, condition_id="0x" + f"{len(mid):064x}")
    bench = BenchmarkPrice(market_id=mid, price_bp=5000, source="clob-minute", observed_at=D)
    return Candidate(
        market=market, benchmark=bench, activity=activity, volume=volume, volume_prior=prior
    )


def test_volume_24h_and_trending_selectors() -> None:
    cands = [
        _cand("steady", volume=900.0, prior=1000.0),  # a big market on a usual day
        _cand("rising", volume=300.0, prior=10.0),  # 30 times its usual day
        _cand("new", volume=50.0, prior=0.0),  # its first trades: 50 over the floor of one
        _cand("quiet", volume=0.0, prior=5.0, activity=0.3),
        _cand("unknown", volume=None, activity=0.9),  # the feed gave no whole window
    ]
    pick = SELECTORS.build("volume-24h")
    assert [c.market.market_id for c in pick(cands, 5, 0)] == [
        "steady", "rising", "new", "unknown", "quiet"
    ]  # fmt: skip
    floor = SELECTORS.build("volume-24h", min_volume=100.0)
    assert [c.market.market_id for c in floor(cands, 3, 0)] == ["steady", "rising", "unknown"]
    hot = SELECTORS.build("trending")
    assert [c.market.market_id for c in hot(cands, 5, 0)] == [
        "new", "rising", "steady", "quiet", "unknown"
    ]  # fmt: skip
    assert trend(cands[1]) == 30.0 and trend(cands[4]) is None


class _Prices:
    """Deadline prices in the protocol's shape: a CLOB price one minute before the deadline and
    volumes from a table, every call recorded."""

    def __init__(self, volumes: dict[str, float]) -> None:
        self.volumes, self.calls = volumes, []

    def benchmark(self, dataset: object, event_id: str, deadline: datetime) -> BenchmarkPrice:
        return BenchmarkPrice(
            market_id=event_id,
            price_bp=4000,
            source="clob-minute",
            observed_at=deadline - timedelta(minutes=1),
        )

    def volume(self, event_id: str, start: datetime, end: datetime) -> float | None:
        self.calls.append((start, end))
        return self.volumes.get(event_id)


def test_rounds_take_prices_and_volumes_from_the_deadline_source() -> None:
    needs_evm()
    ds = synthetic_dataset()
    plan = RoundPlan(markets=2, rounds=1, start=D, selector=SELECTORS.spec("volume-24h"))
    prices = _Prices({"syn:007": 5.0, "syn:008": 50.0, "syn:009": 20.0})
    (r,) = plan_rounds(ds, plan, prices)  # type: ignore[arg-type]
    assert [m.market_id for m in r.markets] == ["syn:008", "syn:009"]
    assert {b.source for b in r.benchmarks} == {"clob-minute"}
    assert all(end <= r.commit_deadline for _, end in prices.calls)  # nothing after the deadline
    assert (D - timedelta(days=1), D) in prices.calls
    assert (D - timedelta(days=8), D - timedelta(days=1)) in prices.calls

    class Late(_Prices):
        def benchmark(self, dataset: object, event_id: str, deadline: datetime) -> BenchmarkPrice:
            return super().benchmark(dataset, event_id, deadline + timedelta(minutes=2))

    with pytest.raises(ValueError, match="observed after the deadline"):
        plan_rounds(ds, plan, Late({}))  # type: ignore[arg-type]


def test_old_round_files_spell_the_book_mid_as_mid() -> None:
    b = BenchmarkPrice.model_validate(
        {"market_id": "m", "price_bp": 1, "source": "mid", "observed_at": D.isoformat()}
    )
    assert b.source == "book-mid"
