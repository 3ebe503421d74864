"""The seed-controlled simulation study of Foresight Arena (section 6).

R rounds of k binary markets. Each round belongs to one of six categories (drawn with the
paper's round counts as weights). A market's benchmark price is b ~ Beta(a_c, a_c); its true
probability is q = b + N(0, sigma_c) (clipped), the information the market has not priced; the
outcome is x ~ Bernoulli(q). The market is therefore calibrated (E[x | b] = b up to clipping),
as the paper assumes of liquid markets, and its Brier is E[b (1 - b)] = a_c / (2 (2 a_c + 1)).

The archetypes:

* q-anchored (three): p = b + lambda * s_c * (q - b) + N(0, sigma): they recover part of the
  unpriced information, lambda times the category's signal s_c, at the cost of their own noise;
* market-tracking (two): p = b + N(0, sigma): the market price with noise, alpha = -sigma^2;
* market consensus: p = b, alpha exactly 0 (a reference);
* random: p ~ U[0, 1], expected Brier 1/3.

Every probability is clipped to [0.01, 0.99] (the random agent excepted) and rounded to basis
points, then scored exactly as on chain (``score_round``); the statistics are the arena's.
Draws come from one ``numpy.random.default_rng(seed)`` in a fixed order, so a seed fixes every
byte of the output. The parameters are ours: the paper does not publish its generator.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from pastcast.arena._records import (
    MAX_BP,
    ArenaMarket,
    BenchmarkPrice,
    OutcomeCode,
    Round,
    RoundResult,
)
from pastcast.arena._scoring import score_round
from pastcast.arena._stats import ArenaReport, arena_report
from pastcast.records import Record
from pastcast.scoring import power_n, power_rounds

__all__ = [
    "ARCHETYPES",
    "CATEGORIES",
    "Archetype",
    "Category",
    "PowerRow",
    "SimulationConfig",
    "SimulationResult",
    "power_table",
    "simulate",
]


class Category(Record):
    name: str
    weight: float = Field(gt=0)
    concentration: float = Field(gt=0)
    """a_c: prices are Beta(a_c, a_c); a larger a_c means prices nearer 1/2, a harder category."""
    unpriced: float = Field(ge=0)
    """sigma_c: standard deviation of the truth q around the price b."""
    signal: float = Field(ge=0)
    """s_c: how much of (q - b) a q-anchored agent can recover in this category."""


class Archetype(Record):
    name: str
    kind: Literal["q_anchored", "market_tracking", "market", "random"]
    pull: float = 0.0
    """lambda (q-anchored): share of (q - b) recovered where the signal is 1."""
    noise: float = 0.0
    """sigma: the agent's own noise."""
    paper_label: str = ""
    """The placeholder name of the paper's corresponding archetype."""


# Weights are the paper's rounds per category (Table 7); concentrations give its market Brier per
# category (a_c / (2 (2 a_c + 1))); the signal follows its ordering of the best alpha.
CATEGORIES: tuple[Category, ...] = (
    Category(name="crypto", weight=12, concentration=1.9, unpriced=0.15, signal=1.6),
    Category(name="politics", weight=11, concentration=4.0, unpriced=0.15, signal=1.3),
    Category(name="sports", weight=9, concentration=1.0, unpriced=0.15, signal=1.0),
    Category(name="economics", weight=7, concentration=2.5, unpriced=0.15, signal=0.8),
    Category(name="geopolitics", weight=6, concentration=7.0, unpriced=0.15, signal=0.1),
    Category(name="entertainment", weight=5, concentration=1.6, unpriced=0.15, signal=0.6),
)

ARCHETYPES: tuple[Archetype, ...] = (
    Archetype(
        name="q-anchored-sharp",
        kind="q_anchored",
        pull=0.25,
        noise=0.06,
        paper_label="claude-opus-4-5",
    ),
    Archetype(
        name="q-anchored-bold", kind="q_anchored", pull=0.30, noise=0.08, paper_label="gpt-5-2"
    ),
    Archetype(
        name="q-anchored-calibrated",
        kind="q_anchored",
        pull=0.15,
        noise=0.04,
        paper_label="gemini-3-pro",
    ),
    Archetype(
        name="market-tracking-low-noise",
        kind="market_tracking",
        noise=0.06,
        paper_label="grok-4-1",
    ),
    Archetype(
        name="market-tracking-high-noise",
        kind="market_tracking",
        noise=0.10,
        paper_label="glm-4-7",
    ),
    Archetype(name="market-consensus", kind="market", paper_label="Market Consensus"),
    Archetype(name="random", kind="random", paper_label="Random Baseline"),
)

