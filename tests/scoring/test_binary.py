"""Binary-market metrics: alpha, ECE, Murphy decomposition, anatomy of alpha, distance."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pastcast.scoring import (
    alpha_anatomy,
    alpha_score,
    binary_brier,
    brier,
    ece,
    murphy,
)

probs = st.floats(0.0, 1.0, allow_nan=False)


@st.composite
def binary_sample(draw: st.DrawFn, min_size: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = draw(st.integers(min_size, 60))
    p = np.array(draw(st.lists(probs, min_size=n, max_size=n)))
    b = np.array(draw(st.lists(probs, min_size=n, max_size=n)))
    x = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    return p, b, x


def test_alpha_hand_value_figure_2a() -> None:
    # market 0.60, agent 0.80, YES: (0.4)^2 - (0.2)^2 = 0.12
    assert alpha_score([0.8], [0.6], [1]) == pytest.approx(0.12)


def test_alpha_of_echoing_the_market_is_zero() -> None:
    assert alpha_score([0.3, 0.9], [0.3, 0.9], [1, 0]) == 0.0


@given(binary_sample())
def test_alpha_range_and_antisymmetry(s: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    p, b, x = s
    a = alpha_score(p, b, x)
    assert -1.0 <= a <= 1.0
    assert alpha_score(b, p, x) == pytest.approx(-a, abs=1e-12)
    # equals the difference of the multiclass Brier scores, halved onto the [0, 1] scale
    diff = np.mean(
        [
            brier({"Y": bi, "N": 1 - bi}, "Y" if xi else "N")
            - brier({"Y": pi, "N": 1 - pi}, "Y" if xi else "N")
            for pi, bi, xi in zip(p, b, x, strict=True)
        ]
    )
    assert a == pytest.approx(diff / 2, abs=1e-9)


@given(binary_sample(), st.randoms(use_true_random=False))
def test_permutation_invariance(s: tuple[np.ndarray, np.ndarray, np.ndarray], rnd: object) -> None:
    p, b, x = s
    idx = list(range(p.size))
    rnd.shuffle(idx)  # type: ignore[attr-defined]
    assert alpha_score(p[idx], b[idx], x[idx]) == pytest.approx(alpha_score(p, b, x), abs=1e-12)
    assert ece(p[idx], x[idx]) == pytest.approx(ece(p, x), abs=1e-12)
    m1, m2 = murphy(p, x), murphy(p[idx], x[idx])
    assert m1.reliability == pytest.approx(m2.reliability, abs=1e-12)


def test_alpha_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="outcomes must be 0 or 1"):
        alpha_score([0.5], [0.5], [2])
    with pytest.raises(ValueError, match="within"):
        alpha_score([1.5], [0.5], [1])
    with pytest.raises(ValueError, match="no markets"):
        alpha_score([], [], [])


def test_ece_hand_values() -> None:
    # bin [0.2,0.3): mean p 0.2, freq 0.5 -> gap 0.3 (n=2); bin [0.9,1]: p 0.9, freq 1 -> 0.1 (n=2)
    assert ece([0.2, 0.2, 0.9, 0.9], [0, 1, 1, 1]) == pytest.approx((2 * 0.3 + 2 * 0.1) / 4)
    assert ece([1.0, 0.0], [1, 0]) == 0.0


# no deadline: the first example imports sklearn
@settings(max_examples=60, deadline=None)
@given(binary_sample(min_size=2))
def test_ece_agrees_with_sklearn_calibration_curve(
    s: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    from sklearn.calibration import calibration_curve

    p, _, x = s
    p = np.round(p, 3) + 0.0005  # keep clear of bin edges, whose convention differs
    p = np.clip(p, 0, 1)
    prob_true, prob_pred = calibration_curve(x, p, n_bins=10, strategy="uniform")
    counts = np.bincount(np.clip((p * 10).astype(int), 0, 9), minlength=10)
    counts = counts[counts > 0]
    expected = float(np.sum(counts * np.abs(prob_true - prob_pred)) / p.size)
    assert ece(p, x) == pytest.approx(expected, abs=1e-12)
    assert 0.0 <= ece(p, x) <= 1.0


@given(binary_sample())
def test_murphy_reconstructs_brier_up_to_residual(
    s: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> None:
    p, _, x = s
    m = murphy(p, x)
    assert m.brier == pytest.approx(np.mean((p - x) ** 2), abs=1e-12)
    assert m.uncertainty + m.reliability - m.resolution + m.residual == pytest.approx(
        m.brier, abs=1e-12
    )
    # the residual has the closed form from the proof of Theorem 1
    k = np.clip(np.searchsorted(np.linspace(0, 1, 11)[1:-1], p, side="right"), 0, 9)
    pk = np.array([p[k == j].mean() for j in k])
    ok = np.array([x[k == j].mean() for j in k])
    closed = np.mean((p - pk) ** 2 - 2 * (p - pk) * (x - ok))
    assert m.residual == pytest.approx(closed, abs=1e-12)
    assert 0 <= m.uncertainty <= 0.25 and m.reliability >= 0 and m.resolution >= 0


def test_murphy_residual_zero_at_bin_means() -> None:
    p = np.array([0.05, 0.05, 0.35, 0.35, 0.35, 0.95])
    x = np.array([0, 1, 0, 0, 1, 1])
    m = murphy(p, x)
    assert m.residual == pytest.approx(0.0, abs=1e-15)
    # hand: o = 0.5, UNC .25; REL = (2*(.05-.5)^2 + 3*(.35-1/3)^2 + (.95-1)^2)/6
    assert m.reliability == pytest.approx((2 * 0.45**2 + 3 * (0.35 - 1 / 3) ** 2 + 0.05**2) / 6)
    assert m.resolution == pytest.approx((2 * 0 + 3 * (1 / 3 - 0.5) ** 2 + 0.5**2) / 6)


@settings(max_examples=40, deadline=None)  # the first example imports polars (slow when busy)
@given(st.lists(st.integers(1, 30), min_size=10, max_size=10), st.data())
def test_murphy_agrees_with_model_diagnostics(sizes: list[int], data: st.DataObject) -> None:
    # One distinct forecast per bin with bin frequencies increasing in the forecast: then the
    # isotonic recalibration used by model-diagnostics equals the bin frequencies, and the two
    # decompositions must coincide.
    from model_diagnostics.scoring import SquaredError, decompose

    p_vals = (np.arange(10) + 0.5) / 10
    cells = sorted((data.draw(st.integers(0, n)), n) for n in sizes)
    cells.sort(key=lambda c: c[0] / c[1])
    freqs = [k / n for k, n in cells]
    assume(len(set(freqs)) == 10)  # tied frequencies make isotonic regression pool bins
    p, x = [], []
    for pv, (k1, n) in zip(p_vals, cells, strict=True):
        p += [pv] * n
        x += [1] * k1 + [0] * (n - k1)
    pa, xa = np.array(p), np.array(x)
    m = murphy(pa, xa)
    d = decompose(xa, pa, scoring_function=SquaredError()).row(0, named=True)
    assert m.brier == pytest.approx(d["score"], abs=1e-12)
    assert m.uncertainty == pytest.approx(d["uncertainty"], abs=1e-12)
    assert m.reliability == pytest.approx(d["miscalibration"], abs=1e-9)
    assert m.resolution == pytest.approx(d["discrimination"], abs=1e-9)


@given(binary_sample())
def test_alpha_anatomy_sums_to_alpha(s: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    p, b, x = s
    an = alpha_anatomy(p, b, x)
    assert an.resolution_gain + an.reliability_gap + an.residual == pytest.approx(
        an.alpha, abs=1e-12
    )
    assert an.agent.uncertainty == an.market.uncertainty


@given(p=probs, x=st.integers(0, 1))
def test_binary_brier_is_half_the_multiclass_brier(p: float, x: int) -> None:
    """One Brier: the vectorised binary form is the multiclass score on the [0, 1] scale."""
    truth = "Yes" if x == 1 else "No"
    expected = brier({"Yes": p, "No": 1.0 - p}, truth) / 2.0
    got = float(binary_brier(np.array([p]), np.array([float(x)]))[0])
    assert got == pytest.approx(expected, abs=1e-12)
