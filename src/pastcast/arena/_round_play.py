"""Round-level agents in a replay: one conversation per agent and round over all its markets.

An agent registered ``round_level`` (``pastcast.agents.RoundAgent``, the ``arena-benchmark``
agent) gets, per round, one episode per market at the round's commit deadline, built by the
environment exactly as the runner builds a step's (``ForecastEnv.reset`` under the agent's
environment settings, ``agent_env_config``): so its tools are the steps' tools, bound to the
deadline, and it never holds the dataset. Its forecasts are graded after the round and written
as ordinary step records, one per market, to a run log of their own (``ROUND_LOG`` beside the
replay's ``run.jsonl``, resumable round by round).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

from pastcast.agents import RoundAgent, agent_info, build_agent, prompts_for
from pastcast.arena._records import Round
from pastcast.corpus import CorpusBackend, corpus_identity
from pastcast.dataset import Dataset
from pastcast.env import EnvConfig, Episode, ForecastEnv
from pastcast.records import EpisodeRecord, Forecast, StepSpec, UtcDatetime
from pastcast.runlog import AgentSpec, RunHeader, RunLogWriter, StepRecord, read_run_log
from pastcast.runner import (
    RunConfig,
    agent_env_config,
    code_version,
    grade_step,
    knowledge_cutoffs_of,
    play_episode,
)
from pastcast.scoring import score_forecast

__all__ = ["ROUND_LOG", "play_round_agents"]

ROUND_LOG = "round-run.jsonl"

ForecastKey = tuple[str, str, str, UtcDatetime]
"""(agent, setting, market, commit deadline)."""


class _Round:
    """The round as one episode's forecast, so that ``play_episode`` (the runner's one way of
    recording a spent budget, an agent's exception or a provider failure) plays it."""

    def __init__(self, agent: RoundAgent, episodes: Sequence[Episode]) -> None:
        self.agent = agent
        self.episodes = episodes
        self.forecasts: tuple[Forecast, ...] = ()

    def forecast(self, episode: Episode) -> Forecast:
        got = tuple(self.agent.forecast_round(self.episodes))
        if len(got) != len(self.episodes):
            raise ValueError(f"{len(got)} forecasts for a round of {len(self.episodes)} markets")
        self.forecasts = got
        return got[0]


def _played(
    agent: RoundAgent, episodes: Sequence[Episode]
) -> tuple[tuple[Forecast, ...], tuple[EpisodeRecord, ...]]:
    """Every market's forecast and episode record; a round that ended early gives every market
    the first one's unusable forecast."""
    play = _Round(agent, episodes)
    first, record = play_episode(play, episodes[0])
    forecasts = (first, *play.forecasts[1:]) if play.forecasts else (first,) * len(episodes)
    rest = tuple(e.record(record.termination, record.error) for e in episodes[1:])
    return forecasts, (record, *rest)


def play_round_agents(
    dataset: Dataset,
    backend: CorpusBackend | None,
    agents: Sequence[AgentSpec],
    rounds: Sequence[Round],
    steps: Sequence[StepSpec],
    out: str | Path,
    env: EnvConfig,
) -> dict[ForecastKey, Forecast]:
    """Play every round-level agent on every round; ``steps`` the replay's (one per market and
    deadline, ``replay_steps``), ``out`` the run log. The forecasts by (agent, setting, market,
    deadline)."""
    for spec in agents:
        if not agent_info(spec).round_level:
            raise ValueError(f"agent {spec.name!r} is not a round-level agent")
        if spec.setting != "memory_free":
            raise ValueError(f"agent {spec.name!r}: a round-level agent plays memory_free only")
    by_key = {(s.event_id, s.cutoff): s for s in steps}
    config = RunConfig(agents=tuple(agents), env=env)
    header = RunHeader(
        run_id=uuid.uuid4().hex[:12],
        created_at=datetime.now(UTC),
        dataset_id=dataset.id,
        config=config.model_dump(mode="json"),
        agents=config.agents,
        prompts=prompts_for(config.agents),
        code_version=code_version(),
        corpus=corpus_identity(backend),
        knowledge_cutoffs=knowledge_cutoffs_of(config.agents, None),
    )
    # no python tool: the round's tools are the agent's own and the corpus's
    world = ForecastEnv(
        dataset.with_steps(steps), backend, env.model_copy(update={"python_tool": False})
    )
    path = Path(out)
    with RunLogWriter(path, header) as writer:
        for spec in agents:
            info = agent_info(spec)
            cfg = agent_env_config(world.config, spec)
            for rnd in sorted(rounds, key=lambda r: r.commit_deadline):
                specs = [by_key[(m.market_id, rnd.commit_deadline)] for m in rnd.markets]
                keys = [(spec.name, spec.setting, s.event_id, s.step_index, 0) for s in specs]
                if all(k in writer.done for k in keys):
                    continue
                episodes = [world.reset(s, config=cfg) for s in specs]
                agent = cast(RoundAgent, build_agent(spec))
                forecasts, records = _played(agent, episodes)
                for step, key, record, forecast in zip(
                    specs, keys, records, forecasts, strict=True
                ):
                    if key in writer.done:
                        continue
                    grading = grade_step(dataset, step)
                    writer.write(
                        StepRecord(
                            run_id=writer.header.run_id,
                            agent=spec.name,
                            role=info.role,
                            setting=spec.setting,
                            event_id=step.event_id,
                            step_index=step.step_index,
                            cutoff=step.cutoff,
                            split=dataset.splits.get(step.event_id, ""),
                            category=dataset.event(step.event_id).category,
                            forecast=forecast,
                            episode=record,
                            grading=grading,
                            scores=score_forecast(forecast, grading, fallback=config.fallback),
                        )
                    )
    return {
        (rec.agent, rec.setting, rec.event_id, rec.cutoff): rec.forecast
        for rec in read_run_log(path).steps
    }
