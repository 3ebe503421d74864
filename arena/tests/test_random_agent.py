"""The random baseline is a registered agent: uniform on [0, 1], reproducible, Brier 1/3."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from _tiny import T0, tiny_dataset
from pastcast.agents import agent_spec, build_agent, list_agents
from pastcast.env import ForecastEnv
from pastcast.records import StepSpec


def _forecasts(seed: int, n: int) -> list[float]:
    ds = tiny_dataset()
    env = ForecastEnv(ds, None)
    agent = build_agent(agent_spec("random", seed=seed))
    out = []
    for i in range(n):
        step = StepSpec(event_id="ev-rocket", step_index=i, cutoff=T0 + timedelta(minutes=i))
        out.append(agent.forecast(env.reset(step)).probs["Yes"])
    return out


def test_random_is_a_registered_forecaster_without_market_access() -> None:
    info = {a.name: a for a in list_agents()}["random"]
    assert info.role == "agent" and not info.market_access


def test_random_forecasts_are_uniform_reproducible_and_score_a_third() -> None:
    a, b = _forecasts(0, 400), _forecasts(0, 400)
    assert a == b  # same seed, same step: same forecast
    assert _forecasts(1, 400) != a
    p = np.array(a)
    assert p.min() >= 0.0 and p.max() <= 1.0
    # E[(p - x)^2] = 1/3 for p ~ U[0, 1] whatever x is; check against both outcomes
    assert np.mean(p**2) == pytest.approx(1 / 3, abs=0.04)
    assert np.mean((1 - p) ** 2) == pytest.approx(1 / 3, abs=0.04)
    assert abs(np.mean(p) - 0.5) < 0.05


def test_random_spreads_multi_option_mass_over_every_label() -> None:
    ds = tiny_dataset()
    agent = build_agent(agent_spec("random"))
    f = agent.forecast(ForecastEnv(ds, None).reset(ds.steps_of("ev-mayor")[0]))
    assert set(f.probs) == {"Alvarez", "Brooks", "Chen"}
    assert sum(f.probs.values()) == pytest.approx(1.0)
