"""Alpha variance (Proposition 2) and sample size (Proposition 3, Table 1)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pastcast.scoring.analyses import alpha_standard_error, alpha_variance, power_n, power_rounds

# Foresight Arena Table 1: alpha*, predictions n, rounds of 7 (q = 0.5, |b - p| = 0.15,
# one-sided 5% significance, 80% power, quantiles rounded to 1.645 and 0.842).
TABLE_1 = [
    (0.005, 5567, 796),
    (0.010, 1392, 199),
    (0.020, 348, 50),
    (0.030, 155, 23),
    (0.050, 56, 8),
    (0.100, 14, 2),
]


@pytest.mark.parametrize(("alpha", "n", "rounds"), TABLE_1)
def test_table_1_reproduced(alpha: float, n: int, rounds: int) -> None:
    got = power_n(alpha, z_alpha=1.645, z_power=0.842)
    assert got == n
    assert power_rounds(got, 7) == rounds


def test_equation_6_constant() -> None:
    # n >= 0.1391 / alpha^2 (appendix A.2)
    assert power_n(1.0, z_alpha=1.645, z_power=0.842) == 1
    assert power_n(0.001, z_alpha=1.645, z_power=0.842) == int(np.ceil(0.13916630 / 1e-6))


def test_exact_quantiles_by_default() -> None:
    from scipy.stats import norm

    z = norm.ppf(0.95) + norm.ppf(0.8)
    assert power_n(0.02) == int(np.ceil(z**2 * 0.25 * 4 * 0.0225 / 0.0004))
    assert power_n(0.02, significance=0.01, power=0.9) > power_n(0.02)


def test_power_n_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="alpha must be positive"):
        power_n(0.0)
    with pytest.raises(ValueError, match="q must be"):
        power_n(0.02, q=1.0)


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_alpha_variance_matches_two_point_distribution(b: float, p: float, q: float) -> None:
    d1 = (b - 1) ** 2 - (p - 1) ** 2
    d0 = b**2 - p**2
    mean = q * d1 + (1 - q) * d0
    var = q * (d1 - mean) ** 2 + (1 - q) * (d0 - mean) ** 2
    assert alpha_variance(b, p, q) == pytest.approx(var, abs=1e-12)


def test_alpha_standard_error_homogeneous() -> None:
    n = 350
    se = alpha_standard_error([0.5] * n, [0.65] * n, [0.5] * n)
    assert se == pytest.approx(2 * 0.15 * 0.5 / np.sqrt(n))


def test_alpha_standard_error_monte_carlo() -> None:
    rng = np.random.default_rng(0)
    n = 50
    b, p, q = rng.uniform(size=n), rng.uniform(size=n), rng.uniform(size=n)
    x = rng.uniform(size=(20000, n)) < q
    means = ((b - x) ** 2 - (p - x) ** 2).mean(axis=1)
    assert means.std() == pytest.approx(alpha_standard_error(b, p, q), rel=0.03)