_CLIP = (0.01, 0.99)
_START = datetime(2026, 1, 5, 16, 0, tzinfo=UTC)


class SimulationConfig(Record):
    seed: int = 137
    rounds: int = Field(default=50, ge=1)
    markets: int = Field(default=7, ge=1, le=64)
    categories: tuple[Category, ...] = CATEGORIES
    archetypes: tuple[Archetype, ...] = ARCHETYPES


class PowerRow(Record):
    """Proposition 3: predictions and rounds needed to detect a true edge ``alpha``."""

    alpha: float
    predictions: int
    rounds: int


class SimulationResult(Record):
    config: SimulationConfig
    results: tuple[RoundResult, ...]
    report: ArenaReport
    power: tuple[PowerRow, ...]


def power_table(
    per_round: int = 7,
    alphas: Sequence[float] = (0.005, 0.01, 0.02, 0.03, 0.05, 0.1),
    q: float = 0.5,
    boldness: float = 0.15,
) -> tuple[PowerRow, ...]:
    """The paper's Table 1 (its rounded quantiles 1.645 and 0.842, one-sided 5%, power 80%)."""
    rows = []
    for a in alphas:
        n = power_n(a, q, boldness, z_alpha=1.645, z_power=0.842)
        rows.append(PowerRow(alpha=a, predictions=n, rounds=power_rounds(n, per_round)))
    return tuple(rows)


def _to_bp(p: NDArray[np.float64]) -> tuple[int, ...]:
    return tuple(int(v) for v in np.floor(p * MAX_BP + 0.5).astype(np.int64))


def _predict(
    arch: Archetype,
    cat: Category,
    q: NDArray[np.float64],
    b: NDArray[np.float64],
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    k = q.size
    if arch.kind == "random":
        return rng.uniform(0.0, 1.0, size=k)
    if arch.kind == "market":
        return b
    if arch.kind == "market_tracking":
        p = b + rng.normal(0.0, arch.noise, size=k)
    else:
        p = b + arch.pull * cat.signal * (q - b) + rng.normal(0.0, arch.noise, size=k)
    return np.clip(p, *_CLIP)


def _market_id(r: int, i: int) -> str:
    return f"sim-r{r:03d}-m{i}"


def simulate(config: SimulationConfig | None = None) -> SimulationResult:
    """Run the study; the same config gives byte-identical results."""
    cfg = config or SimulationConfig()
    rng = np.random.default_rng(cfg.seed)
    weights = np.array([c.weight for c in cfg.categories], dtype=np.float64)
    cat_index = rng.choice(len(cfg.categories), size=cfg.rounds, p=weights / weights.sum())
    results = []
    for r in range(cfg.rounds):
        cat = cfg.categories[int(cat_index[r])]
        b = np.clip(rng.beta(cat.concentration, cat.concentration, size=cfg.markets), *_CLIP)
        b_bp = np.asarray(_to_bp(b), dtype=np.float64) / MAX_BP
        q = np.clip(b_bp + rng.normal(0.0, cat.unpriced, size=cfg.markets), 0.0, 1.0)
        x = (rng.uniform(size=cfg.markets) < q).astype(np.int64)
        predictions = {a.name: _to_bp(_predict(a, cat, q, b_bp, rng)) for a in cfg.archetypes}
        deadline = _START + timedelta(days=7 * r)
        markets = tuple(
            ArenaMarket(
                market_id=_market_id(r + 1, i),
                # a stand-in condition id: simulated markets have no conditional tokens
                condition_id="0x" + hashlib.sha256(_market_id(r + 1, i).encode()).hexdigest(),
                category=cat.name,
            )
            for i in range(cfg.markets)
        )
        rnd = Round(
            round_id=r + 1,
            markets=markets,
            commit_deadline=deadline,
            reveal_deadline=deadline + timedelta(days=1),
            selector="simulation",
            benchmarks=tuple(
                BenchmarkPrice(
                    market_id=m.market_id, price_bp=bp, source="mid", observed_at=deadline
                )
                for m, bp in zip(markets, _to_bp(b_bp), strict=True)
            ),
        )
        outcomes: tuple[OutcomeCode, ...] = tuple(1 if v else 0 for v in x.tolist())
        results.append(
            RoundResult(
                round=rnd,
                outcomes=outcomes,
                predictions=predictions,
                scores=score_round(rnd, outcomes, predictions),
                roles={a.name: "reference" for a in cfg.archetypes if a.kind == "market"},
            )
        )
    return SimulationResult(
        config=cfg,
        results=tuple(results),
        report=arena_report(results),
        power=power_table(cfg.markets),
    )
