"""The Gymnasium environment: Gymnasium's own checker, determinism under a seed with a scripted
policy, the split guard, rewards, and no thread left behind."""

from __future__ import annotations

import json
import re
import threading
import warnings
from typing import Any

import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from pastcast.dataset import Dataset  # noqa: E402
from pastcast.errors import FieldError  # noqa: E402
from pastcast.integrations.gym import ForecastGymEnv  # noqa: E402
from pastcast.integrations.gym._env import ENV_ID  # noqa: E402
from pastcast.records import Forecast  # noqa: E402
from pastcast.runner import grade_step  # noqa: E402
from pastcast.train import step_rewards  # noqa: E402


def scripted_policy(obs: str, info: dict[str, Any]) -> str:
    """Search the question, read the first hit, then give 70% to the first outcome."""
    if info["turn"] == 0:
        title = re.search(r"^Question: (.*)$", obs, re.MULTILINE)
        assert title
        return json.dumps({"action": "search", "query": title.group(1), "top_k": 3})
    if info["turn"] == 1 and obs.startswith("[{"):
        return json.dumps({"action": "read", "doc_id": json.loads(obs)[0]["id"]})
    labels = info["labels"]
    rest = 0.3 / (len(labels) - 1)
    probs = {lb: 0.7 if i == 0 else rest for i, lb in enumerate(labels)}
    return json.dumps({"action": "final", "probabilities": probs, "rationale": "scripted"})


def play(env: Any, seed: int, episodes: int) -> list[tuple[Any, ...]]:
    trace: list[tuple[Any, ...]] = []
    for k in range(episodes):
        obs, info = env.reset(seed=seed if k == 0 else None)
        trace.append(("reset", obs, info))
        done = False
        while not done:
            action = scripted_policy(obs, info)
            obs, reward, terminated, truncated, info = env.step(action)
            trace.append(("step", action, obs, reward, terminated, truncated, info))
            done = terminated or truncated
    return trace


def test_the_registered_env_passes_gymnasiums_checker() -> None:
    env = gymnasium.make(f"pastcast.integrations.gym:{ENV_ID}", splits=("unsplit",))
    assert isinstance(env.unwrapped, ForecastGymEnv)
    assert env.spec is not None and env.spec.id == ENV_ID
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checker warns about fps for text rendering
        check_env(env.unwrapped)
    env.close()


def test_the_same_seed_gives_the_same_trajectories() -> None:
    first = ForecastGymEnv("world", splits=("unsplit",))
    second = ForecastGymEnv("world", splits=("unsplit",))
    a, b = play(first, 11, 3), play(second, 11, 3)
    assert a == b
    assert sum(1 for t in a if t[0] == "step") >= 9  # search, read, final in each episode
    finals = [t for t in a if t[0] == "step" and t[4]]
    assert len(finals) == 3 and all(t[6]["usable"] for t in finals)
    other = play(ForecastGymEnv("world", splits=("unsplit",)), 12, 3)
    starts = {(t[2]["event_id"], t[2]["step_index"]) for t in (*a, *other) if t[0] == "reset"}
    assert len(starts) > 3  # seeds draw different steps
    first.close()
    second.close()


def test_reward_is_the_score_of_the_forecast_with_a_format_penalty() -> None:
    env = ForecastGymEnv("world", splits=("unsplit",), format_penalty=0.25)
    obs, info = env.reset(seed=5)
    assert "rewards" not in info and "forecast" not in info  # no outcome before the end
    labels = info["labels"]
    probs = {lb: 1.0 / len(labels) for lb in labels}
    obs, reward, terminated, truncated, info = env.step(
        json.dumps({"action": "final", "probabilities": probs, "rationale": "flat"})
    )
    assert terminated and not truncated and obs == ""
    step = next(
        s for s in env.steps if (s.event_id, s.step_index) == (info["event_id"], info["step_index"])
    )
    grading = grade_step(env.dataset, step)
    assert reward == pytest.approx(step_rewards(Forecast(probs=probs), grading).neg_brier)
    # An answer that cannot be parsed, twice (the agent asks once more): the fallback, penalised.
    obs, info = env.reset(seed=5)
    obs, reward, terminated, _, info = env.step("no idea")
    assert not terminated and "probabilities" in obs  # the agent's repair request
    obs, reward, terminated, _, info = env.step("still no idea")
    assert terminated and not info["usable"]
    uniform = step_rewards(Forecast(usable=False), grading, format_penalty=0.25)
    assert reward == pytest.approx(uniform.neg_brier - 0.25)
    with pytest.raises(RuntimeError, match="reset"):
        env.step("again")
    env.close()


def test_the_split_guard_applies(split_world: Dataset, world_index: Any) -> None:
    with pytest.raises(FieldError, match=r"no steps of split train .*unsplit"):
        ForecastGymEnv("world")
    env = ForecastGymEnv(split_world, world_index)
    assert env.steps and {split_world.splits[s.event_id] for s in env.steps} == {"train"}
    with pytest.raises(FieldError, match="evaluation events"):
        ForecastGymEnv(split_world, world_index, splits=("eval",))
    forced = ForecastGymEnv(split_world, world_index, splits=("eval",), force_eval=True)
    assert {split_world.splits[s.event_id] for s in forced.steps} == {"eval"}
    eval_step = forced.steps[0]
    with pytest.raises(FieldError, match="no admitted step"):
        env.reset(options={"event_id": eval_step.event_id, "step_index": eval_step.step_index})
    _, info = forced.reset(
        options={"event_id": eval_step.event_id, "step_index": eval_step.step_index}
    )
    assert info["event_id"] == eval_step.event_id
    forced.close()
    env.close()


def test_a_reset_mid_episode_leaves_no_thread_behind() -> None:
    before = threading.active_count()
    env = ForecastGymEnv("world", splits=("unsplit",))
    for seed in range(4):
        obs, info = env.reset(seed=seed)
        env.step(scripted_policy(obs, info))  # mid-episode: the agent waits for the next action
    assert threading.active_count() == before + 1
    env.close()
    assert threading.active_count() == before
