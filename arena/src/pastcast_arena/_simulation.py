"""The seed-controlled simulation study of Foresight Arena (section 6; docs/arena.md, "The
simulation study": the markets, archetypes and fit). Every random number is drawn up front from
one ``numpy.random.default_rng(seed)`` in a fixed order (``SimulationDraws``) and turned into
prices, truths and forecasts by inverse transforms: a seed fixes every byte of the output, and
the same draws serve every parameter value (the figures over seeds and the fit)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from pastcast.agents import random_draws
from pastcast.records import Record
from pastcast.scoring.analyses import power_n, power_rounds
from pastcast_arena._records import (
    MAX_BP,
    ArenaMarket,
    BenchmarkPrice,
    OutcomeCode,
    Round,
    RoundResult,
)
from pastcast_arena._scoring import score_round
from pastcast_arena._stats import ArenaReport, arena_report


class Category(Record):
    """A category of markets: its rounds in 50 (Table 7's; scaled for another R), and a_c,
    sigma_c and s_c of docs/arena.md, "The simulation study"."""

    name: str
    rounds: int = Field(gt=0)
    concentration: float = Field(gt=0)  # a_c: prices are Beta(a_c, a_c)
    unpriced: float = Field(ge=0)  # sigma_c: the truth's spread around the price
    signal: float = Field(ge=0)  # s_c: how much of (q - b) a q-anchored agent can recover


class Archetype(Record):
    """A forecaster of the study (its form by ``kind``: docs/arena.md, "The simulation study")
    and the placeholder name of the paper's corresponding one."""

    name: str
    kind: Literal["q_anchored", "calibration", "market_tracking", "market", "random"]
    pull: float = 0.0  # lambda
    shrink: float = 1.0  # gamma: above 1 bolder than its own estimate, below 1 more cautious
    noise: float = 0.0  # sigma
    paper_label: str = ""


# Fitted to the paper's Tables 5-7 as the means over seeds 0-399 (``calibrate_simulation``;
# docs/arena.md has the fit, its residuals and the spread over seeds). Rounds are the paper's
# per category.
CATEGORIES: tuple[Category, ...] = (
    Category(name="crypto", rounds=12, concentration=0.87, unpriced=0.125, signal=0.64),
    Category(name="politics", rounds=11, concentration=2.03, unpriced=0.125, signal=0.44),
    Category(name="sports", rounds=9, concentration=0.316, unpriced=0.125, signal=0.04),
    Category(name="economics", rounds=7, concentration=1.098, unpriced=0.125, signal=0.0),
    Category(name="geopolitics", rounds=6, concentration=4.215, unpriced=0.125, signal=0.0),
    Category(name="entertainment", rounds=5, concentration=0.589, unpriced=0.125, signal=0.0),
)  # fmt: skip

ARCHETYPES: tuple[Archetype, ...] = (
    Archetype(name="q-anchored-sharp", kind="q_anchored", pull=1.4339, shrink=1.1558,
              noise=0.0007, paper_label="claude-opus-4-5"),
    Archetype(name="q-anchored-bold", kind="q_anchored", pull=1.3908, shrink=1.1797,
              noise=0.0071, paper_label="gpt-5-2"),
    Archetype(name="calibration-driven", kind="calibration", pull=0.0975, shrink=0.8035,
              noise=0.0334, paper_label="gemini-3-pro"),
    Archetype(name="market-tracking-low-noise", kind="market_tracking", noise=0.0464,
              paper_label="grok-4-1"),
    Archetype(name="market-tracking-high-noise", kind="market_tracking", noise=0.1037,
              paper_label="glm-4-7"),
    Archetype(name="market-consensus", kind="market", paper_label="Market Consensus"),
    Archetype(name="random", kind="random", paper_label="Random Baseline"),
)  # fmt: skip
MARKET_SLOPE = 0.8
"""kappa: the truth's slope on the market price (below 1: a market a little overconfident)."""
FRONTIER_T = 2.0
"""An archetype is individually significant at a seed when its |t| reaches this (p < 0.05 at
R = 50): the paper's frontier-like archetypes (``FRONTIER_KINDS``: every kind but the market
and random) are not, bar the noisier tracker at the edge."""
FRONTIER_KINDS = ("q_anchored", "calibration", "market_tracking")

Floats = NDArray[np.float64]
_CLIP = (0.01, 0.99)
_START = datetime(2026, 1, 5, 16, 0, tzinfo=UTC)
_ROLES = {"market": "reference", "random": "baseline"}


class SimulationConfig(Record):
    seed: int = 137
    rounds: int = Field(default=50, ge=1)
    markets: int = Field(default=7, ge=1, le=64)
    categories: tuple[Category, ...] = CATEGORIES
    archetypes: tuple[Archetype, ...] = ARCHETYPES
    market_slope: float = Field(default=MARKET_SLOPE, gt=0)


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


def power_table(per_round: int = 7) -> tuple[PowerRow, ...]:
    """The paper's Table 1 (q = 0.5, boldness 0.15; its rounded quantiles 1.645 and 0.842,
    one-sided 5%, power 80%)."""
    rows = []
    for a in (0.005, 0.01, 0.02, 0.03, 0.05, 0.1):
        n = power_n(a, 0.5, 0.15, z_alpha=1.645, z_power=0.842)
        rows.append(PowerRow(alpha=a, predictions=n, rounds=power_rounds(n, per_round)))
    return tuple(rows)


def _to_bp(p: NDArray[np.float64]) -> NDArray[np.int64]:
    out: NDArray[np.int64] = np.floor(p * MAX_BP + 0.5).astype(np.int64)
    return out


def allocate_rounds(categories: Sequence[Category], rounds: int) -> tuple[int, ...]:
    """Rounds per category for ``rounds`` in all: the categories' counts scaled by largest
    remainders (ties to the earlier category), so 50 rounds give the paper's counts."""
    total = sum(c.rounds for c in categories)
    exact = [c.rounds * rounds / total for c in categories]
    counts = [int(e) for e in exact]
    by_remainder = sorted(range(len(exact)), key=lambda i: (-(exact[i] - counts[i]), i))
    for i in by_remainder[: rounds - sum(counts)]:
        counts[i] += 1
    return tuple(counts)


class SimulationDraws:
    """Every random number of a study for each of ``seeds`` (default: the config's), drawn up
    front in a fixed order (docs/arena.md, "The simulation study") and stacked on a first axis:
    seed s of a stack is the study of ``SimulationConfig(seed=s)``; ``play`` applies a config."""

    def __init__(self, config: SimulationConfig, seeds: Sequence[int] | None = None) -> None:
        self.seeds = (config.seed,) if seeds is None else tuple(seeds)
        counts = allocate_rounds(config.categories, config.rounds)
        order = np.repeat(np.arange(len(config.categories)), counts)
        shape = (config.rounds, config.markets)
        category, price, truth, outcome, agents = [], [], [], [], []
        for seed in self.seeds:
            rng = np.random.default_rng(seed)
            category.append(order[rng.permutation(order.size)])
            price.append(rng.random(shape))
            truth.append(rng.standard_normal(shape))
            outcome.append(rng.random(shape))
            # The random baseline draws as the registered random agent does on the same market
            # and deadline (``pastcast.agents.random_draws``): one random baseline everywhere.
            agents.append(
                [
                    _random(config, seed) if a.kind == "random" else rng.standard_normal(shape)
                    for a in config.archetypes
                ]
            )
        self.category: NDArray[np.int64] = np.stack(category)
        self.price_u, self.truth_z, self.outcome_u = map(np.stack, (price, truth, outcome))
        self.agent_draws = tuple(np.stack(d) for d in zip(*agents, strict=True))

    def market(
        self, config: SimulationConfig
    ) -> tuple[NDArray[np.int64], NDArray[np.float64], NDArray[np.int64]]:
        """(benchmark prices in basis points, true probabilities, outcomes) under ``config``,
        each (seeds x rounds x markets)."""
        cats = config.categories
        a = np.array([c.concentration for c in cats])[self.category][..., None]
        sigma = np.array([c.unpriced for c in cats])[self.category][..., None]
        return market_cells(a, sigma, config.market_slope, self.price_u, self.truth_z,
                            self.outcome_u)  # fmt: skip

    def play(
        self, config: SimulationConfig
    ) -> tuple[NDArray[np.int64], NDArray[np.int64], dict[str, NDArray[np.int64]]]:
        """(benchmark prices in basis points, outcomes, each archetype's forecasts in basis
        points), all (seeds x rounds x markets), under ``config``'s parameters."""
        b_bp, q, x = self.market(config)
        b = b_bp / MAX_BP
        signal = np.array([c.signal for c in config.categories])[self.category][..., None]
        forecasts = {
            arch.name: _to_bp(_predict(arch, signal, q, b, draw))
            for arch, draw in zip(config.archetypes, self.agent_draws, strict=True)
        }
        return b_bp, x, forecasts


def market_cells(
    a: Floats, sigma: Floats, slope: float, price_u: Floats, truth_z: Floats, outcome_u: Floats
) -> tuple[NDArray[np.int64], Floats, NDArray[np.int64]]:
    """(prices in basis points, truths, outcomes) of markets with concentration ``a`` and
    unpriced spread ``sigma`` (arrays broadcasting with the draws) by the inverse transforms."""
    from scipy.special import betaincinv  # imported when first used: seconds at start-up

    b_bp = _to_bp(np.clip(betaincinv(a, a, price_u), *_CLIP))
    q = np.clip(0.5 + slope * (b_bp / MAX_BP - 0.5) + sigma * truth_z, 0.0, 1.0)
    return b_bp, q, (outcome_u < q).astype(np.int64)


def _random(config: SimulationConfig, seed: int) -> NDArray[np.float64]:
    return np.array(
        [
            [
                random_draws(seed, _market_id(r + 1, i), _deadline(r)).uniform(0, 1)
                for i in range(config.markets)
            ]
            for r in range(config.rounds)
        ]
    )


def _predict(
    arch: Archetype,
    signal: NDArray[np.float64],
    q: NDArray[np.float64],
    b: NDArray[np.float64],
    draw: NDArray[np.float64],
) -> NDArray[np.float64]:
    if arch.kind == "random":
        return draw
    if arch.kind == "market":
        return b
    if arch.kind == "market_tracking":
        p = b + arch.noise * draw
    else:  # q-anchored and calibration-driven: one form, the fit sets the one apart
        p = 0.5 + arch.shrink * (b + arch.pull * signal * (q - b) - 0.5) + arch.noise * draw
    return np.clip(p, *_CLIP)


def _market_id(r: int, i: int) -> str:
    return f"sim-r{r:03d}-m{i}"


def _deadline(r: int) -> datetime:
    """The commit deadline of round ``r + 1``: weekly from the study's start."""
    return _START + timedelta(days=7 * r)


def simulate(config: SimulationConfig | None = None) -> SimulationResult:
    """Run the study; the same config gives byte-identical results."""
    cfg = config or SimulationConfig()
    draws = SimulationDraws(cfg)
    b_bp, x, played = draws.play(cfg)
    b_bp, x, forecasts = b_bp[0], x[0], {name: f[0] for name, f in played.items()}
    roles = {a.name: _ROLES[a.kind] for a in cfg.archetypes if a.kind in _ROLES}
    results = []
    for r in range(cfg.rounds):
        cat = cfg.categories[int(draws.category[0, r])]
        deadline = _deadline(r)
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
                    market_id=m.market_id, price_bp=int(bp), source="mid", observed_at=deadline
                )
                for m, bp in zip(markets, b_bp[r].tolist(), strict=True)
            ),
        )
        outcomes: tuple[OutcomeCode, ...] = tuple(1 if v else 0 for v in x[r].tolist())
        predictions = {name: tuple(int(v) for v in f[r].tolist()) for name, f in forecasts.items()}
        results.append(
            RoundResult(
                round=rnd,
                outcomes=outcomes,
                predictions=predictions,
                scores=score_round(rnd, outcomes, predictions),
                roles=roles,
            )
        )
    return SimulationResult(
        config=cfg,
        results=tuple(results),
        report=arena_report(results),
        power=power_table(cfg.markets),
    )
