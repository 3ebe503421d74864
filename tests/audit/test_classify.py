"""The audit's classifier and AUC against scikit-learn, and its interval on noise and signal."""

from __future__ import annotations

import numpy as np
import pytest

from pastcast.audit._classify import (
    auc,
    auc_interval,
    fit_logistic,
    out_of_fold_scores,
)


def _data(n: int, signal: float, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` events of 1-5 rows each; the outcome moves the first feature by ``signal``."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(1, 6, size=n)
    groups = np.repeat(np.arange(n), rows)
    outcome = (rng.random(n) < 0.4).astype(np.float64)
    event_x = rng.normal(size=(n, 4))
    event_x[:, 0] += signal * outcome
    x = event_x[groups] + 0.3 * rng.normal(size=(groups.size, 4))
    return x, outcome[groups], groups


def test_logistic_regression_matches_scikit_learn() -> None:
    from sklearn.linear_model import LogisticRegression

    x, y, _ = _data(200, 1.0, 0)
    ours = fit_logistic(x, y, l2=2.0)
    ref = LogisticRegression(C=1 / 2.0, tol=1e-12, max_iter=10_000).fit(x, y)
    assert np.allclose(ours[1:], ref.coef_[0], atol=1e-5)
    assert ours[0] == pytest.approx(ref.intercept_[0], abs=1e-5)
    fitted = 1.0 / (1.0 + np.exp(-(ours[0] + x @ ours[1:])))  # the positive class's probability
    assert np.allclose(fitted, ref.predict_proba(x)[:, 1], atol=1e-6)


def test_auc_matches_scikit_learn_with_ties() -> None:
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(1)
    y = (rng.random(300) < 0.3).astype(np.float64)
    scores = np.round(rng.normal(size=300) + y, 1)  # many ties
    assert auc(scores, y) == pytest.approx(roc_auc_score(y, scores), abs=1e-12)
    assert np.isnan(auc(scores, np.zeros(300)))


def test_interval_covers_one_half_on_noise_and_not_on_signal() -> None:
    x, y, g = _data(300, 0.0, 2)
    scores = out_of_fold_scores(x, y, g)
    low, high = auc_interval(scores, y, g, draws=500)
    assert low < 0.5 < high
    x, y, g = _data(300, 1.0, 3)
    scores = out_of_fold_scores(x, y, g)
    low, high = auc_interval(scores, y, g, draws=500)
    assert 0.5 < low < auc(scores, y) < high


def test_out_of_fold_scores_keep_each_event_in_one_fold() -> None:
    # Every row of an event is a copy of the others: rows scored by different models (an event
    # split across folds) would get different scores.
    x, y, g = _data(100, 1.0, 4)
    first = {int(k): i for i, k in reversed(list(enumerate(g)))}
    x = x[[first[int(k)] for k in g]]
    scores = out_of_fold_scores(x, y, g, folds=5, seed=0)
    for k in np.unique(g):
        assert np.ptp(scores[g == k]) == 0.0
    assert np.array_equal(scores, out_of_fold_scores(x, y, g, folds=5, seed=0))
    assert not np.array_equal(scores, out_of_fold_scores(x, y, g, folds=5, seed=1))
