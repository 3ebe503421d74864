"""Helpers of the arena tests: the EVM extra check, rounds and agent keys."""

from __future__ import annotations

import hashlib
import importlib.util
from datetime import UTC, datetime, timedelta

import pytest

from pastcast_arena import ArenaMarket, BenchmarkPrice, Round

EVM_MODULES = ("web3", "eth_tester", "eth_account", "eth_hash", "eth_keys")
T0 = datetime(2025, 3, 3, 16, 0, tzinfo=UTC)


def evm_missing() -> str | None:
    for name in EVM_MODULES:
        if importlib.util.find_spec(name) is None:
            return (
                f"the 'arena' extra is not installed ({name} is missing): pip install -e '.[arena]'"
            )
    return None


def needs_evm() -> None:
    """Skip the calling test (or, at import, the module) where the arena extra is missing."""
    why = evm_missing()
    if why:
        pytest.skip(why, allow_module_level=True)


def condition(name: str) -> str:
    """A condition id for a test market (sha256: needs no EVM library)."""
    return "0x" + hashlib.sha256(name.encode()).hexdigest()


def make_round(benchmarks: list[int], round_id: int = 1, tag: str = "m") -> Round:
    markets = tuple(
        ArenaMarket(market_id=f"{tag}{i}", condition_id=condition(f"{tag}{i}"))
        for i in range(len(benchmarks))
    )
    return Round(
        round_id=round_id,
        markets=markets,
        commit_deadline=T0,
        reveal_deadline=T0 + timedelta(days=1),
        benchmarks=tuple(
            BenchmarkPrice(market_id=m.market_id, price_bp=b, source="book-mid", observed_at=T0)
            for m, b in zip(markets, benchmarks, strict=True)
        ),
    )


def key(n: int) -> str:
    """A fixed private key per test agent."""
    return "0x" + f"{n + 1:064x}"


def synthetic_dataset(n_events: int = 30, seed: int = 0, category: str = "") -> object:
    """Binary markets opening every other day, open 30 days, with daily prices drifting towards
    their outcome; every third resolves early (day 20)."""
    import numpy as np

    from pastcast.dataset import Dataset
    from pastcast.records import DailyBelief, Event, Resolution, StepSpec

    rng = np.random.default_rng(seed)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    events, resolutions, beliefs, steps = [], {}, {}, []
    for i in range(n_events):
        eid = f"syn:{i:03d}"
        open_time = start + timedelta(days=2 * i)
        close = open_time + timedelta(days=30)
        yes = bool(rng.uniform() < 0.5)
        resolved_at = open_time + timedelta(days=20 if i % 3 == 0 else 30)
        events.append(
            Event(
                id=eid,
                title=f"Will synthetic thing {i} happen",
                kind="binary",
                labels=("Yes", "No"),
                open_time=open_time,
                close_time=close,
                category=category or ("alpha" if i % 2 else "beta"),
            )
        )
        resolutions[eid] = Resolution(
            event_id=eid, label="Yes" if yes else "No", resolved_at=resolved_at
        )
        days = (resolved_at - open_time).days
        p = 0.5
        rows = []
        for d in range(days):
            p = float(np.clip(p + rng.normal(0.02 if yes else -0.02, 0.05), 0.02, 0.98))
            rows.append(
                DailyBelief(
                    event_id=eid,
                    day=(open_time + timedelta(days=d)).date(),
                    probs={"Yes": p, "No": 1 - p},
                )
            )
        beliefs[eid] = tuple(rows)
        steps.append(StepSpec(event_id=eid, step_index=0, cutoff=open_time + timedelta(days=5)))
    return Dataset("synthetic-v1", tuple(events), resolutions, beliefs, tuple(steps))
