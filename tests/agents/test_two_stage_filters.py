"""The two-stage agent passes its search filter to the reads of its hits (Hindcast's agent
reads submissions it found with ``doc_type="submission"``)."""

from __future__ import annotations

from agent_scripts import Scripted

from pastcast.agents import TwoStageConfig
from pastcast.agents._two_stage import TwoStageAgent
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.env import EnvConfig, ForecastEnv
from pastcast.models import ScriptedModel
from pastcast.world import World


def _reads(world: World, index: EmbeddedIndex, config: TwoStageConfig) -> list[dict[str, object]]:
    env = ForecastEnv(world.dataset, index, EnvConfig())
    episode = env.reset(world.dataset.steps[0])
    TwoStageAgent(ScriptedModel(responder=Scripted(confidence=0.1)), config).forecast(episode)
    return [c.arguments for c in episode.record("forecast").tool_calls if c.name == "read"]


def test_reads_carry_the_search_filter(world: World, world_index: EmbeddedIndex) -> None:
    filtered = _reads(world, world_index, TwoStageConfig(expand=3, doc_type="submission"))
    assert filtered and all(a.get("doc_type") == "submission" for a in filtered)
    plain = _reads(world, world_index, TwoStageConfig(expand=3))
    assert plain and all("doc_type" not in a for a in plain)
