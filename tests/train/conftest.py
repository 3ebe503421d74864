"""Run logs to export: scripted tool agents (JSON actions and native tool calls) and baselines
on the embedded world, once without splits and once with half its events in a training split."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import train_scripts  # noqa: F401  (registers the train-test model provider)

from pastcast.agents import agent_spec, clear_models
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.dataset import Dataset
from pastcast.runlog import RunLog, read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.world import World, build_world

EVENTS = 6


@pytest.fixture(scope="session")
def world() -> World:
    return build_world(0)


@pytest.fixture(scope="session")
def world_index(world: World) -> EmbeddedIndex:
    return EmbeddedIndex.in_memory(world.documents)


@pytest.fixture(scope="session")
def split_world(world: World) -> Dataset:
    """The world's first events with a split: alternately train and eval."""
    ds = world.dataset
    ids = ds.event_ids_with_steps()[:EVENTS]
    splits = {e: ("train" if i % 2 == 0 else "eval") for i, e in enumerate(ids)}
    return Dataset("world-split-test", ds.events, ds.resolutions, ds.beliefs, ds.steps, splits)


def _specs() -> tuple:
    return (
        agent_spec("uniform"),
        agent_spec("tool-agent", model="train-test:json", label="json-agent"),
        agent_spec(
            "tool-agent", model="train-test:native", action_mode="native", label="native-agent"
        ),
    )


@pytest.fixture(autouse=True)
def _fresh_models() -> Iterator[None]:
    clear_models()
    yield
    clear_models()


def _run(dataset: Dataset, index: EmbeddedIndex, out: Path) -> RunLog:
    clear_models()
    cfg = RunConfig(agents=_specs(), rollouts=2, max_events=EVENTS)
    run_benchmark(dataset, index, cfg, out, progress=False)
    return read_run_log(out)


@pytest.fixture(scope="session")
def split_log(
    split_world: Dataset, world_index: EmbeddedIndex, tmp_path_factory: pytest.TempPathFactory
) -> RunLog:
    """A run on the split world: train and eval steps."""
    return _run(split_world, world_index, tmp_path_factory.mktemp("split") / "run.jsonl")


@pytest.fixture(scope="session")
def world_log(
    world: World, world_index: EmbeddedIndex, tmp_path_factory: pytest.TempPathFactory
) -> RunLog:
    """A run on the embedded world itself: every step unsplit."""
    return _run(world.dataset, world_index, tmp_path_factory.mktemp("world") / "run.jsonl")
