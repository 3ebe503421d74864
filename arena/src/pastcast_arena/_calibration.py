"""Fitting the simulation's parameters to the paper's Tables 5-7 as means over 400 seeds, not
seed 137's values (whose fit would fit that seed's luck too); the stages and why sigma is set,
not fitted: docs/arena.md, "Over seeds"."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from pastcast.records import Record
from pastcast_arena._paper import (
    PAPER_CATEGORIES,
    PAPER_LEADERBOARD,
    PaperComparison,
    PaperRow,
    compare_seeds_with_paper,
)
from pastcast_arena._seeds import SEEDS, Scorer, SeedFigures, across_seeds
from pastcast_arena._simulation import (
    FRONTIER_KINDS,
    Archetype,
    Category,
    SimulationConfig,
    SimulationDraws,
    _predict,
    _to_bp,
    market_cells,
)

Floats = NDArray[np.float64]


class CalibrationFit(Record):
    """The fitted configuration and every figure of Tables 5-7 beside the paper's (means and
    5-95% ranges over the seeds)."""

    config: SimulationConfig
    comparison: tuple[PaperComparison, ...]


class _Market:
    """One market configuration's prices, truths and outcomes at every seed, and a scorer."""

    def __init__(self, config: SimulationConfig, draws: SimulationDraws) -> None:
        self.b_bp, self.q, self.x = draws.market(config)
        self.scorer = Scorer(self.b_bp, self.x, draws.category, len(config.categories))
        self.draws = draws

    def figures(self, config: SimulationConfig, arch: Archetype) -> SeedFigures:
        """``arch``'s figures under ``config``'s category signals (its market is this one)."""
        i = [a.name for a in config.archetypes].index(arch.name)
        signal = np.array([c.signal for c in config.categories])[self.draws.category][..., None]
        p = _predict(arch, signal, self.q, self.b_bp / 10_000, self.draws.agent_draws[i])
        return self.scorer.figures(_to_bp(p))


def _with(config: SimulationConfig, arch: Archetype) -> SimulationConfig:
    return config.model_copy(
        update={"archetypes": tuple(arch if a.name == arch.name else a for a in config.archetypes)}
    )


def _root(f: Callable[[float], float], low: float, high: float, steps: int = 40) -> float:
    """Where ``f`` (increasing on [low, high]) crosses 0, by bisection; an end if it does not."""
    if f(low) >= 0:
        return low
    if f(high) <= 0:
        return high
    for _ in range(steps):
        mid = (low + high) / 2
        low, high = (mid, high) if f(mid) < 0 else (low, mid)
    return (low + high) / 2


def _fit_concentration(
    config: SimulationConfig, draws: SimulationDraws, cat: Category, sel: NDArray[np.bool_],
    target: float,
) -> float:  # fmt: skip
    """The concentration whose mean market Brier over the cells ``sel`` (one category's rounds,
    seeds x rounds) is ``target``: regula falsi on log a (a larger a: prices nearer 1/2, a
    larger Brier), on those cells only."""
    u, z, o = draws.price_u[sel], draws.truth_z[sel], draws.outcome_u[sel]

    def brier(log_a: float) -> float:
        a = np.full(u.shape, np.exp(log_a))
        b_bp, _, x = market_cells(a, np.full(u.shape, cat.unpriced), config.market_slope, u, z, o)
        return float(np.mean(np.square(b_bp / 10_000 - x))) - target

    low, high = np.log(0.1), np.log(50.0)
    f_low, f_high = brier(low), brier(high)
    if f_low >= 0 or f_high <= 0:
        return float(np.exp(low if f_low >= 0 else high))
    for _ in range(12):
        mid = high - f_high * (high - low) / (f_high - f_low)
        f_mid = brier(mid)
        if abs(f_mid) < 2e-5:
            break
        # Illinois: halve the kept end's value so the bracket shrinks from both sides
        if f_mid < 0:
            low, f_low, f_high = mid, f_mid, f_high / 2
        else:
            high, f_high, f_low = mid, f_mid, f_low / 2
    return float(np.exp(mid))


def _fit_market(
    config: SimulationConfig, draws: SimulationDraws, market: PaperRow
) -> SimulationConfig:
    targets = {c.category: c.market_brier for c in PAPER_CATEGORIES}
    best: tuple[float, SimulationConfig] | None = None
    # kappa below 1: a market a little overconfident, the miscalibration a calibration-driven
    # agent corrects (the paper's market reliability, 0.0079, is above what 350 forecasts of a
    # calibrated market show)
    for slope in np.linspace(0.70, 1.0, 13):
        trial = config.model_copy(update={"market_slope": round(float(slope), 3)})
        cats = list(trial.categories)
        for i, cat in enumerate(cats):
            sel = draws.category == i
            if cat.name in targets and sel.any():
                a = _fit_concentration(trial, draws, cat, sel, targets[cat.name])
                cats[i] = cats[i].model_copy(update={"concentration": round(a, 3)})
        trial = trial.model_copy(update={"categories": tuple(cats)})
        m = _Market(trial, draws)
        f = m.scorer.figures(m.b_bp)
        loss = (
            ((float(np.mean(m.scorer.base_bp)) / 10_000 - market.brier) / 0.002) ** 2
            + ((float(f.reliability.mean()) - market.reliability) / 0.0005) ** 2
            + ((float(f.resolution.mean()) - market.resolution) / 0.0005) ** 2
        )
        if best is None or loss < best[0]:
            best = (loss, trial)
    assert best is not None
    return best[1]


