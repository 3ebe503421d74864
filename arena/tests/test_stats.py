"""Per-round scores and their statistics, checked against direct computations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena_helpers import make_round
from pastcast.scoring import murphy
from pastcast_arena import RoundResult, arena_report
from pastcast_arena._scoring import outcome_code, payouts_for, score_bp, score_round


def _result(
    rid: int, bench: list[int], outcomes: list[int], preds: dict[str, list[int]], category: str = ""
) -> RoundResult:
    rnd = make_round(bench, rid, tag=f"r{rid}-")
    if category:
        rnd = rnd.model_copy(
            update={
                "markets": tuple(m.model_copy(update={"category": category}) for m in rnd.markets)
            }
        )
    outs = tuple(outcomes)
    return RoundResult(
        round=rnd,
        outcomes=outs,  # type: ignore[arg-type]
        predictions={a: tuple(p) for a, p in preds.items()},
        scores=score_round(rnd, outs, preds),  # type: ignore[arg-type]
        roles={"mkt": "reference"},
    )


def test_score_bp_floors_like_the_contract_and_skips_excluded_markets() -> None:
    # (3333 - 10000)^2 = 44_448_889 -> 4444 bp (floor); the market at 5000: 2500 bp
    assert score_bp([3333], [5000], [1]) == (4444, 2500 - 4444, 1)
    assert score_bp([3333, 10_000], [5000, 0], [1, 2]) == (4444, -1944, 1)
    with pytest.raises(ValueError, match="no resolved market"):
        score_bp([1], [1], [2])
    with pytest.raises(ValueError, match="2 predictions"):
        score_bp([1, 2], [1], [0])


def test_outcomes_from_payouts() -> None:
    assert outcome_code((0, 1), 1) == 1 and outcome_code((1, 0), 1) == 0
    assert outcome_code((0, 0), 0) == 2  # unresolved
    assert outcome_code((1, 1), 2) == 2  # a split payout
    assert outcome_code((1, 0), 1, yes_index=0) == 1
    assert payouts_for(True) == (0, 1) and payouts_for(False) == (1, 0)
    assert payouts_for(True, yes_index=0) == (1, 0)


def test_the_report_matches_direct_computations() -> None:
    from scipy.stats import ttest_1samp

    rng = np.random.default_rng(5)
    results = []
    for rid in range(1, 13):
        bench = rng.integers(500, 9500, size=5).tolist()
        outs = rng.integers(0, 2, size=5).tolist()
        outs[rid % 5] = 2  # one market a round left unresolved
        preds = {
            "good": [
                int(np.clip(b + (1500 if o == 1 else -1500), 0, 10_000))
                for b, o in zip(bench, outs, strict=True)
            ],
            "noisy": rng.integers(0, 10_001, size=5).tolist(),
            "mkt": bench,
        }
        results.append(_result(rid, bench, outs, preds, category="crypto" if rid % 2 else "sports"))
    rep = arena_report(results)
    assert rep.rounds == 12 and rep.markets_scored == 12 * 4
    board = {r.agent: r for r in rep.leaderboard}
    assert [r.agent for r in rep.leaderboard][-1] == "mkt"  # the reference is listed last
    for agent in ("good", "noisy"):
        alpha = np.array([res.scores[agent].alpha_bp / 1e4 for res in results])
        brier = np.array([res.scores[agent].brier_bp / 1e4 for res in results])
        row = board[agent]
        ref = ttest_1samp(alpha, 0.0)
        assert row.alpha == pytest.approx(alpha.mean()) and row.brier == pytest.approx(brier.mean())
        assert row.t == pytest.approx(ref.statistic) and row.p_value == pytest.approx(ref.pvalue)
        assert row.alpha_se == pytest.approx(alpha.std(ddof=1) / math.sqrt(12))
        assert row.brier_se == pytest.approx(brier.std(ddof=1) / math.sqrt(12))
        assert row.beat_market == pytest.approx(np.mean(alpha > 0))
        assert row.predictions == 48
        assert row.shrunk_alpha == pytest.approx(alpha.mean() * 48 / (48 + 140)) and row.provisional
        assert rep.cumulative_alpha[agent][-1] == pytest.approx(alpha.mean())
        assert rep.cumulative_alpha[agent][0] == pytest.approx(alpha[0])
    assert board["good"].alpha > max(0.0, board["noisy"].alpha)
    m = board["mkt"]
    assert (m.alpha, m.alpha_se, m.t, m.beat_market, m.role) == (0.0, 0.0, None, 0.0, "reference")
    # Murphy over the counted predictions equals pastcast.scoring.murphy
    p = [
        res.predictions["noisy"][i] / 1e4
        for res in results
        for i in range(5)
        if res.outcomes[i] != 2
    ]
    x = [res.outcomes[i] for res in results for i in range(5) if res.outcomes[i] != 2]
    mrow = {r.agent: r for r in rep.murphy}["noisy"]
    ref_m = murphy(p, x)
    assert (mrow.reliability, mrow.resolution, mrow.brier) == (
        pytest.approx(ref_m.reliability),
        pytest.approx(ref_m.resolution),
        pytest.approx(ref_m.brier),
    )
    assert {r.agent: r for r in rep.murphy}["mkt"].resolution_gain == 0.0
    cats = {c.category: c for c in rep.categories}
    assert set(cats) == {"crypto", "sports"} and cats["crypto"].rounds == 6
    assert cats["crypto"].markets == 24 and cats["crypto"].agents == 2  # the reference aside
    assert cats["crypto"].best_agent == "good" and cats["crypto"].alpha["mkt"] == 0.0
    crypto = cats["crypto"].alpha
    assert cats["crypto"].positive == (crypto["good"] > 0) + (crypto["noisy"] > 0)


def test_an_agent_missing_rounds_is_averaged_over_its_own_rounds() -> None:
    r1 = _result(1, [5000], [1], {"a": [9000], "mkt": [5000]})
    r2 = _result(2, [5000], [0], {"mkt": [5000]})
    rep = arena_report([r1, r2])
    board = {r.agent: r for r in rep.leaderboard}
    assert board["a"].rounds == 1 and board["a"].alpha_se is None and board["mkt"].rounds == 2
    assert len(rep.cumulative_alpha["a"]) == 1
    with pytest.raises(ValueError, match="no scored rounds"):
        arena_report([])


def test_proposition_2_standard_error_beside_the_empirical_one() -> None:
    # benchmark 50% and 40% (basis points), the agent says 70% and 20%: with q = b,
    # Var_i = 4 b (1 - b)(b - p)^2 = 0.04 and 0.0384, SE = sqrt(0.0784) / 2 = 0.14
    res = _result(1, [5000, 4000], [1, 0], {"a": [7000, 2000]})
    report = arena_report([res])
    (row,) = [r for r in report.leaderboard if r.agent == "a"]
    assert row.alpha_se_model == pytest.approx(0.14, abs=1e-12)


def test_proposition_2_agrees_with_the_spread_of_simulated_rounds() -> None:
    from pastcast_arena import simulate
    from pastcast_arena._simulation import SimulationConfig

    study = simulate(SimulationConfig(seed=137, rounds=200, markets=7))
    for row in study.report.leaderboard:
        if row.role != "agent" or row.alpha_se is None or not row.alpha_se_model:
            continue
        # outcomes drawn independently: the model SE (q = b) is the empirical one's order
        assert 0.6 < row.alpha_se_model / row.alpha_se < 1.6, row
