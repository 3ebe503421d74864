"""Run logs of the application-layer tests: baselines (no model, no corpus) on a dataset spec."""

from __future__ import annotations

from pathlib import Path

from pastcast.agents import agent_spec
from pastcast.app import open_dataset
from pastcast.runner import RunConfig, run_benchmark


def run_baselines(spec: str, out: Path, events: int = 3) -> Path:
    """A run of the uniform and base-rate baselines on the dataset ``spec`` names."""
    config = RunConfig(agents=(agent_spec("uniform"), agent_spec("base-rate")), max_events=events)
    run_benchmark(open_dataset(spec), None, config, out, progress=False)
    return out
