"""Statistics over finished rounds (Foresight Arena section 3.6 and appendix C), from the
per-round scores and the revealed predictions of the counted markets, with the formulas of
``pastcast.scoring`` (docs/arena.md, "Scoring and statistics")."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields

import numpy as np
from numpy.typing import NDArray

from pastcast.records import Record
from pastcast.reports import leaderboard_rows
from pastcast.scoring import KAPPA, alpha_anatomy, alpha_score, alpha_test, binary_brier, shrink
from pastcast.scoring.analyses import alpha_standard_error
from pastcast_arena._records import (
    MAX_BP,
    OUTCOME_EXCLUDED,
    OUTCOME_YES,
    UNCATEGORIZED,
    RoundResult,
)
from pastcast_arena._scoring import score_bp

MURPHY_BINS = 10
"""Equal-width bins of the Murphy decomposition (the paper's)."""


def _finite(x: float) -> float | None:
    """NaN/inf become None so reports are valid JSON (a t-statistic of a constant series)."""
    return x if math.isfinite(x) else None


class RoundRow(Record):
    round_id: int
    agent: str
    brier_bp: int
    alpha_bp: int
    brier: float
    alpha: float
    resolved: int


class LeaderboardRow(Record):
    """One agent's cumulative scores (docs/arena.md, "Scoring and statistics"): ``alpha_se``
    over its per-round alphas, ``alpha_se_model`` Proposition 2's with q_i = b_i."""

    agent: str
    role: str
    rounds: int
    predictions: int
    brier: float
    brier_se: float | None
    alpha: float
    alpha_se: float | None
    alpha_se_model: float | None
    t: float | None
    p_value: float | None
    beat_market: float
    shrunk_alpha: float
    provisional: bool


class MurphyRow(Record):
    """Brier = UNC + REL - RES (+ binning residual) over all counted predictions, and alpha's
    anatomy against the benchmark prices: alpha = resolution gain + reliability gap (+ residual)."""

    agent: str
    n: int
    uncertainty: float
    reliability: float
    resolution: float
    brier: float
    residual: float
    resolution_gain: float
    reliability_gap: float


class CategoryRow(Record):
    category: str
    rounds: int
    markets: int
    market_brier: float
    alpha: dict[str, float]
    """Mean per-market alpha of each agent over the category's counted markets."""
    best_agent: str | None
    best_alpha: float | None
    positive: int
    """Agents (role ``agent``) with a positive alpha in the category."""
    agents: int


class ArenaReport(Record):
    rounds: int
    """Scored rounds (a round none of whose markets resolved is not scored)."""
    unscored_rounds: int
    markets_scored: int
    market_brier: float
    market_brier_sd: float | None
    leaderboard: tuple[LeaderboardRow, ...]
    murphy: tuple[MurphyRow, ...]
    categories: tuple[CategoryRow, ...]
    cumulative_alpha: dict[str, tuple[float, ...]]
    cumulative_brier: dict[str, tuple[float, ...]]
    per_round: tuple[RoundRow, ...]


@dataclass(frozen=True)
class MarketRows:
    """One row per (agent, counted market): prediction, benchmark and outcome on [0, 1]."""

    agent: NDArray[np.object_]
    round_id: NDArray[np.int64]
    market_id: NDArray[np.object_]
    category: NDArray[np.object_]
    p: NDArray[np.float64]
    b: NDArray[np.float64]
    x: NDArray[np.float64]


def market_rows(results: Sequence[RoundResult]) -> MarketRows:
    cols: dict[str, list[object]] = defaultdict(list)
    for res in results:
        bench = res.round.benchmark_bp()
        for agent in sorted(res.predictions):
            preds = res.predictions[agent]
            for i, m in enumerate(res.round.markets):
                if res.outcomes[i] == OUTCOME_EXCLUDED:
                    continue
                cols["agent"].append(agent)
                cols["round_id"].append(res.round.round_id)
                cols["market_id"].append(m.market_id)
                cols["category"].append(m.category or UNCATEGORIZED)
                cols["p"].append(preds[i] / MAX_BP)
                cols["b"].append(bench[i] / MAX_BP)
                cols["x"].append(float(res.outcomes[i] == OUTCOME_YES))
    text = ("agent", "market_id", "category")
    return MarketRows(
        **{
            f.name: np.asarray(cols[f.name], dtype=object if f.name in text else None)
            for f in fields(MarketRows)
        }
    )


def _roles(results: Sequence[RoundResult]) -> dict[str, str]:
    roles: dict[str, str] = {}
    for res in results:
        for agent in res.scores:
            roles.setdefault(agent, res.roles.get(agent, "agent"))
    return roles


def model_standard_errors(rows: MarketRows) -> dict[str, float]:
    """Proposition 2's SE of each agent's mean per-market alpha, with q_i = b_i."""
    b, selections = rows.b, {name: rows.agent == name for name in sorted(set(rows.agent))}
    return {name: alpha_standard_error(b[s], rows.p[s], b[s]) for name, s in selections.items()}


def standings(
    per_round: Sequence[RoundRow],
    n_pred: Mapping[str, int],
    roles: Mapping[str, str],
    model_se: Mapping[str, float],
) -> tuple[LeaderboardRow, ...]:
    """The leaderboard of per-round scores (in the order given), each agent's counted
    predictions, roles (absent: ``agent``) and Proposition 2's standard errors: the one
    computation behind the off-chain report and the leaderboard read from a chain, in the
    reports' leaderboard order (``pastcast.reports.leaderboard_rows``)."""
    by_agent: dict[str, list[RoundRow]] = defaultdict(list)
    for row in per_round:
        by_agent[row.agent].append(row)
    out = []
    for agent, rows in by_agent.items():
        brier = np.array([r.brier for r in rows])
        alpha = np.array([r.alpha for r in rows])
        at = alpha_test(alpha, KAPPA)
        shrunk, provisional = shrink(at.mean, n_pred.get(agent, 0), KAPPA)
        out.append(
            LeaderboardRow(
                agent=agent,
                role=roles.get(agent, "agent"),
                rounds=len(rows),
                predictions=n_pred.get(agent, 0),
                brier=float(brier.mean()),
                brier_se=_finite(alpha_test(brier).se),
                alpha=at.mean,
                alpha_se=_finite(at.se),
                alpha_se_model=model_se.get(agent),
                t=_finite(at.t),
                p_value=_finite(at.p_value),
                beat_market=float(np.mean(alpha > 0)),
                shrunk_alpha=shrunk,
                provisional=provisional,
            )
        )
    # Agents by shrunk alpha then Brier; references (the market) listed apart, last, alike.
    ranked = sorted(out, key=_rank)
    agents, references = leaderboard_rows(ranked, _rank)
    return (*agents, *references)


def _rank(row: LeaderboardRow) -> tuple[float, float, str]:
    return -row.shrunk_alpha, row.brier, row.agent


def _murphy(rows: MarketRows) -> tuple[MurphyRow, ...]:
    out = []
    for name in sorted(set(rows.agent)):
        sel = rows.agent == name
        an = alpha_anatomy(rows.p[sel], rows.b[sel], rows.x[sel], MURPHY_BINS)
        parts = {k: v for k, v in asdict(an.agent).items() if k != "bins"}
        gains = {"resolution_gain": an.resolution_gain, "reliability_gap": an.reliability_gap}
        out.append(MurphyRow(agent=name, **parts, **gains))
    return tuple(out)


def _categories(rows: MarketRows, roles: dict[str, str]) -> tuple[CategoryRow, ...]:
    agent, rid, p, b, x = rows.agent, rows.round_id, rows.p, rows.b, rows.x
    out = []
    for name in sorted(set(rows.category)):
        in_cat = rows.category == name
        # one benchmark per (round, market): take the first agent's rows
        first = in_cat & (agent == agent[in_cat][0])
        alphas = {}
        for a in sorted(set(agent[in_cat])):
            sel = in_cat & (agent == a)
            alphas[a] = alpha_score(p[sel], b[sel], x[sel])
        forecasters = {a: v for a, v in alphas.items() if roles.get(a, "agent") == "agent"}
        best = max(forecasters.items(), key=lambda kv: (kv[1], kv[0]), default=None)
        out.append(
            CategoryRow(
                category=name,
                rounds=len(set(rid[in_cat].tolist())),
                markets=len(
                    set(zip(rid[first].tolist(), rows.market_id[first].tolist(), strict=True))
                ),
                market_brier=float(binary_brier(b[first], x[first]).mean()),
                alpha=alphas,
                best_agent=None if best is None else best[0],
                best_alpha=None if best is None else best[1],
                positive=sum(v > 0 for v in forecasters.values()),
                agents=len(forecasters),
            )
        )
    return tuple(out)


def arena_report(results: Sequence[RoundResult]) -> ArenaReport:
    """The leaderboard, Murphy table, per-category table and cumulative series of ``results``
    (rounds in the order given; each agent's series covers the rounds it was scored in).
    Rounds without scores (nothing resolved) are counted and left out."""
    unscored = sum(not r.scores for r in results)
    results = [r for r in results if r.scores]
    if not results:
        raise ValueError("no scored rounds to report on")
    per_round = tuple(
        RoundRow(**s.model_dump(), brier=s.brier, alpha=s.alpha)
        for res in results
        for _, s in sorted(res.scores.items())
    )
    rows = market_rows(results)
    roles = _roles(results)
    n_pred = Counter(rows.agent.tolist())
    cumulative_alpha: dict[str, tuple[float, ...]] = {}
    cumulative_brier: dict[str, tuple[float, ...]] = {}
    for agent in sorted({r.agent for r in per_round}):
        mine = [r for r in per_round if r.agent == agent]
        steps = np.arange(1, len(mine) + 1)
        cumulative_alpha[agent] = tuple(np.cumsum([r.alpha for r in mine]) / steps)
        cumulative_brier[agent] = tuple(np.cumsum([r.brier for r in mine]) / steps)
    bench = [res.round.benchmark_bp() for res in results]
    market_brier = (
        np.array([score_bp(b, b, r.outcomes)[0] for b, r in zip(bench, results, strict=True)])
        / MAX_BP
    )
    return ArenaReport(
        rounds=len(results),
        unscored_rounds=unscored,
        markets_scored=sum(sum(o != OUTCOME_EXCLUDED for o in r.outcomes) for r in results),
        market_brier=float(market_brier.mean()),
        market_brier_sd=float(market_brier.std(ddof=1)) if market_brier.size >= 2 else None,
        leaderboard=standings(per_round, n_pred, roles, model_standard_errors(rows)),
        murphy=_murphy(rows) if rows.agent.size else (),
        categories=_categories(rows, roles) if rows.agent.size else (),
        cumulative_alpha=cumulative_alpha,
        cumulative_brier=cumulative_brier,
        per_round=per_round,
    )
