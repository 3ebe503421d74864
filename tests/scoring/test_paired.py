"""Paired comparisons: a hand-computed example, an independent recomputation with scikit-learn,
the uniform fallback, steps only one side recorded, and intervals that resample events."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scoring_builders import make_step

from pastcast.runlog import StepRecord
from pastcast.scoring import paired_comparison, table_from_records

ON, FREE = {"setting": "memory_on"}, {"setting": "memory_free"}


def _hand_example() -> list[StepRecord]:
    """Two settings on three events; memory-free's forecast of e2 is unusable; each side has a
    step the other lacks."""
    multi = ("A", "B", "C")
    rows = [
        # (event, step, setting, probs, truth, labels, usable)
        ("e1", 0, "memory_on", {"Yes": 0.8, "No": 0.2}, "Yes", ("Yes", "No"), True),
        ("e1", 0, "memory_free", {"Yes": 0.5, "No": 0.5}, "Yes", ("Yes", "No"), True),
        ("e1", 1, "memory_on", {"Yes": 0.9, "No": 0.1}, "Yes", ("Yes", "No"), True),
        ("e1", 1, "memory_free", {"Yes": 0.6, "No": 0.4}, "Yes", ("Yes", "No"), True),
        ("e2", 0, "memory_on", {"A": 0.2, "B": 0.2, "C": 0.6}, "C", multi, True),
        ("e2", 0, "memory_free", {}, "C", multi, False),  # unusable: uniform 1/3 each
        ("e3", 0, "memory_on", {"Yes": 0.0, "No": 1.0}, "Yes", ("Yes", "No"), True),
        ("e3", 0, "memory_free", {"Yes": 0.5, "No": 0.5}, "Yes", ("Yes", "No"), True),
        ("e3", 1, "memory_on", {"Yes": 0.7, "No": 0.3}, "Yes", ("Yes", "No"), True),  # only on
        ("e4", 0, "memory_free", {"Yes": 0.5, "No": 0.5}, "No", ("Yes", "No"), True),  # only free
    ]
    return [
        make_step(p, truth=t, labels=lb, usable=u, event_id=e, step_index=i, setting=s)
        for e, i, s, p, t, lb, u in rows
    ]


def test_paired_difference_matches_a_hand_computed_example() -> None:
    cmp = paired_comparison(_hand_example(), ON, FREE, bootstrap=500)
    # Brier on [0, 2], per matched step (memory_on - memory_free):
    # e1#0: 2(0.2^2) - 2(0.5^2) = 0.08 - 0.50 = -0.42
    # e1#1: 2(0.1^2) - 2(0.4^2) = 0.02 - 0.32 = -0.30
    # e2#0: (0.04 + 0.04 + 0.16) - (1 - 1/3) = 0.24 - 0.6667 = -0.42667 (uniform fallback)
    # e3#0: 2(1.0^2) - 2(0.5^2) = 2.0 - 0.5 = +1.5
    assert cmp.n_matched == 4 and cmp.only_a == 1 and cmp.only_b == 1
    assert (cmp.n_a, cmp.n_b, cmp.n_events) == (5, 5, 3)
    assert (cmp.unusable_a, cmp.unusable_b) == (0, 1)
    assert cmp["brier"].mean == pytest.approx((-0.42 - 0.30 + (0.24 - 2 / 3) + 1.5) / 4)
    assert cmp["brier"].mean_a == pytest.approx((0.08 + 0.02 + 0.24 + 2.0) / 4)
    # log loss, natural log, floor 1e-3: e3's memory_on gave the truth 0
    ll_on = [-math.log(0.8), -math.log(0.9), -math.log(0.6), -math.log(1e-3)]
    ll_free = [-math.log(0.5), -math.log(0.6), math.log(3), -math.log(0.5)]
    assert cmp["log_loss"].mean == pytest.approx((sum(ll_on) - sum(ll_free)) / 4)
    # fractional-tie accuracy: memory_free's 0.5/0.5 splits credit, its fallback is 1/3
    assert cmp["accuracy"].mean == pytest.approx(
        ((1 - 0.5) + (1 - 1) + (1 - 1 / 3) + (0 - 0.5)) / 4
    )
    for d in cmp.differences.values():
        assert d.n_matched == 4
        assert d.ci_low <= d.mean <= d.ci_high


def test_exclude_drops_the_pairs_with_an_unusable_side() -> None:
    cmp = paired_comparison(_hand_example(), ON, FREE, fallback="exclude", bootstrap=200)
    assert cmp.n_matched == 4  # steps both recorded
    assert cmp["brier"].n_matched == 3  # scored pairs
    assert cmp["brier"].mean == pytest.approx((-0.42 - 0.30 + 1.5) / 3)


def test_worst_case_scores_the_unusable_side_two() -> None:
    cmp = paired_comparison(_hand_example(), ON, FREE, fallback="worst", bootstrap=0)
    assert cmp["brier"].mean == pytest.approx((-0.42 - 0.30 + (0.24 - 2.0) + 1.5) / 4)
    assert math.isnan(cmp["brier"].ci_low)  # no draws asked


def _random_runs(seed: int, n_events: int = 25) -> tuple[list[StepRecord], list[dict[str, object]]]:
    """Two agents forecasting random events (binary and four-way), some forecasts unusable,
    some steps recorded by one agent only; and, independently, the rows as plain data."""
    rng = np.random.default_rng(seed)
    recs: list[StepRecord] = []
    plain: list[dict[str, object]] = []
    for e in range(n_events):
        labels = ("Yes", "No") if e % 2 else ("w", "x", "y", "z")
        truth = labels[int(rng.integers(len(labels)))]
        for step in range(int(rng.integers(1, 4))):
            for rollout in range(2):
                for agent in ("base", "tuned"):
                    if rng.random() < 0.1:
                        continue  # not recorded
                    usable = rng.random() > 0.15
                    p = rng.dirichlet(np.ones(len(labels))) + 0.01
                    p /= p.sum()
                    probs = dict(zip(labels, map(float, p), strict=True)) if usable else {}
                    recs.append(
                        make_step(
                            probs,
                            truth=truth,
                            labels=labels,
                            usable=usable,
                            agent=agent,
                            event_id=f"e{e}",
                            step_index=step,
                            rollout=rollout,
                        )
                    )
                    plain.append(
                        {
                            "key": (f"e{e}", step, rollout),
                            "agent": agent,
                            "labels": labels,
                            "truth": truth,
                            "p": p if usable else np.full(len(labels), 1 / len(labels)),
                        }
                    )
    return recs, plain


def _sklearn_means(rows: list[dict[str, object]]) -> dict[str, float]:
    """Brier (unhalved multiclass, scikit-learn), log loss and fractional-tie accuracy."""
    from sklearn.metrics import brier_score_loss, log_loss

    out: dict[str, list[float]] = {"brier": [], "log_loss": [], "accuracy": []}
    for r in rows:
        labels, p, truth = list(r["labels"]), np.asarray(r["p"]), r["truth"]  # type: ignore[call-overload]
        order = np.argsort(labels)  # scikit-learn takes the columns in sorted label order
        ordered, q = sorted(labels), p[order][None, :]
        out["brier"].append(brier_score_loss([truth], q, labels=ordered, scale_by_half=False))
        out["log_loss"].append(log_loss([truth], q, labels=ordered))
        top = np.flatnonzero(p >= p.max() - 1e-12)
        out["accuracy"].append(float(labels.index(truth) in top) / top.size)
    return {k: float(np.mean(v)) for k, v in out.items()}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_paired_difference_matches_an_independent_recomputation(seed: int) -> None:
    recs, plain = _random_runs(seed)
    base = {r["key"]: r for r in plain if r["agent"] == "base"}
    tuned = {r["key"]: r for r in plain if r["agent"] == "tuned"}
    both = sorted(set(base) & set(tuned))
    a, b = _sklearn_means([tuned[k] for k in both]), _sklearn_means([base[k] for k in both])
    cmp = paired_comparison(recs, {"agent": "tuned"}, {"agent": "base"}, bootstrap=300)
    assert cmp.n_matched == len(both)
    assert cmp.only_a == len(set(tuned) - set(base))
    assert cmp.only_b == len(set(base) - set(tuned))
    for metric in ("brier", "log_loss", "accuracy"):
        assert cmp[metric].mean == pytest.approx(a[metric] - b[metric], abs=1e-12)
        assert cmp[metric].mean_a == pytest.approx(a[metric], abs=1e-12)


def _interval_width(recs: list[StepRecord]) -> float:
    d = paired_comparison(recs, {"agent": "tuned"}, {"agent": "base"}, bootstrap=2000)["brier"]
    return d.ci_high - d.ci_low


def test_the_interval_resamples_events_not_steps() -> None:
    """Copies of an event's steps are one event's worth of evidence: duplicating them must not
    narrow the interval, while the same rows as independent events would."""
    recs, _ = _random_runs(7, n_events=40)
    width = _interval_width(recs)
    copies = 6
    duplicated = [
        r.model_copy(update={"step_index": r.step_index + 10 * c})
        for c in range(copies)
        for r in recs
    ]
    independent = [
        r.model_copy(update={"event_id": f"{r.event_id}/copy{c}"})
        for c in range(copies)
        for r in recs
    ]
    # same mean either way
    mean = paired_comparison(recs, {"agent": "tuned"}, {"agent": "base"}, bootstrap=0)["brier"].mean
    dup = paired_comparison(duplicated, {"agent": "tuned"}, {"agent": "base"}, bootstrap=0)
    assert dup["brier"].mean == pytest.approx(mean)
    assert _interval_width(duplicated) > 0.8 * width
    assert _interval_width(independent) < 0.6 * width  # ~ 1 / sqrt(6) if steps were resampled


def test_a_selection_with_several_records_per_step_is_refused() -> None:
    recs = _hand_example()
    with pytest.raises(ValueError, match="several records"):
        paired_comparison([*recs, recs[0].model_copy(update={"run_id": "r2"})], ON, FREE)


def test_no_shared_steps_gives_nothing_to_average() -> None:
    recs = _hand_example()
    cmp = paired_comparison(table_from_records(recs), ON, {"setting": "no_tools"}, bootstrap=50)
    assert cmp.n_matched == 0 and cmp.only_a == 5
    assert math.isnan(cmp["brier"].mean)
