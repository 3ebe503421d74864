"""The tool agent (JSON actions) and the no-tools agent on a real local llama.cpp server.

SmolLM2-135M's forecasts are meaningless; this checks the plumbing end to end: specs resolve to
one shared local server, schema-constrained actions drive the tool loop, answers parse, and the
server is stopped afterwards. Two forecast steps per agent (about two minutes on two cores).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from pastcast.agents import agent_spec, clear_models, prompts_for
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.models import ModelError
from pastcast.models._packaged import smollm2_path
from pastcast.records import FAILURE_REASONS
from pastcast.runlog import read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.world import World

pytestmark = [pytest.mark.local_llm, pytest.mark.timeout(900)]


def _model_path() -> Path:
    for module, extra in (("openai", "llm"), ("llama_cpp", "local")):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (extra {extra!r})")
    try:
        return smollm2_path()
    except ModelError as exc:
        pytest.skip(str(exc))


def test_agents_complete_episodes_with_a_local_model(
    world: World, world_index: EmbeddedIndex, tmp_path: Path
) -> None:
    path = _model_path()
    events = world.dataset.event_ids_with_steps()[:2]
    dataset = world.dataset.with_steps(world.dataset.steps_of(e)[1] for e in events)
    common = {
        "model": f"local:{path}",
        "model_options": {"n_ctx": 4096, "n_threads": 2, "timeout_s": 300},
        "temperature": 0.0,
        "max_tokens": 160,
    }
    specs = (
        agent_spec("tool-agent", max_iterations=2, max_result_chars=1200, **common),  # type: ignore[arg-type]
        agent_spec("no-tools", constrained=True, **common),  # type: ignore[arg-type]
    )
    out = tmp_path / "run.jsonl"
    try:
        run_benchmark(
            dataset,
            world_index,
            RunConfig(agents=specs),
            out,
            prompts=prompts_for(specs),
            progress=False,
        )
    finally:
        clear_models()  # stops the shared server
    log = read_run_log(out)
    assert len(log.steps) == 2 * len(events)
    assert set(log.header.prompts) == {"json_action.v1", "no_tools.v1"}
    for rec in log.steps:
        assert rec.episode.termination == "forecast", rec.episode.error
        assert rec.episode.usage.model_calls >= 1 and rec.episode.usage.output_tokens > 0
        if not rec.forecast.usable:  # a meaningless answer is counted, after one repair
            assert rec.forecast.failure_reason in FAILURE_REASONS
            assert "[reply to the repair request]" in rec.forecast.raw_text
    tool_steps = [r for r in log.steps if r.agent == "tool-agent"]
    assert all(r.episode.usage.model_calls >= 2 for r in tool_steps)
