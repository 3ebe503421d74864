"""Inputs of the application-layer and command tests: baselines (no model, no corpus) on a
dataset spec, a small dated archive and a scripted curation judge (fixtures: import them by
name)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pastcast.agents import agent_spec
from pastcast.app import open_dataset
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.models import ScriptedModel, providers, register_provider
from pastcast.records import Document
from pastcast.runner import RunConfig, run_benchmark

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "curate"))
from curate_judges import world_judge


def run_baselines(spec: str, out: Path, events: int = 3) -> Path:
    """A run of the uniform and base-rate baselines on the dataset ``spec`` names."""
    config = RunConfig(agents=(agent_spec("uniform"), agent_spec("base-rate")), max_events=events)
    run_benchmark(open_dataset(spec), None, config, out, progress=False)
    return out


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An index of twelve news documents dated 2023 to 2025."""
    docs = [
        Document(
            id=f"d{y}{m}",
            timestamp=datetime(y, m, 1, tzinfo=UTC),
            source="news",
            title=f"Report {y}-{m}",
            text="Officials said the vote and the launch plans were on track.",
        )
        for y in (2023, 2024, 2025)
        for m in (1, 4, 7, 10)
    ]
    out = tmp_path_factory.mktemp("archive") / "index"
    EmbeddedIndex.build(docs, out)
    return out


@pytest.fixture
def judge() -> Iterator[str]:
    """The model spec of a scripted judge answering as the embedded world's would."""
    register_provider("scripted-judge")(lambda rest: ScriptedModel(responder=world_judge))
    yield "scripted-judge:any"
    providers.remove("scripted-judge")
