"""check_env over the embedded world: the environment's contract holds at real steps; and the
runner's check_deterministic: the same scripted agents give byte-identical run logs twice."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_scripts import Scripted, use

from pastcast.agents import agent_spec
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.env import EnvConfig, ForecastEnv, check_env
from pastcast.runner import check_deterministic
from pastcast.world import World


@pytest.mark.parametrize("market", [False, True])
def test_contract_holds_on_world_steps(
    world: World, world_index: EmbeddedIndex, market: bool
) -> None:
    env = ForecastEnv(world.dataset, world_index, EnvConfig(market_access=market))
    events = world.dataset.event_ids_with_steps()
    steps = [s for e in events[:: max(1, len(events) // 6)] for s in world.dataset.steps_of(e)]
    assert len(steps) >= 6
    for step in steps:
        assert check_env(env, step).ok


@pytest.mark.parametrize(
    ("name", "setting", "args"),
    [
        ("heuristic", "memory_on", {}),
        ("tool-agent", "memory_on", {"action_mode": "json"}),
        ("tool-agent", "memory_free", {"action_mode": "native"}),
        ("two-stage", "memory_free", {}),
    ],
)
def test_scripted_runs_are_deterministic(
    world: World,
    world_index: EmbeddedIndex,
    tmp_path: Path,
    name: str,
    setting: str,
    args: dict[str, str],
) -> None:
    if name != "heuristic":
        args = {**args, "model": use(f"det-{name}", Scripted())}
    spec = agent_spec(name, setting=setting, **args)  # type: ignore[arg-type]
    env = ForecastEnv(world.dataset, world_index, EnvConfig())
    step = world.dataset.steps[0]
    report = check_deterministic(env, step, spec, workdir=tmp_path)
    assert "deterministic runs" in report.passed
    first = (tmp_path / "first.jsonl").read_text().splitlines()
    assert len(first) == len(world.dataset.steps_of(step.event_id))  # steps only; header beside
