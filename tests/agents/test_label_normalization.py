"""`pastcast score --normalize-labels`: the same logged outputs scored with exact and with
typographic label matching (Forecast-Dojo appendix B.7), without re-running any agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_scripts import labels_of, use
from typer.testing import CliRunner

from pastcast.agents import agent_spec, prompts_for
from pastcast.cli import app
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.models import ChatRequest
from pastcast.runner import RunConfig, run_benchmark
from pastcast.world import World

runner = CliRunner()


def lower_case_labels(request: ChatRequest) -> str:
    """Every answer names the outcomes in lower case: unusable under exact matching, and the
    repair request is answered the same way."""
    labels = labels_of(request)
    probs = {
        lb.lower(): (0.9 if i == 0 else 0.1 / (len(labels) - 1)) for i, lb in enumerate(labels)
    }
    return json.dumps({"probabilities": probs, "rationale": "lower case"})


def _score(log: Path, *extra: str) -> dict[str, Any]:
    result = runner.invoke(app, ["score", str(log), "--bootstrap", "0", "--json", *extra])
    assert result.exit_code == 0, result.output
    out: dict[str, Any] = json.loads(result.stdout)
    return out


def test_score_reads_the_logged_outputs_again_with_normalized_labels(
    world: World, world_index: EmbeddedIndex, tmp_path: Path
) -> None:
    spec = agent_spec("no-tools", model=use("lower", lower_case_labels))
    log = tmp_path / "run.jsonl"
    cfg = RunConfig(agents=(spec,), max_events=4)
    run_benchmark(world.dataset, world_index, cfg, log, prompts=prompts_for([spec]), progress=False)
    before = log.read_bytes()

    exact = _score(log)
    normalized = _score(log, "--normalize-labels")
    (e,), (n,) = exact["groups"], normalized["groups"]
    assert (exact["labels"], normalized["labels"]) == ("exact", "normalized")
    assert e["n_recorded"] == n["n_recorded"] > 0
    assert e["n_failures"] == e["n_recorded"] and n["n_failures"] == 0
    assert n["metrics"]["brier"]["mean"] != e["metrics"]["brier"]["mean"]
    assert log.read_bytes() == before  # nothing re-run or rewritten
