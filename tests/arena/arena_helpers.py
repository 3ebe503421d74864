"""Helpers of the arena tests: the EVM extra check, rounds and agent keys."""

from __future__ import annotations

import importlib.util
from datetime import UTC, datetime, timedelta

import pytest

from pastcast.arena import ArenaMarket, BenchmarkPrice, Round, condition_id_for

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


def make_round(benchmarks: list[int], round_id: int = 1, tag: str = "m") -> Round:
    markets = tuple(
        ArenaMarket(market_id=f"{tag}{i}", condition_id=condition_id_for(f"{tag}{i}"))
        for i in range(len(benchmarks))
    )
    return Round(
        round_id=round_id,
        markets=markets,
        commit_deadline=T0,
        reveal_deadline=T0 + timedelta(days=1),
        benchmarks=tuple(
            BenchmarkPrice(market_id=m.market_id, price_bp=b, source="mid", observed_at=T0)
            for m, b in zip(markets, benchmarks, strict=True)
        ),
    )


def key(n: int) -> str:
    """A fixed private key per test agent."""
    return "0x" + f"{n + 1:064x}"
