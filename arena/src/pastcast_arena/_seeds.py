"""The simulation study at many seeds at once (docs/arena.md, "Over seeds"): the figures
``arena_report`` computes from one seed's rounds, computed with numpy over stacked seeds, then
their mean, 5-95% range and the share of seeds at which each archetype is significant."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pastcast.records import Record
from pastcast.scoring import bin_index
from pastcast_arena._records import MAX_BP
from pastcast_arena._simulation import (
    FRONTIER_KINDS,
    FRONTIER_T,
    SimulationConfig,
    SimulationDraws,
)

Floats = NDArray[np.float64]
SEEDS = 200
"""Seeds in the across-seed summary (0 to 199): the mean of a figure is known to about a
fourteenth of its spread over seeds."""
_BINS = 10
_FIELDS = ("brier", "alpha", "alpha_se", "t", "beat", "reliability", "resolution")


@dataclass(frozen=True)
class SeedFigures:
    """One archetype's figures at each seed (arrays over seeds; ``category_alpha`` is seeds x
    categories, NaN where a category has no round)."""

    brier: Floats
    alpha: Floats
    alpha_se: Floats
    t: Floats
    beat: Floats
    reliability: Floats
    resolution: Floats
    category_alpha: Floats


@dataclass(frozen=True)
class SeedStudy:
    config: SimulationConfig
    seeds: tuple[int, ...]
    market_brier: Floats
    category_market_brier: Floats
    figures: dict[str, SeedFigures]


def _murphy(p: Floats, x: NDArray[np.int64]) -> tuple[Floats, Floats]:
    """(REL, RES) per seed of ``p`` and ``x`` (seeds x forecasts), as ``pastcast.scoring.murphy``
    computes them (equal-width bins, empty ones skipped), with a bin index per seed."""
    seeds, n = p.shape
    k = (bin_index(p, _BINS) + _BINS * np.arange(seeds)[:, None]).ravel()
    shape = (seeds, _BINS)
    n_k = np.bincount(k, minlength=seeds * _BINS).reshape(shape).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_k = np.bincount(k, p.ravel(), seeds * _BINS).reshape(shape) / n_k
        o_k = np.bincount(k, x.ravel().astype(np.float64), seeds * _BINS).reshape(shape) / n_k
    o = x.mean(axis=1, keepdims=True)
    rel = np.nansum(n_k * np.square(p_k - o_k), axis=1) / n
    res = np.nansum(n_k * np.square(o_k - o), axis=1) / n
    return rel, res


class Scorer:
    """Scores forecasts against one set of stacked markets (prices in basis points and
    outcomes, seeds x rounds x markets, and each round's category) as the arena does."""

    def __init__(
        self, b_bp: NDArray[np.int64], x: NDArray[np.int64], category: NDArray[np.int64],
        categories: int,
    ) -> None:  # fmt: skip
        self.seeds, self.rounds, self.k = b_bp.shape
        self.b_bp, self.x, self.b = b_bp, x, b_bp / MAX_BP
        self.base_bp = self.round_bp(b_bp)
        self.cats = np.eye(categories)[category]  # seeds x rounds x categories
        self.in_cat = self.cats.sum(axis=1) * self.k
        with np.errstate(invalid="ignore", divide="ignore"):
            sq = np.square(self.b - x).sum(axis=-1)
            self.category_market_brier = np.einsum("sr,src->sc", sq, self.cats) / self.in_cat

    def round_bp(self, p_bp: NDArray[np.int64]) -> NDArray[np.int64]:
        """The contract's per-round Brier: the floor of the summed squared errors over k 10^4."""
        out: NDArray[np.int64] = np.square(p_bp - MAX_BP * self.x).sum(axis=-1) // (self.k * MAX_BP)
        return out

    def figures(self, p_bp: NDArray[np.int64]) -> SeedFigures:
        brier_bp = self.round_bp(p_bp)
        alpha = (self.base_bp - brier_bp) / MAX_BP
        mean = alpha.mean(axis=1)
        se = alpha.std(axis=1, ddof=1) / np.sqrt(self.rounds)
        p = p_bp / MAX_BP
        rel, res = _murphy(p.reshape(self.seeds, -1), self.x.reshape(self.seeds, -1))
        x = self.x
        delta = (np.square(self.b - x) - np.square(p - x)).sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.where(se > 0, mean / se, np.nan)
            category_alpha = np.einsum("sr,src->sc", delta, self.cats) / self.in_cat
        return SeedFigures(
            brier=(brier_bp / MAX_BP).mean(axis=1),
            alpha=mean,
            alpha_se=se,
            t=t,
            beat=(alpha > 0).mean(axis=1),
            reliability=rel,
            resolution=res,
            category_alpha=category_alpha,
        )


def seed_study(config: SimulationConfig, draws: SimulationDraws) -> SeedStudy:
    """Every archetype's figures at every seed of ``draws`` under ``config``'s parameters."""
    b_bp, x, forecasts = draws.play(config)
    scorer = Scorer(b_bp, x, draws.category, len(config.categories))
    return SeedStudy(
        config=config,
        seeds=draws.seeds,
        market_brier=(scorer.base_bp / MAX_BP).mean(axis=1),
        category_market_brier=scorer.category_market_brier,
        figures={name: scorer.figures(p_bp) for name, p_bp in forecasts.items()},
    )


class SeedFigure(Record):
    """A figure over seeds: its mean and its 5% and 95% quantiles."""

    mean: float
    low: float
    high: float


def _figure(v: Floats) -> SeedFigure:
    low, high = np.nanquantile(v, [0.05, 0.95])
    return SeedFigure(mean=float(np.nanmean(v)), low=float(low), high=float(high))


class SeedRow(Record):
    """One archetype over seeds: Table 5's and 6's figures, and the share of seeds at which its
    alpha is individually significant (|t| >= ``FRONTIER_T``)."""

    agent: str
    kind: str
    figures: dict[str, SeedFigure]
    significant: float
    lowest_reliability: float
    """The share of seeds at which its REL is the lowest of the five and the market's."""


class SeedCategory(Record):
    """One category of Table 7 over seeds: its market Brier and best alpha, how many of the
    five archetypes beat the market there (mean), and the share of seeds each is the best."""

    category: str
    market_brier: SeedFigure
    best_alpha: SeedFigure
    positive: SeedFigure
    best: dict[str, float]


class SeedSummary(Record):
    seeds: int
    first_seed: int
    last_seed: int
    rounds: int
    markets: int
    market_brier: SeedFigure
    rows: tuple[SeedRow, ...]
    categories: tuple[SeedCategory, ...]
    any_frontier_significant: float
    """The share of seeds at which at least one of the five frontier-like archetypes is."""
    any_q_significant: float
    """The same for the three that condition on the truth (q-anchored and calibration-driven),
    those the paper says no test at R = 50 separates from the market."""


def summarise(study: SeedStudy) -> SeedSummary:
    cfg = study.config
    kinds = {a.name: a.kind for a in cfg.archetypes}
    frontier = [n for n in study.figures if kinds[n] in FRONTIER_KINDS]
    q_conditioned = [n for n in frontier if kinds[n] in ("q_anchored", "calibration")]
    significant = {n: np.abs(np.nan_to_num(f.t)) >= FRONTIER_T for n, f in study.figures.items()}
    ranked = frontier + [n for n, k in kinds.items() if k == "market"]
    lowest = np.argmin(np.stack([study.figures[n].reliability for n in ranked]), axis=0)
    rows = tuple(
        SeedRow(
            agent=name,
            kind=kinds[name],
            # the market's t (no variance) is nowhere defined: left out
            figures={
                field: _figure(getattr(f, field))
                for field in _FIELDS
                if np.isfinite(getattr(f, field)).any()
            },
            significant=float(significant[name].mean()),
            lowest_reliability=float(np.mean(lowest == ranked.index(name)))
            if name in ranked
            else 0.0,
        )
        for name, f in study.figures.items()
    )
    alphas = np.stack([study.figures[n].category_alpha for n in frontier])  # agents x S x C
    categories = []
    for c, cat in enumerate(cfg.categories):
        a = alphas[:, :, c]
        played = ~np.isnan(a[0])
        if not played.any():
            continue
        a = a[:, played]
        best = np.argmax(a, axis=0)
        categories.append(
            SeedCategory(
                category=cat.name,
                market_brier=_figure(study.category_market_brier[played, c]),
                best_alpha=_figure(a.max(axis=0)),
                positive=_figure((a > 0).sum(axis=0).astype(np.float64)),
                best={n: float(np.mean(best == i)) for i, n in enumerate(frontier)},
            )
        )
    return SeedSummary(
        seeds=len(study.seeds),
        first_seed=min(study.seeds),
        last_seed=max(study.seeds),
        rounds=cfg.rounds,
        markets=cfg.markets,
        market_brier=_figure(study.market_brier),
        rows=rows,
        categories=tuple(categories),
        any_frontier_significant=float(np.mean(np.any([significant[n] for n in frontier], 0))),
        any_q_significant=float(np.mean(np.any([significant[n] for n in q_conditioned], 0))),
    )


def across_seeds(config: SimulationConfig, seeds: Sequence[int]) -> SeedSummary:
    """The summary of ``config``'s study at ``seeds``."""
    return summarise(seed_study(config, SimulationDraws(config, seeds)))
