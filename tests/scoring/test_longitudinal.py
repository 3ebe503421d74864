"""Longitudinal analyses and breakdowns: thirds, step changes, episode gain, recoveries."""

from __future__ import annotations

import numpy as np
import pytest
from scoring_builders import make_step

from pastcast.scoring import summarize, table_from_records
from pastcast.scoring.analyses import (
    episode_gain,
    evidence_capture,
    horizon_bucket,
    recoveries_regressions,
    step_changes,
    thirds,
    with_event_column,
)


def _episode(event: str, ps: list[float], rollout: int = 0) -> list:
    return [
        make_step({"Yes": p, "No": 1 - p}, event_id=event, step_index=t, rollout=rollout)
        for t, p in enumerate(ps)
    ]


def _brier(p: float) -> float:  # truth "Yes", multiclass [0, 2] scale
    return 2 * (1 - p) ** 2


def test_thirds_weights_events_equally() -> None:
    # e1 has 4 steps: positions 0, 1/3, 2/3, 1 -> thirds 0, 1, 2, 2
    # e2 has 3 steps: positions 0, 1/2, 1 -> thirds 0, 1, 2
    # e3 has 2 steps: cannot fill three thirds -> dropped
    recs = _episode("e1", [0.5, 0.6, 0.7, 0.9]) + _episode("e2", [0.2, 0.5, 0.8])
    recs += _episode("e3", [0.1, 0.1])
    (out,) = thirds(table_from_records(recs), by=("agent",), bootstrap=200)
    assert out.n_events == 2
    e1 = [_brier(0.5), _brier(0.6), (_brier(0.7) + _brier(0.9)) / 2]
    e2 = [_brier(0.2), _brier(0.5), _brier(0.8)]
    assert out.early.mean == pytest.approx((e1[0] + e2[0]) / 2)
    assert out.middle.mean == pytest.approx((e1[1] + e2[1]) / 2)
    assert out.late.mean == pytest.approx((e1[2] + e2[2]) / 2)
    assert out.late_minus_early.mean == pytest.approx(out.late.mean - out.early.mean)
    assert out.early.ci_low <= out.early.mean <= out.early.ci_high


def test_step_changes_only_adjacent_steps() -> None:
    recs = _episode("e1", [0.5, 0.7, 0.9])
    recs += [
        make_step({"Yes": 0.1, "No": 0.9}, event_id="e2", step_index=0),
        make_step({"Yes": 0.9, "No": 0.1}, event_id="e2", step_index=2),
    ]  # gap: skipped
    (out,) = step_changes(table_from_records(recs), by=("agent",), bootstrap=100)
    assert (out.n_transitions, out.n_events) == (2, 1)
    assert out.change.mean == pytest.approx(
        ((_brier(0.7) - _brier(0.5)) + (_brier(0.9) - _brier(0.7))) / 2
    )


def test_episode_gain_pairs_rollouts() -> None:
    recs = _episode("e1", [0.5, 0.6, 0.9], rollout=0) + _episode("e1", [0.4, 0.6, 0.8], rollout=1)
    recs += _episode("e2", [0.9, 0.5], rollout=0)
    recs += [make_step({"Yes": 0.2, "No": 0.8}, event_id="e2", step_index=0, rollout=1)]  # no end
    (out,) = episode_gain(table_from_records(recs), by=("agent",), bootstrap=100)
    g1 = ((_brier(0.5) - _brier(0.9)) + (_brier(0.4) - _brier(0.8))) / 2
    g2 = _brier(0.9) - _brier(0.5)
    assert out.n_events == 2
    assert out.gain.mean == pytest.approx((g1 + g2) / 2)


def test_evidence_capture_slope() -> None:
    assert evidence_capture([3, 3], [2, 2]) == pytest.approx(1.5)
    with pytest.raises(ValueError, match="zero everywhere"):
        evidence_capture([1], [0])


def test_recoveries_regressions() -> None:
    a = [1, 1, 0, 0, 1, 1]
    b = [0, 1, 1, 0, 0, 0]
    topic = ["sports", "sports", "sports", "crypto", "awards", "awards"]
    out = {r.topic: r for r in recoveries_regressions(a, b, topic)}
    assert (out["sports"].recoveries, out["sports"].regressions, out["sports"].net) == (1, 1, 0)
    assert out["awards"].net == 2 and out["crypto"].n == 1 and out["crypto"].net == 0
    assert recoveries_regressions(a, b, topic)[0].topic == "awards"


def test_breakdown_by_event_column() -> None:
    recs = _episode("e1", [0.9]) + _episode("e2", [0.3]) + _episode("e3", [0.6])
    table = with_event_column(table_from_records(recs), "topic", {"e1": "sports", "e2": "sports"})
    out = {s.group: s for s in summarize(table, by=("topic",), bootstrap=0)}
    assert out[("sports",)].metrics["brier"].mean == pytest.approx((_brier(0.9) + _brier(0.3)) / 2)
    assert out[("unknown",)].n_recorded == 1
    assert np.isnan(out[("unknown",)].metrics["brier"].ci_low)


@pytest.mark.parametrize(
    ("days", "label"), [(3, "<7d"), (7, "7-30d"), (45, "30-90d"), (400, ">=90d")]
)
def test_horizon_bucket(days: float, label: str) -> None:
    assert horizon_bucket(days) == label


def test_thirds_over_dates_with_a_market_probability() -> None:
    """Forecast-Dojo B.6: with ``market_only`` only dates with a market probability are
    retained, and positions are taken on that retained sequence."""
    market = {"Yes": 0.5, "No": 0.5}
    # e1: 4 dates, the second without a market price -> retained 0, 2, 3 -> thirds 0, 1, 2
    e1 = [
        make_step({"Yes": p, "No": 1 - p}, event_id="e1", step_index=t, market=m)
        for t, (p, m) in enumerate([(0.5, market), (0.9, None), (0.6, market), (0.7, market)])
    ]
    # e2: 3 dates, one without a price -> 2 retained: cannot fill three thirds, dropped
    e2 = [
        make_step({"Yes": 0.3, "No": 0.7}, event_id="e2", step_index=t, market=m)
        for t, m in enumerate([market, None, market])
    ]
    table = table_from_records(e1 + e2)
    (every,) = thirds(table, by=("agent",), bootstrap=0)
    (priced,) = thirds(table, by=("agent",), bootstrap=0, market_only=True)
    assert every.n_events == 2 and priced.n_events == 1
    assert priced.early.mean == pytest.approx(_brier(0.5))
    assert priced.middle.mean == pytest.approx(_brier(0.6))
    assert priced.late.mean == pytest.approx(_brier(0.7))
