"""Agents on a model with a small context window compact before it overflows: every request sent
fits the window, and the episode still ends with a usable forecast."""

from __future__ import annotations

import json
import re

import pytest
from agent_scripts import Scripted, answer, labels_of, title_of

from pastcast.agents import ToolAgent, TwoStageConfig
from pastcast.agents._two_stage import TwoStageAgent
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.env import EnvConfig, ForecastEnv
from pastcast.models import ChatRequest, ContextLimits, ScriptedModel
from pastcast.world import World


def keeps_reading(request: ChatRequest) -> str:
    """Search the title, then read every document id seen so far, one a turn (ids are found in
    truncated results too); answer when told to."""
    if len(request.messages) == 2:
        return json.dumps({"action": "search", "query": title_of(request), "top_k": 10})
    text = "\n".join(m.content for m in request.messages[2:])
    read = set(re.findall(r'"action": "read", "doc_id": "([^"]+)"', text))
    unread = [d for d in dict.fromkeys(re.findall(r"doc-\d+", text)) if d not in read]
    if unread and "research budget" not in request.messages[-1].content:
        return json.dumps({"action": "read", "doc_id": unread[0]})
    return json.dumps({"action": "final", **answer(labels_of(request))})


class Windowed(ScriptedModel):
    def __init__(self, limits: ContextLimits, responder: object) -> None:
        super().__init__(responder=responder)  # type: ignore[arg-type]
        self.context_limits = limits

    def fits(self, request: ChatRequest) -> bool:
        used = self.context_limits.prompt_tokens(request)
        cap = request.max_tokens
        return cap is not None and used + cap <= self.context_limits.window


def test_the_tool_agent_compacts_before_the_window_overflows(
    world: World, world_index: EmbeddedIndex
) -> None:
    limits = ContextLimits(window=1400, default_max_tokens=200, min_reply_tokens=200)
    env = ForecastEnv(world.dataset, world_index, EnvConfig())
    for step in world.dataset.steps[:3]:
        model = Windowed(limits, keeps_reading)
        episode = env.reset(step)
        forecast = ToolAgent(model, action_mode="json").forecast(episode)
        assert forecast.usable, forecast.raw_text
        assert all(model.fits(r) for r in model.requests)
        reads = [c for c in episode.record("forecast").tool_calls if c.name == "read"]
        assert reads
        # The research outgrew the window: it was compacted before the final request was sent
        # (never after a failed call), and that request fits.
        final = model.requests[-1]
        assert "research budget" in final.messages[-1].content
        assert max(len(m.content) for m in final.messages[2:]) <= 400


@pytest.mark.parametrize("window", [1800, 3000])
def test_the_two_stage_agent_shrinks_its_evidence_to_fit(
    world: World, world_index: EmbeddedIndex, window: int
) -> None:
    limits = ContextLimits(window=window, default_max_tokens=200, min_reply_tokens=100)
    env = ForecastEnv(world.dataset, world_index, EnvConfig())
    step = world.dataset.steps[0]
    model = Windowed(limits, Scripted(confidence=0.1))
    agent = TwoStageAgent(model, TwoStageConfig(expand=4, doc_chars=2000, tally=True))
    forecast = agent.forecast(env.reset(step))
    assert forecast.usable, forecast.raw_text
    assert all(model.fits(r) for r in model.requests)
    evidence = [r for r in model.requests if "Documents found" in r.messages[-1].content]
    assert evidence  # the report and the tally saw evidence, as much as fitted
