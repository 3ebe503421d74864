"""The metric registry: every metric's score of one forecast equals its vectorised twin, lies in
its scale and points the way it says is better; the scores a step record keeps are registered
metrics; a malformed metric is refused when it is made or looked up."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from scoring_builders import make_step

from pastcast.errors import FieldError
from pastcast.records import Forecast
from pastcast.runlog import LOGGED_SCORES, Grading, StepRecord
from pastcast.scoring import (
    Metric,
    metric,
    metric_list,
    metrics,
    paired_comparison,
    score_forecast,
    summarize,
    table_from_records,
)
from pastcast.scoring._metrics import graded_forecast


def _records() -> list[StepRecord]:
    """Binary and multi-option forecasts, with and without a market, some unusable, some
    giving the truth nothing, one whose truth is not an offered label."""
    rng = np.random.default_rng(11)
    out = []
    for i in range(120):
        labels = ("Yes", "No") if i % 3 else ("A", "B", "C", "D")
        truth = labels[int(rng.integers(len(labels)))] if i != 7 else "Z"
        p = rng.dirichlet(np.ones(len(labels)))
        if i % 5 == 0:
            p[labels.index(truth) if truth in labels else 0] = 0.0
        q = rng.dirichlet(np.ones(len(labels)))
        out.append(
            make_step(
                dict(zip(labels, p.tolist(), strict=True)),
                truth=truth,
                labels=labels,
                market=None if i % 4 == 0 else dict(zip(labels, q.tolist(), strict=True)),
                usable=i % 8 != 1,
                event_id=f"e{i // 3}",
                step_index=i % 3,
            )
        )
    return out


@pytest.mark.parametrize("fallback", ["uniform", "worst"])
def test_every_metric_of_one_forecast_equals_its_vectorised_twin(fallback: str) -> None:
    records = _records()
    columns = table_from_records(records).metrics(fallback)  # type: ignore[arg-type]
    assert list(columns) == [m.name for m in metric_list()]
    for i, r in enumerate(records):
        graded, _ = graded_forecast(r.forecast, r.grading, fallback)  # type: ignore[arg-type]
        for m in metric_list():
            one, row = m.step(graded), float(columns[m.name][i])
            assert (math.isnan(one) and math.isnan(row)) or one == pytest.approx(row, abs=1e-12), (
                m.name,
                i,
            )


def test_every_score_lies_in_its_scale() -> None:
    columns = table_from_records(_records()).metrics("worst")
    for m in metric_list():
        values = columns[m.name][np.isfinite(columns[m.name])]
        low, high = m.scale
        assert values.size and low - 1e-12 <= values.min() and values.max() <= high + 1e-12, m.name


def test_a_sure_right_forecast_is_better_than_a_sure_wrong_one() -> None:
    grading = Grading(truth="Yes", labels=("Yes", "No"), market_probs={"Yes": 0.5, "No": 0.5})
    right, _ = graded_forecast(Forecast(probs={"Yes": 1.0, "No": 0.0}), grading)
    wrong, _ = graded_forecast(Forecast(probs={"Yes": 0.0, "No": 1.0}), grading)
    for m in metric_list():
        if m.better == "neither":
            continue
        better, worse = m.step(right), m.step(wrong)
        assert (better < worse) if m.better == "lower" else (better > worse), m.name
        # as a reward, more is better whichever way the metric points
        assert m.as_reward(better) > m.as_reward(worse), m.name


def test_the_scores_a_step_record_keeps_are_registered_metrics() -> None:
    names = [m.name for m in metric_list()]
    assert set(LOGGED_SCORES) <= set(names)
    for r in _records()[:30]:
        logged = score_forecast(r.forecast, r.grading)
        graded, _ = graded_forecast(r.forecast, r.grading)
        for name in LOGGED_SCORES:
            value = metric(name).step(graded)
            assert getattr(logged, name) == (None if math.isnan(value) else value)


def _absolute_error() -> Metric:
    return Metric(
        name="absolute_error",
        label="abs. error",
        better="lower",
        scale=(0.0, 1.0),
        step=lambda g: 1.0 - g.p_truth,
        rows=lambda c: 1.0 - c.p_truth,
    )


def test_one_registration_joins_the_summaries_and_the_paired_comparisons() -> None:
    metrics.register("absolute_error")(_absolute_error)
    records = _records()
    (group,) = summarize(records, by=(), bootstrap=20)
    truth_p = table_from_records(records).truth_prob("uniform")
    assert group.metrics["absolute_error"].mean == pytest.approx(float(np.mean(1 - truth_p)))
    other = [r.model_copy(update={"agent": "n"}) for r in records]
    pair = paired_comparison([*records, *other], {"agent": "n"}, {"agent": "m"}, bootstrap=0)
    assert pair["absolute_error"].n_matched == len(records)
    assert pair["absolute_error"].mean == 0.0 and "info_alpha" not in pair.differences
    assert [m.name for m in metric_list()][-1] == "absolute_error"  # after the built-in ones


def test_a_malformed_metric_is_refused() -> None:
    good = _absolute_error()
    for change, problem in (
        ({"better": "up"}, "better must be"),
        ({"scale": (1.0, 0.0)}, "scale"),
        ({"leaderboard": "shrunk"}, "only a tested metric"),
        ({"name": "abs error"}, "identifier"),
        ({"aggregate": "median"}, "aggregate must be"),
    ):
        with pytest.raises(FieldError, match=problem):
            replace(good, **change)  # type: ignore[arg-type]
    metrics.register("abs_error")(_absolute_error)  # a factory whose metric has another name
    with pytest.raises(FieldError, match="a Metric named 'abs_error'"):
        metric("abs_error")
    with pytest.raises(ValueError, match=r"unknown metric 'nope'.*brier"):
        metric("nope")
