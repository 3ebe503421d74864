"""Metrics the reports add to the score table: the binary [0, 1] Brier next to the multiclass
one, Hindcast's accuracy 1[p > 0.5], distance to market, the event kind, and per-group
calibration (ECE, Murphy, anatomy of alpha) checked against the array functions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scoring_builders import make_step

from pastcast.scoring import (
    alpha_anatomy,
    brier,
    ece,
    metric_list,
    murphy,
    summarize,
    table_from_records,
)
from pastcast.scoring.analyses import calibration


def _binary_steps() -> list:
    rng = np.random.default_rng(3)
    out = []
    for e in range(40):
        truth = "Yes" if rng.random() < 0.5 else "No"
        q = float(rng.uniform(0.05, 0.95))
        for step in range(2):
            p = float(rng.uniform(0.0, 1.0))
            out.append(
                make_step(
                    {"Yes": p, "No": 1 - p},
                    truth=truth,
                    market={"Yes": q, "No": 1 - q},
                    event_id=f"e{e}",
                    step_index=step,
                )
            )
    return out


def test_new_metrics_are_in_the_summary() -> None:
    names = [m.name for m in metric_list()]
    for name in ("binary_brier", "hindcast_accuracy", "distance_to_market"):
        assert name in names


def test_binary_brier_is_half_the_multiclass_on_two_outcomes_only() -> None:
    steps = [
        make_step({"Yes": 0.8, "No": 0.2}, truth="No", market={"Yes": 0.6, "No": 0.4}),
        make_step(
            {"A": 0.6, "B": 0.3, "C": 0.1},
            truth="A",
            labels=("A", "B", "C"),
            event_id="e2",
        ),
    ]
    m = table_from_records(steps).metrics()
    assert m["binary_brier"][0] == pytest.approx(brier({"Yes": 0.8, "No": 0.2}, "No") / 2)
    assert m["binary_brier"][0] == pytest.approx((0.8 - 0.0) ** 2)
    assert math.isnan(m["binary_brier"][1])
    # Hindcast: right when the realised outcome has more than half the mass
    assert list(m["hindcast_accuracy"]) == [0.0, 1.0]
    # |p - q| of the binary market (the same on either label); NaN without a market
    assert m["distance_to_market"][0] == pytest.approx(0.2)
    assert math.isnan(m["distance_to_market"][1])


def test_hindcast_accuracy_of_unusable_forecasts_follows_the_convention() -> None:
    steps = [make_step({"Yes": 0.9, "No": 0.1}, usable=False)]
    t = table_from_records(steps)
    assert t.metrics("uniform")["hindcast_accuracy"][0] == 0.0  # 1/2 is not above 1/2
    assert math.isnan(t.metrics("exclude")["hindcast_accuracy"][0])


def test_kind_is_a_grouping_column() -> None:
    steps = [
        make_step({"Yes": 0.8, "No": 0.2}),
        make_step({"A": 1.0}, truth="A", labels=("A", "B", "C"), event_id="e2"),
    ]
    groups = summarize(steps, by=("kind",), bootstrap=0)
    assert [g.group for g in groups] == [("binary",), ("multi",)]


def test_calibration_matches_the_array_functions() -> None:
    steps = _binary_steps()
    p = np.array([s.forecast.probs["Yes"] for s in steps])
    q = np.array([s.grading.market_probs["Yes"] for s in steps])  # type: ignore[index]
    x = np.array([s.grading.truth == "Yes" for s in steps], dtype=float)
    (cal,) = calibration(table_from_records(steps), by=(), bins=10, bootstrap=200)
    assert cal.n == len(steps)
    assert cal.ece == pytest.approx(ece(p, x, 10))
    assert cal.murphy == murphy(p, x, 10)
    assert cal.anatomy is not None
    ref = alpha_anatomy(p, q, x, 10)
    assert cal.anatomy.alpha == pytest.approx(ref.alpha)
    assert cal.anatomy.resolution_gain == pytest.approx(ref.resolution_gain)
    # reliability bins: the forecasts and outcomes of each bin, with a band around them
    assert sum(b.n for b in cal.bins) == len(steps)
    for b in cal.bins:
        inside = (p >= b.lo) & ((p < b.hi) | (b.hi == 1.0))
        assert b.n == int(inside.sum())
        if b.n:
            assert b.forecast == pytest.approx(p[inside].mean())
            assert b.observed == pytest.approx(x[inside].mean())
            assert b.low <= b.observed + 1e-12 and b.observed <= b.high + 1e-12


def test_calibration_leaves_out_multi_option_forecasts() -> None:
    steps = [
        *_binary_steps()[:10],
        make_step({"A": 0.5, "B": 0.5}, truth="A", labels=("A", "B", "C"), event_id="m"),
    ]
    (cal,) = calibration(table_from_records(steps), by=("agent",), bootstrap=0)
    assert cal.group == ("m",)
    assert cal.n == 10
    none = calibration(table_from_records(steps[-1:]), by=("agent",), bootstrap=0)
    assert none[0].n == 0 and none[0].murphy is None and math.isnan(none[0].ece)


def test_take_keeps_the_rows_and_their_names() -> None:
    steps = _binary_steps()[:6]
    table = table_from_records(steps)
    sub = table.take([1, 4])
    assert len(sub) == 2
    assert sub.keys["event"][1] == table.keys["event"][1]
    assert [sub.name("event", int(c)) for c in sub.codes("event")] == ["e0", "e2"]
    assert list(sub.metrics()["brier"]) == list(table.metrics()["brier"][[1, 4]])
    mask = np.zeros(len(table), dtype=bool)
    mask[[0, 5]] = True
    assert list(table.take(mask).step) == [0, 1]
