"""A recorded run replays identically with the model removed (no server, no network)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import agent_scripts
import pytest
from agent_scripts import Scripted, labels_of, use

from pastcast.agents import agent_spec, clear_models
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.models import ChatRequest
from pastcast.records import Forecast
from pastcast.runlog import read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.world import World


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("tool-agent", {"action_mode": "json"}),
        ("tool-agent", {"action_mode": "native"}),
        ("two-stage", {}),
        ("two-stage-hindcast", {"rounds": 2, "expand": 3}),
        ("no-tools", {}),
        ("zero-shot", {}),
    ],
)
def test_recorded_run_replays_without_the_model(
    world: World, world_index: EmbeddedIndex, tmp_path: Path, name: str, args: dict[str, object]
) -> None:
    cache = str(tmp_path / "cache")
    model = use("rec", Scripted())

    def run(mode: str, out: Path) -> list[tuple[object, ...]]:
        spec = agent_spec(
            name,
            setting="memory_on",
            label="a",
            model=model,
            cache_dir=cache,
            cache_mode=mode,
            **args,  # type: ignore[arg-type]
        )
        cfg = RunConfig(agents=(spec,), max_events=1)
        run_benchmark(world.dataset, world_index, cfg, out, progress=False)
        return [
            (
                r.key,
                r.forecast,
                r.episode.messages,
                [(c.name, c.arguments, c.result) for c in r.episode.tool_calls],
                r.episode.notebook_out,
            )
            for r in read_run_log(out).steps
        ]

    recorded = run("record", tmp_path / "rec.jsonl")
    assert "rec" in agent_scripts.BUILT
    # Remove the model entirely: building it now would fail.
    clear_models()
    agent_scripts.RESPONDERS.clear()
    agent_scripts.BUILT.clear()
    replayed = run("replay", tmp_path / "replay.jsonl")
    assert not agent_scripts.BUILT
    assert replayed == recorded
    assert all(r[1].usable for r in recorded)  # type: ignore[attr-defined]


def test_rollouts_sample_independently_with_the_cache_on_and_replay_exactly(
    world: World, world_index: EmbeddedIndex, tmp_path: Path
) -> None:
    cache = str(tmp_path / "cache")
    calls = itertools.count()

    def sampler(request: ChatRequest) -> str:
        # A sampling model: every call draws a different first-label probability.
        labels = labels_of(request)
        p = round(0.05 + 0.1 * (next(calls) % 9), 2)
        rest = round((1 - p) / (len(labels) - 1), 6)
        probs = {lb: (p if i == 0 else rest) for i, lb in enumerate(labels)}
        return json.dumps({"probabilities": probs, "rationale": "sampled"})

    model = use("sampler", sampler)

    def run(mode: str, out: Path) -> dict[tuple[str, int, int], Forecast]:
        spec = agent_spec("no-tools", model=model, cache_dir=cache, cache_mode=mode)
        cfg = RunConfig(agents=(spec,), max_events=1, rollouts=3)
        run_benchmark(world.dataset, world_index, cfg, out, progress=False)
        return {(r.event_id, r.step_index, r.rollout): r.forecast for r in read_run_log(out).steps}

    recorded = run("auto", tmp_path / "rec.jsonl")
    steps = {(e, s) for e, s, _ in recorded}
    assert steps and len(recorded) == 3 * len(steps)
    for event_id, step_index in steps:
        drawn = {json.dumps(recorded[event_id, step_index, r].probs) for r in range(3)}
        assert len(drawn) == 3, (event_id, step_index, drawn)
    clear_models()
    agent_scripts.RESPONDERS.clear()
    assert run("replay", tmp_path / "replay.jsonl") == recorded
