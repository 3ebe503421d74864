"""Run logs of the application-layer tests: baselines (no model, no corpus) on a dataset spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from pastcast.agents import agent_spec
from pastcast.app import open_dataset
from pastcast.runner import RunConfig, run_benchmark


def run_baselines(spec: str, out: Path, events: int = 3) -> Path:
    """A run of the uniform and market baselines on the dataset ``spec`` names."""
    config = RunConfig(agents=(agent_spec("uniform"), agent_spec("base-rate")), max_events=events)
    run_benchmark(open_dataset(spec), None, config, out, progress=False)
    return out


@pytest.fixture(scope="session")
def world_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run log on the embedded world; never modified by tests (copy it to change it)."""
    return run_baselines("world", tmp_path_factory.mktemp("world-run") / "run.jsonl")