def _fit_tracker(
    config: SimulationConfig, market: _Market, arch: Archetype, row: PaperRow
) -> Archetype:
    def alpha(noise: float) -> float:
        trial = arch.model_copy(update={"noise": noise})
        return float(market.figures(config, trial).alpha.mean())

    # alpha falls as the noise grows (about -sigma^2)
    noise = _root(lambda v: row.alpha - alpha(v), 0.0, 0.3)
    return arch.model_copy(update={"noise": round(noise, 4)})


def _fit_forecaster(
    config: SimulationConfig, market: _Market, arch: Archetype, row: PaperRow
) -> Archetype:
    names = ("pull", "shrink", "noise")

    def build(v: Floats) -> Archetype:
        return arch.model_copy(update={n: float(abs(x)) for n, x in zip(names, v, strict=True)})

    def loss(v: Floats) -> float:
        f = market.figures(config, build(v))
        se = 0.0 if row.alpha_se is None else ((f.alpha_se.mean() - row.alpha_se) / 0.0002) ** 2
        return float(
            ((f.alpha.mean() - row.alpha) / 0.0002) ** 2
            + se
            + ((f.reliability.mean() - row.reliability) / 0.0005) ** 2
            + ((f.resolution.mean() - row.resolution) / 0.0005) ** 2
        )

    from scipy.optimize import minimize  # imported when first used: seconds at start-up

    start = np.array([getattr(arch, n) for n in names])
    found = minimize(loss, start, method="Nelder-Mead",
                     options={"xatol": 1e-4, "fatol": 1e-3, "maxiter": 400})  # fmt: skip
    fitted = build(found.x)
    return fitted.model_copy(update={n: round(getattr(fitted, n), 4) for n in names})


def _fit_signals(config: SimulationConfig, market: _Market) -> SimulationConfig:
    targets = {c.category: c.best_alpha for c in PAPER_CATEGORIES}
    frontier = [a for a in config.archetypes if a.kind in FRONTIER_KINDS]
    cats = list(config.categories)
    for i, cat in enumerate(cats):
        if cat.name not in targets or not np.any(market.draws.category == i):
            continue

        def best(signal: float, i: int = i, target: float = targets[cat.name]) -> float:
            cats[i] = cats[i].model_copy(update={"signal": signal})
            trial = config.model_copy(update={"categories": tuple(cats)})
            alphas = np.stack([market.figures(trial, a).category_alpha[:, i] for a in frontier])
            return float(np.nanmean(alphas.max(axis=0))) - target

        # a grid, not a root: past a point a larger signal overshoots (the forecast moves
        # further than q - b) and the best alpha falls again. The best of five noisy category
        # alphas is above the best archetype's mean: a target below what any signal gives
        # (geopolitics, -0.0019) gets the nearest
        grid = np.arange(0.0, 2.001, 0.04)
        signal = float(grid[int(np.argmin([abs(best(float(v))) for v in grid]))])
        cats[i] = cats[i].model_copy(update={"signal": round(signal, 2)})
    return config.model_copy(update={"categories": tuple(cats)})


def calibrate_simulation(config: SimulationConfig | None = None) -> CalibrationFit:
    """Fit ``config``'s parameters (default: the shipped ones, R = 50, k = 7) to the paper's
    Tables 5-7 as means over seeds 0-399 (twice the summary's, so that the fitted means carry
    half the seeds' luck), the signal and forecaster stages twice."""
    cfg, seeds = config or SimulationConfig(), range(2 * SEEDS)
    draws = SimulationDraws(cfg, seeds)
    rows = {r.label: r for r in PAPER_LEADERBOARD}
    cfg = _fit_market(cfg, draws, rows["Market Consensus"])
    market = _Market(cfg, draws)
    for arch in cfg.archetypes:
        if arch.kind == "market_tracking" and arch.paper_label in rows:
            cfg = _with(cfg, _fit_tracker(cfg, market, arch, rows[arch.paper_label]))
    for _ in range(2):
        cfg = _fit_signals(cfg, market)
        for arch in cfg.archetypes:
            if arch.kind in ("q_anchored", "calibration") and arch.paper_label in rows:
                cfg = _with(cfg, _fit_forecaster(cfg, market, arch, rows[arch.paper_label]))
    labels = {a.name: a.paper_label for a in cfg.archetypes}
    return CalibrationFit(
        config=cfg, comparison=compare_seeds_with_paper(across_seeds(cfg, seeds), labels)
    )
