"""Benchmark prices at the commit deadline and the market selectors of replayed rounds."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from arena_helpers import needs_evm, synthetic_dataset

from pastcast.arena import (
    SELECTORS,
    RoundPlan,
    benchmark_from_book,
    benchmark_from_dataset,
    benchmark_from_trades,
    plan_rounds,
)
from pastcast.cutoff import cutoff_for_day
from pastcast.registry import ComponentSpec, RegistryError

D = datetime(2025, 1, 20, 16, 0, tzinfo=UTC)


def test_mid_price_from_a_book_last_trade_otherwise() -> None:
    mid = benchmark_from_book("m", 0.58, 0.62, D - timedelta(seconds=1), D)
    assert (mid.price_bp, mid.source) == (6000, "mid")
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
    with pytest.raises(RegistryError, match="seeds"):
        SELECTORS.spec("random", seeds=1)
    with pytest.raises(RegistryError, match="unknown round_selector"):
        SELECTORS.rebuild(ComponentSpec(kind="round_selector", name="nope"))
