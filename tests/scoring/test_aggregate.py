"""Score tables, conventions for unusable forecasts, grouped summaries and paired differences."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scoring_builders import MakeStep, make_step

from pastcast.scoring import (
    cluster_bootstrap,
    grouped_cluster_bootstrap,
    paired_comparison,
    score_step,
    shrink,
    summarize,
    table_from_records,
)

LABELS = ("a", "b", "c")
entry = st.floats(-0.5, 3.0, allow_nan=False)
forecasts = st.dictionaries(st.sampled_from(LABELS), entry, max_size=3)
markets = st.none() | st.dictionaries(st.sampled_from(LABELS), st.floats(0, 1), min_size=1)


@settings(deadline=None)  # the first table loads Arrow's reading of Python objects (pandas)
@given(
    st.lists(
        st.tuples(forecasts, st.sampled_from(LABELS), markets, st.booleans()),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from(["uniform", "worst"]),
)
def test_table_matches_per_record_scores(rows: list, fallback: str) -> None:
    recs = [
        make_step(p, truth=t, labels=LABELS, market=m, usable=u, step_index=i)
        for i, (p, t, m, u) in enumerate(rows)
    ]
    cols = table_from_records(recs).metrics(fallback)  # type: ignore[arg-type]
    for i, r in enumerate(recs):
        s = score_step(r, fallback)  # type: ignore[arg-type]
        assert cols["brier"][i] == pytest.approx(s.brier, abs=1e-12)
        assert cols["accuracy"][i] == pytest.approx(s.accuracy, abs=1e-12)
        assert cols["log_loss"][i] == pytest.approx(s.log_loss, abs=1e-12)
        if s.info_alpha is None:
            assert math.isnan(cols["info_alpha"][i])
        else:
            assert cols["info_alpha"][i] == pytest.approx(s.info_alpha, abs=1e-12)


def _records(step: MakeStep = make_step) -> list:
    # agent m: 2 events x 2 rollouts; one unusable forecast; reference agent "mkt"
    return [
        step({"Yes": 0.8, "No": 0.2}, event_id="e1", rollout=0, market={"Yes": 0.5, "No": 0.5}),
        step({"Yes": 0.6, "No": 0.4}, event_id="e1", rollout=1, market={"Yes": 0.5, "No": 0.5}),
        step({}, event_id="e2", rollout=0, truth="No"),
        step({"Yes": 0.1, "No": 0.9}, event_id="e2", rollout=1, truth="No"),
        step({"Yes": 0.5, "No": 0.5}, agent="mkt", role="reference", event_id="e1"),
    ]


def test_summary_hand_computed() -> None:
    out = summarize(_records(), by=("agent",), bootstrap=200, scheduled=5)
    assert [s.group for s in out] == [("m",), ("mkt",)]
    m, mkt = out
    assert (m.role, mkt.role) == ("agent", "reference")
    assert (m.n_recorded, m.n_failures, m.failure_rate) == (4, 1, 0.25)
    assert (m.n_missing, m.scheduled_failure_rate) == (1, 2 / 5)
    briers = [0.08, 0.32, 0.5, 0.02]
    assert m.metrics["brier"].mean == pytest.approx(np.mean(briers))
    # per-rollout means: r0 = (0.08 + 0.5) / 2, r1 = (0.32 + 0.02) / 2
    assert m.metrics["brier"].rollout_std == pytest.approx(np.std([0.29, 0.17], ddof=1))
    ia = m.metrics["info_alpha"]
    assert ia.n == 2 and ia.mean == pytest.approx((math.log(1.6) + math.log(1.2)) / 2)
    assert m.metrics["brier"].ci_low <= m.metrics["brier"].mean <= m.metrics["brier"].ci_high
    assert math.isnan(mkt.metrics["brier"].ci_low)  # a single event: no interval


def test_conventions() -> None:
    recs = _records()[:4]
    by_conv = {
        c: summarize(recs, by=(), fallback=c, bootstrap=0)[0]
        for c in ("uniform", "worst", "exclude")
    }
    assert by_conv["worst"].metrics["brier"].mean == pytest.approx((0.08 + 0.32 + 2 + 0.02) / 4)
    assert by_conv["exclude"].metrics["brier"].mean == pytest.approx((0.08 + 0.32 + 0.02) / 3)
    assert by_conv["exclude"].metrics["brier"].n == 3
    assert all(s.n_failures == 1 and s.n_recorded == 4 for s in by_conv.values())


def test_alpha_test_and_shrinkage() -> None:
    from scipy.stats import ttest_1samp

    step = make_step
    rng = np.random.default_rng(1)
    recs = []
    for i in range(30):
        p, q = rng.uniform(0.05, 0.95, size=2)
        recs.append(step({"Yes": p, "No": 1 - p}, event_id=f"e{i}", market={"Yes": q, "No": 1 - q}))
    s = summarize(recs, by=("agent",), bootstrap=0)[0]
    vals = table_from_records(recs).metrics()["alpha"]
    ref = ttest_1samp(vals, 0.0)
    at = s.alpha_tests["alpha"]
    assert (at.t, at.p_value) == (pytest.approx(ref.statistic), pytest.approx(ref.pvalue))
    assert at.shrunk == pytest.approx(vals.mean() * 30 / 170) and at.provisional
    assert shrink(0.02, 140) == (pytest.approx(0.01), False)


def _naive_bootstrap(cluster: np.ndarray, v: np.ndarray, draws: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ids = np.unique(cluster)
    means = []
    for _ in range(draws):
        pick = rng.integers(0, ids.size, size=ids.size)
        rows = np.concatenate([np.flatnonzero(cluster == ids[k]) for k in pick])
        means.append(v[rows].mean())
    return np.percentile(means, [2.5, 97.5])


def test_cluster_bootstrap_matches_naive_loop() -> None:
    rng = np.random.default_rng(3)
    cluster = rng.integers(0, 12, size=200)
    v = rng.normal(size=200) + cluster * 0.1
    low, high = cluster_bootstrap(cluster, v, 500, np.random.default_rng(7))
    ref = _naive_bootstrap(cluster, v, 500, 7)
    assert (low[0], high[0]) == (pytest.approx(ref[0]), pytest.approx(ref[1]))


def _naive_grouped(
    cluster: np.ndarray, group: np.ndarray, v: np.ndarray, draws: int, seed: int
) -> np.ndarray:
    """Groups with at least half the events share draws over all events; others go alone."""
    rng = np.random.default_rng(seed)
    ids = np.unique(cluster)
    n_groups = int(group.max()) + 1
    size = [np.unique(cluster[group == g]).size for g in range(n_groups)]
    joint = [g for g in range(n_groups) if 2 * size[g] >= ids.size]
    means: dict[int, list[np.ndarray]] = {g: [] for g in joint}
    for _ in range(draws):
        pick = rng.integers(0, ids.size, size=ids.size)
        for g in joint:
            mine = group == g
            rows = np.concatenate([np.flatnonzero((cluster == ids[k]) & mine) for k in pick])
            with np.errstate(invalid="ignore"):
                means[g].append(np.nanmean(v[rows], axis=0))
    out = np.full((n_groups, 2, v.shape[1]), np.nan)
    for g in joint:
        b = np.array(means[g])
        for j in range(v.shape[1]):
            col = b[:, j][np.isfinite(b[:, j])]
            out[g, :, j] = np.percentile(col, [2.5, 97.5])
    for g in range(n_groups):
        if g not in joint:
            sub_c, sub_v = cluster[group == g], v[group == g]
            sub_ids = np.unique(sub_c)
            b = []
            for _ in range(draws):
                pick = rng.integers(0, sub_ids.size, size=sub_ids.size)
                rows = np.concatenate([np.flatnonzero(sub_c == sub_ids[k]) for k in pick])
                b.append(np.nanmean(sub_v[rows], axis=0))
            out[g] = np.percentile(np.array(b), [2.5, 97.5], axis=0)
    return out


@pytest.mark.parametrize("small_blocks", [False, True])
def test_grouped_bootstrap_matches_naive_loop(
    small_blocks: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if small_blocks:  # several count blocks per product block, and several product blocks
        monkeypatch.setattr("pastcast.scoring._bootstrap._COUNT_CELLS", 30)
        monkeypatch.setattr("pastcast.scoring._bootstrap._PRODUCT_CELLS", 100)
    rng = np.random.default_rng(5)
    cluster = rng.integers(0, 12, size=300)
    group = rng.integers(0, 3, size=300)
    group[(group == 1) & (cluster < 2)] = 0  # group 1 lacks two events: still shares draws
    group[(group == 2) & (cluster >= 4)] = 0  # group 2 has 4 of 12 events: resampled alone
    v = np.stack([rng.normal(size=300) + cluster * 0.1, rng.uniform(size=300)], axis=1)
    v[rng.uniform(size=300) < 0.2, 1] = np.nan  # metrics missing on different rows
    low, high = grouped_cluster_bootstrap(cluster, group, v, 300, np.random.default_rng(9))
    ref = _naive_grouped(cluster, group, v, 300, 9)
    np.testing.assert_allclose(low, ref[:, 0], rtol=1e-9)
    np.testing.assert_allclose(high, ref[:, 1], rtol=1e-9)
    # a single group with every event is exactly the single-group bootstrap
    one = grouped_cluster_bootstrap(cluster, np.zeros(300, dtype=np.int64), v, 300)
    single = cluster_bootstrap(cluster, v, 300)
    np.testing.assert_allclose(np.stack(one)[:, 0], np.stack(single), rtol=1e-12)


def test_summaries_are_reproducible() -> None:
    recs = _records()
    runs = [summarize(recs, seed=0, bootstrap=300) for _ in range(2)]
    assert [repr(s.as_dict()) for s in runs[0]] == [repr(s.as_dict()) for s in runs[1]]


def test_paired_difference() -> None:
    step = make_step
    recs = []
    for e in range(6):
        for setting, p in (("memory_on", 0.9), ("memory_free", 0.6)):
            recs.append(step({"Yes": p, "No": 1 - p}, event_id=f"e{e}", setting=setting))
    recs.append(step({"Yes": 1.0}, event_id="e99", setting="memory_on"))  # unmatched
    d = paired_comparison(
        recs, {"setting": "memory_on"}, {"setting": "memory_free"}, bootstrap=200
    )["brier"]
    assert d.n_matched == 6
    assert d.mean == pytest.approx(2 * 0.1**2 - 2 * 0.4**2)
    with pytest.raises(ValueError, match="several records"):
        paired_comparison([*recs, recs[0]], {"setting": "memory_on"}, {"setting": "memory_free"})


def test_alpha_test_reports_the_standard_error_of_the_mean() -> None:
    from pastcast.scoring import alpha_test

    v = np.array([0.01, -0.02, 0.03, 0.0, 0.05])
    at = alpha_test(v)
    assert at.se == pytest.approx(v.std(ddof=1) / math.sqrt(5))
    assert at.t == pytest.approx(at.mean / at.se)
    # One value: no spread to estimate; a constant series has a zero standard error.
    assert math.isnan(alpha_test(np.array([0.1])).se)
    assert alpha_test(np.zeros(4)).se == 0.0
