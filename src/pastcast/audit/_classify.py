"""A small classifier and its honest evaluation: L2-regularised logistic regression (Newton's
method in numpy), out-of-fold scores from event-grouped cross-validation, the ROC AUC, and an
event-clustered bootstrap interval of that AUC.

Written here rather than taken from scikit-learn so that the audit needs nothing beyond the core
dependencies; the tests compare it with scikit-learn's ``LogisticRegression`` and
``roc_auc_score``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]


def _standardise(x: Floats, ref: Floats) -> Floats:
    mean = ref.mean(axis=0)
    sd = ref.std(axis=0)
    sd[sd == 0] = 1.0  # a constant column carries nothing; keep it at zero
    out: Floats = (x - mean) / sd
    return out


def fit_logistic(x: Floats, y: Floats, l2: float = 1.0, iterations: int = 50) -> Floats:
    """Coefficients (intercept first) maximising the log-likelihood minus ``l2/2 * |w|^2``
    (the intercept is not penalised), by Newton's method."""
    design = np.hstack([np.ones((x.shape[0], 1)), x])
    w = np.zeros(design.shape[1])
    penalty = np.full(design.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(design @ w)))
        grad = design.T @ (p - y) + penalty * w
        hess = (
            (design * (p * (1 - p))[:, None]).T @ design
            + np.diag(penalty)
            + 1e-9 * np.eye(design.shape[1])
        )
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    return w


def event_folds(groups: Ints, folds: int = 5, seed: int = 0) -> Ints:
    """The fold of each row: groups (events) dealt into ``folds`` folds in a seeded random
    order, so every row of a group lands in the same fold."""
    ids = np.unique(groups)
    order = np.random.default_rng(seed).permutation(ids.size)
    fold_of_id = np.empty(ids.size, dtype=np.int64)
    fold_of_id[order] = np.arange(ids.size) % max(1, min(folds, ids.size))
    out: Ints = fold_of_id[np.searchsorted(ids, groups)]
    return out


def _fold_scores(x: Floats, y: Floats, fold: Ints) -> Floats:
    scores = np.full(y.size, np.nan)
    for k in np.unique(fold):
        test, train = fold == k, fold != k
        if not train.any() or np.unique(y[train]).size < 2:
            scores[test] = 0.0
            continue
        w = fit_logistic(_standardise(x[train], x[train]), y[train])
        # The linear score without the intercept: the intercept tracks each training part's
        # base rate, which moves against the held-out fold's and would push a pooled AUC below
        # 0.5 on small samples even without any signal.
        scores[test] = _standardise(x[test], x[train]) @ w[1:]
    return scores


def out_of_fold_scores(x: Floats, y: Floats, groups: Ints, folds: int = 5, seed: int = 0) -> Floats:
    """Each row's score (a log-odds, up to a constant per fold) from a model fitted without any
    row of its group (event).

    Groups are dealt into folds by ``event_folds``; features are standardised on the training
    rows of each fold. A training part holding one class only predicts its base rate (a
    constant score).
    """
    return _fold_scores(x, y, event_folds(groups, folds, seed))


def permutation_null(
    x: Floats,
    y: Floats,
    groups: Ints,
    folds: int = 5,
    seed: int = 0,
    permutations: int = 500,
) -> Floats:
    """The out-of-fold AUC under ``permutations`` draws of the null "the features say nothing
    of the outcome": the outcomes of whole events are shuffled among the events of the same
    fold, so each fold keeps its own base rate. Small-sample cross-validation anti-learns (a null
    AUC well below 0.5 is common with a few dozen events); comparing with this null, not with
    0.5, takes that bias out."""
    fold = event_folds(groups, folds, seed)
    _, first, inverse = np.unique(groups, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    event_y, event_fold = y[first], fold[first]
    members = [np.flatnonzero(event_fold == k) for k in np.unique(event_fold)]
    rng = np.random.default_rng([seed, 1])  # its own stream: the folds' draws stay as they are
    out = np.empty(permutations)
    for i in range(permutations):
        shuffled = event_y.copy()
        for m in members:
            shuffled[m] = event_y[rng.permutation(m)]
        labels = shuffled[inverse]
        out[i] = auc(_fold_scores(x, labels, fold), labels)
    return out


def _weighted_auc(scores: Floats, y: Floats, weights: Floats) -> Floats:
    """AUC under each row of ``weights`` (draws x rows): the weighted probability that a
    positive outscores a negative, ties counting one half."""
    order = np.argsort(scores, kind="stable")
    s, pos = scores[order], y[order] > 0.5
    w = weights[:, order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    wp = np.add.reduceat(np.where(pos, w, 0.0), starts, axis=1)
    wn = np.add.reduceat(np.where(pos, 0.0, w), starts, axis=1)
    below = np.cumsum(wn, axis=1) - wn
    total_p, total_n = wp.sum(axis=1), wn.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: Floats = (wp * (below + 0.5 * wn)).sum(axis=1) / (total_p * total_n)
    return out


def auc(scores: Floats, y: Floats) -> float:
    """The area under the ROC curve (NaN without both classes)."""
    return float(_weighted_auc(scores, y, np.ones((1, y.size)))[0])


def auc_interval(
    scores: Floats,
    y: Floats,
    groups: Ints,
    draws: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    block: int = 200,
) -> tuple[float, float]:
    """Percentile interval of the AUC over bootstrap draws of whole groups (events): the rows
    of an event are correlated, so events, not rows, are resampled."""
    ids, inv = np.unique(groups, return_inverse=True)
    inv = inv.reshape(-1)
    rng = np.random.default_rng(seed)
    values: list[Floats] = []
    for start in range(0, draws, block):
        n = min(block, draws - start)
        picks = rng.integers(0, ids.size, size=(n, ids.size))
        counts = np.stack([np.bincount(p, minlength=ids.size) for p in picks]).astype(np.float64)
        values.append(_weighted_auc(scores, y, counts[:, inv]))
    boot = np.concatenate(values) if values else np.array([])
    boot = boot[np.isfinite(boot)]
    if boot.size == 0:
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(boot, [tail, 100.0 - tail])
    return float(low), float(high)
