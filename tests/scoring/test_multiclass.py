"""Per-forecast scores: hand-computed cases, properties, and an independent implementation."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pastcast.records import EpisodeRecord, Forecast
from pastcast.runlog import Grading, Scores, StepRecord
from pastcast.scoring import (
    accuracy,
    brier,
    info_alpha,
    log_loss,
    normalize,
    score_forecast,
    score_step,
    uniform,
)

LABELS = ["a", "b", "c", "d", "e"]


# ---- hand-computed cases -------------------------------------------------------------------


@pytest.mark.parametrize("k", [2, 3, 4, 7])
def test_uniform_forecast_scores(k: int) -> None:
    labels = [f"x{i}" for i in range(k)]
    p = uniform(labels)
    assert brier(p, "x0") == pytest.approx(1 - 1 / k)
    assert accuracy(p, "x0") == pytest.approx(1 / k)
    assert log_loss(p, "x0") == pytest.approx(math.log(k))


def test_uniform_k2_and_k4_exact() -> None:
    assert brier({"Yes": 0.5, "No": 0.5}, "Yes") == 0.5
    assert brier(uniform("abcd"), "c") == 0.75


def test_unreported_truth_costs_one_plus_reported_mass() -> None:
    # truth 'c' unreported: (0.7)^2 + (0.3)^2 + (0 - 1)^2
    assert brier({"a": 0.7, "b": 0.3}, "c") == pytest.approx(0.49 + 0.09 + 1.0)
    assert accuracy({"a": 0.7, "b": 0.3}, "c") == 0.0
    assert log_loss({"a": 0.7, "b": 0.3}, "c") == pytest.approx(-math.log(1e-3))


def test_negative_entries_are_clipped_then_renormalised() -> None:
    # {-0.2, 0.6, 0.2} -> {0, 0.75, 0.25}
    p = {"a": -0.2, "b": 0.6, "c": 0.2}
    assert normalize(p) == pytest.approx({"a": 0.0, "b": 0.75, "c": 0.25})
    assert brier(p, "b") == pytest.approx(0.25**2 + 0.25**2)
    assert log_loss(p, "c") == pytest.approx(-math.log(0.25))


def test_unnormalised_report_is_rescaled() -> None:
    assert brier({"a": 2.0, "b": 2.0}, "a") == 0.5


def test_unsupported_label_keeps_its_mass() -> None:
    # 'maybe' is not an offered outcome but is still penalised
    assert brier({"Yes": 0.6, "maybe": 0.4}, "Yes") == pytest.approx(0.16 + 0.16)


def test_fractional_tie_accuracy() -> None:
    assert accuracy({"a": 0.4, "b": 0.4, "c": 0.2}, "a") == 0.5
    assert accuracy({"a": 0.4, "b": 0.4, "c": 0.2}, "c") == 0.0
    assert accuracy({"a": 0.1 + 0.2, "b": 0.3, "c": 0.4}, "c") == 1.0
    assert accuracy({"a": 1 / 3, "b": 1 / 3, "c": 1 / 3}, "b") == pytest.approx(1 / 3)


def test_normalize_rejects_no_mass() -> None:
    assert normalize({}) is None
    assert normalize({"a": 0.0, "b": -1.0}) is None
    assert normalize({"a": float("nan")}) is None
    assert normalize({"a": float("inf"), "b": 1.0}) == {"a": 0.0, "b": 1.0}
    with pytest.raises(ValueError, match="no positive finite"):
        brier({"a": 0.0}, "a")


def test_info_alpha_hand_values() -> None:
    assert info_alpha(0.8, 0.4) == pytest.approx(math.log(2))
    assert info_alpha(0.0, 0.5) == pytest.approx(math.log(1e-3) - math.log(0.5))
    assert info_alpha(0.3, 0.3) == 0.0


# ---- records --------------------------------------------------------------------------------


def _grading(market: dict[str, float] | None = None) -> Grading:
    return Grading(truth="b", labels=("a", "b", "c", "d"), market_probs=market)


def test_score_forecast_usable_and_market() -> None:
    s = score_forecast(Forecast(probs={"a": 0.2, "b": 0.8}), _grading({"a": 1.0, "b": 1.0}))
    assert s.brier == pytest.approx(0.04 + 0.04)
    assert s.accuracy == 1.0
    assert s.log_loss == pytest.approx(-math.log(0.8))
    assert s.info_alpha == pytest.approx(math.log(0.8 / 0.5))
    assert not s.fallback_used


@pytest.mark.parametrize(
    "forecast",
    [
        Forecast(probs={"a": 0.3, "b": 0.7}, usable=False, failure_reason="invalid_json"),
        Forecast(probs={"a": 0.0, "b": -0.5}),
        Forecast(probs={}),
    ],
)
def test_unusable_forecast_uniform_fallback(forecast: Forecast) -> None:
    s = score_forecast(forecast, _grading({"b": 0.25, "a": 0.75}))
    assert s.fallback_used
    assert s.brier == pytest.approx(0.75)
    assert s.accuracy == pytest.approx(0.25)
    assert s.log_loss == pytest.approx(math.log(4))
    assert s.info_alpha == pytest.approx(0.0)  # uniform 1/4 vs market 1/4


def test_worst_fallback() -> None:
    s = score_forecast(Forecast(probs={}), _grading(), fallback="worst")
    assert (s.brier, s.accuracy, s.log_loss) == (2.0, 0.0, pytest.approx(-math.log(1e-3)))
    assert s.info_alpha is None and s.fallback_used


def test_info_alpha_absent_when_market_lacks_truth() -> None:
    assert score_forecast(Forecast(probs={"b": 1.0}), _grading({"a": 1.0})).info_alpha is None
    assert score_forecast(Forecast(probs={"b": 1.0}), _grading({"b": 0.0})).info_alpha is None


def test_score_step_ignores_stored_scores() -> None:
    rec = StepRecord(
        run_id="r",
        agent="m",
        event_id="e",
        step_index=0,
        cutoff=datetime(2024, 1, 1, tzinfo=UTC),
        forecast=Forecast(probs={"a": 1.0}),
        episode=EpisodeRecord(),
        grading=_grading(),
        scores=Scores(brier=0.0, accuracy=1.0, log_loss=0.0),
    )
    assert score_step(rec).brier == 2.0


# ---- properties -----------------------------------------------------------------------------

prob_dicts = st.dictionaries(
    st.sampled_from(LABELS),
    st.floats(min_value=-1.0, max_value=10.0, allow_nan=False),
    min_size=1,
).filter(lambda d: normalize(d) is not None)


@given(prob_dicts, st.sampled_from(LABELS))
def test_ranges(p: dict[str, float], truth: str) -> None:
    b = brier(p, truth)
    assert -1e-12 <= b <= 2 + 1e-12
    assert 0 <= accuracy(p, truth) <= 1
    assert 0 <= log_loss(p, truth) <= -math.log(1e-3) + 1e-12


@given(prob_dicts, st.sampled_from(LABELS), st.randoms(use_true_random=False))
def test_label_order_invariance(p: dict[str, float], truth: str, rnd: object) -> None:
    items = list(p.items())
    rnd.shuffle(items)  # type: ignore[attr-defined]
    q = dict(items)
    assert brier(q, truth) == pytest.approx(brier(p, truth), abs=1e-12)
    assert accuracy(q, truth) == accuracy(p, truth)
    assert log_loss(q, truth) == log_loss(p, truth)


def _simplex(draw: st.DrawFn, k: int) -> np.ndarray:
    w = np.array(draw(st.lists(st.floats(0.01, 1.0), min_size=k, max_size=k)))
    return w / w.sum()


@st.composite
def two_distributions(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    k = draw(st.integers(2, 5))
    return _simplex(draw, k), _simplex(draw, k)


def _expected(score: object, p: np.ndarray, q: np.ndarray) -> float:
    labels = LABELS[: len(p)]
    pd = dict(zip(labels, p.tolist(), strict=True))
    return sum(qi * score(pd, lab) for lab, qi in zip(labels, q, strict=True))  # type: ignore[operator]


@given(two_distributions())
def test_brier_and_log_loss_are_proper(pq: tuple[np.ndarray, np.ndarray]) -> None:
    p, q = pq
    for score in (brier, log_loss):
        assert _expected(score, q, q) <= _expected(score, p, q) + 1e-12
    # strictly proper: the gap for Brier is exactly ||p - q||^2
    gap = _expected(brier, p, q) - _expected(brier, q, q)
    assert gap == pytest.approx(float(np.sum((p - q) ** 2)), abs=1e-9)


# no deadline: the first example imports sklearn
@settings(max_examples=50, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=2, max_size=40),
    st.lists(st.booleans(), min_size=40, max_size=40),
)
def test_binary_agrees_with_sklearn(ps: list[float], ys: list[bool]) -> None:
    from sklearn.metrics import brier_score_loss
    from sklearn.metrics import log_loss as sk_log_loss

    y = np.array(ys[: len(ps)], dtype=int)
    p = np.array(ps)
    ours_b = np.mean(
        [
            brier({"Yes": pi, "No": 1 - pi}, "Yes" if yi else "No")
            for pi, yi in zip(p, y, strict=True)
        ]
    )
    # sklearn's binary Brier is on the [0, 1] scale: ours is twice it
    assert ours_b == pytest.approx(2 * brier_score_loss(y, p, pos_label=1), abs=1e-12)
    pc = np.clip(p, 1e-3, 1 - 1e-3)  # the floor binds only for the truth side; clip both
    ours_l = np.mean(
        [
            log_loss({"Yes": pi, "No": 1 - pi}, "Yes" if yi else "No")
            for pi, yi in zip(pc, y, strict=True)
        ]
    )
    assert ours_l == pytest.approx(sk_log_loss(y, pc, labels=[0, 1]), abs=1e-9)
