"""Round-level agents in a replay (``RoundAgent``, the ``arena-benchmark`` agent): one
conversation per agent and round over episodes built exactly as the runner builds a step's, so
its tools are bound to the deadline; its forecasts are written as ordinary step records to a run
log of their own (``ROUND_LOG``). docs/arena.md, "The benchmark agent"."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import cast

from pastcast.agents import RoundAgent, agent_info, build_agent
from pastcast.corpus import CorpusBackend
from pastcast.dataset import Dataset
from pastcast.env import EnvConfig, Episode, ForecastEnv
from pastcast.records import EpisodeRecord, Forecast, StepSpec, UtcDatetime
from pastcast.runlog import AgentSpec, RunLogWriter, read_run_log
from pastcast.runner import (
    RunConfig,
    agent_env_config,
    graded_step_record,
    new_run_header,
    play_episode,
)
from pastcast_arena._records import Round

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
    header = new_run_header(dataset, config, backend)
    # no python tool: the round's tools are the agent's own and the corpus's
    world = ForecastEnv(
        dataset.with_steps(steps), backend, env.model_copy(update={"python_tool": False})
    )
    path = Path(out)
    with RunLogWriter(path, header) as writer:
        for spec in agents:
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
                    writer.write(
                        graded_step_record(
                            writer.header.run_id,
                            spec,
                            dataset,
                            step,
                            forecast,
                            record,
                            fallback=config.fallback,
                        )
                    )
    return {
        (rec.agent, rec.setting, rec.event_id, rec.cutoff): rec.forecast
        for rec in read_run_log(path).steps
    }
