"""Replay mode: a dataset's resolved markets as rounds forecast by pastcast agents as of each
commit deadline (``run_benchmark``: every episode's tools are bound to that cutoff), played
through an arena (docs/arena.md, "Replays of resolved markets"); a round-level agent forecasts
a round in one conversation, logged to a run log of its own ("The benchmark agent")."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from pastcast import safejson
from pastcast.agents import RoundAgent, agent_info, build_agent
from pastcast.atomic import write_atomic
from pastcast.corpus import CorpusBackend
from pastcast.cutoff import as_utc
from pastcast.dataset import Dataset
from pastcast.env import EnvConfig, Episode, ForecastEnv
from pastcast.records import BINARY_LABELS, EpisodeRecord, Forecast, StepSpec, UtcDatetime
from pastcast.runlog import AgentSpec, RunLogWriter, read_run_log
from pastcast.runner import (
    RunConfig,
    agent_env_config,
    graded_step_record,
    new_run_header,
    play_episode,
    run_benchmark,
)
from pastcast_arena._play import RoundPlayer, agent_key
from pastcast_arena._protocol import ArenaBackend, to_bp
from pastcast_arena._records import Round, RoundResult
from pastcast_arena._rounds import DeadlinePrices, RoundPlan, plan_rounds
from pastcast_arena._stats import ArenaReport, arena_report

FALLBACK_BP = 5_000


def arena_name(spec: AgentSpec) -> str:
    """The agent's name in the arena: its label, with the setting unless it is the default."""
    return spec.name if spec.setting == "memory_free" else f"{spec.name}@{spec.setting}"


@dataclass(frozen=True)
class ReplayResult:
    rounds: tuple[Round, ...]
    results: tuple[RoundResult, ...]
    report: ArenaReport
    run_log: Path
    failures: dict[str, int]
    """Unusable forecasts per agent (submitted as the fallback)."""
    round_log: Path | None = None
    """The round-level agents' run log (``ROUND_LOG``), where there are any."""


def replay_steps(rounds: Sequence[Round]) -> tuple[StepSpec, ...]:
    """One step per market and round at the round's commit deadline; a market in several
    rounds gets one step per round, in deadline order."""
    by_event: dict[str, list[Round]] = defaultdict(list)
    for r in sorted(rounds, key=lambda r: r.commit_deadline):
        for m in r.markets:
            by_event[m.market_id].append(r)
    return tuple(
        StepSpec(event_id=eid, step_index=i, cutoff=r.commit_deadline)
        for eid, rs in sorted(by_event.items())
        for i, r in enumerate(rs)
    )


def prediction_bp(forecast: Forecast | None) -> tuple[int, bool]:
    """A forecast as the basis points it is submitted as, and whether it was usable (an
    unusable one is the uniform fallback)."""
    if forecast is None or not forecast.usable:
        return FALLBACK_BP, False
    p = forecast.probs.get(BINARY_LABELS[0])
    total = sum(forecast.probs.values())
    if p is None or not total > 0:
        return FALLBACK_BP, False
    return to_bp(min(max(p / total, 0.0), 1.0)), True


def _resolved(dataset: Dataset, event_id: str, resolve_by: UtcDatetime | None) -> bool | None:
    res = dataset.resolutions.get(event_id)
    if res is None or (resolve_by is not None and as_utc(res.resolved_at) > as_utc(resolve_by)):
        return None
    return res.label == BINARY_LABELS[0]


def replay(
    dataset: Dataset,
    corpus: CorpusBackend | None,
    agents: Sequence[AgentSpec],
    out: str | Path,
    backend: ArenaBackend,
    *,
    plan: RoundPlan | None = None,
    resolve_by: UtcDatetime | None = None,
    prices: DeadlinePrices | None = None,
) -> ReplayResult:
    """Plan rounds, run the agents at each deadline (run log ``out/run.jsonl``, resumable), play
    the rounds through ``backend`` and write ``out/rounds.jsonl`` (one ``RoundResult`` a line).

    Markets resolved after ``resolve_by`` count as unresolved at scoring time (left out).
    ``prices`` (``ClobPrices``): benchmark prices and volumes at each deadline from the CLOB.
    """
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    names = [arena_name(s) for s in agents]
    if len(set(names)) != len(names):
        raise ValueError(f"two agents share an arena name: {names}")
    rounds = plan_rounds(dataset, plan, prices)
    if not rounds:
        raise ValueError(f"dataset {dataset.id}: no round has enough qualifying markets")
    steps = replay_steps(rounds)
    by_round = [s for s in agents if agent_info(s).round_level]
    by_step = [s for s in agents if not agent_info(s).round_level]
    run_log = folder / "run.jsonl"
    forecasts: dict[tuple[str, str, str, UtcDatetime], Forecast | None] = {}
    if by_step:
        config = RunConfig(agents=tuple(by_step))
        run_benchmark(dataset.with_steps(steps), corpus, config, run_log, progress=False)
        forecasts |= logged_forecasts(run_log)
    round_log = folder / ROUND_LOG if by_round else None
    if round_log is not None:
        forecasts |= play_round_agents(
            dataset, corpus, by_round, rounds, steps, round_log, EnvConfig()
        )
    roles = {arena_name(s): agent_info(s).role for s in agents}
    player = RoundPlayer(backend, {n: agent_key(n) for n in names}, roles=roles)
    failures = dict.fromkeys(names, 0)
    results = []
    for rnd in rounds:
        preds: dict[str, tuple[int, ...]] = {}
        for spec, name in zip(agents, names, strict=True):
            row = []
            for m in rnd.markets:
                key = (spec.name, spec.setting, m.market_id, rnd.commit_deadline)
                bp, usable = prediction_bp(forecasts.get(key))
                row.append(bp)
                failures[name] += not usable
            preds[name] = tuple(row)
        resolved = [_resolved(dataset, m.market_id, resolve_by) for m in rnd.markets]
        results.append(player.play(rnd, preds, resolved))
    write_results(folder / "rounds.jsonl", results)
    return ReplayResult(
        rounds=rounds,
        results=tuple(results),
        report=arena_report(results),
        run_log=run_log if by_step else folder / ROUND_LOG,
        failures=failures,
        round_log=round_log,
    )


def write_results(path: Path, results: Sequence[RoundResult]) -> None:
    """``results`` as a ``rounds.jsonl`` file (one ``RoundResult`` a line), written whole."""
    write_atomic(path, "".join(r.model_dump_json() + "\n" for r in results))


def read_results(path: str | Path) -> tuple[RoundResult, ...]:
    """The ``RoundResult``s of a ``rounds.jsonl`` file (one-line errors name the line)."""
    out = []
    p = Path(path)
    with p.open("rb") as fh:  # decoded line by line, so bad bytes are named by their line
        for i, line in enumerate(fh, start=1):
            try:
                out.append(RoundResult.model_validate(safejson.loads_line(line)))
            except (json.JSONDecodeError, ValueError) as exc:
                msg = str(exc).splitlines()[0]
                raise ValueError(f"{p}:{i}: not a round result ({msg})") from None
    return tuple(out)


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
    return logged_forecasts(path)


def logged_forecasts(path: Path) -> dict[ForecastKey, Forecast]:
    """A run log's forecasts by (agent, setting, market, cutoff)."""
    steps = read_run_log(path).steps
    return {(r.agent, r.setting, r.event_id, r.cutoff): r.forecast for r in steps}
