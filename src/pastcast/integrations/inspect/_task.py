"""The Inspect task ``pastcast/forecast``: one sample per forecast step, one epoch per rollout,
played by a pastcast agent over Inspect's model and scored with pastcast's metrics. The resolved
outcome is never in a sample: the scorer takes it from the dataset after the episode. Every
argument of the solver and the scorer is plain data, as Inspect records them in the log; both
reopen the same shared ``Replay``. docs/integrations.md ("Inspect")."""

from __future__ import annotations

import functools
from typing import Any

import anyio.to_thread
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, ModelOutput, get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from pydantic import ValidationError

from pastcast.agents import agent_spec, agents, build_agent, prompts_for
from pastcast.app import shared_replay
from pastcast.env import EnvConfig, question_view
from pastcast.integrations.inspect._model import PROVIDER, inspect_messages
from pastcast.integrations.inspect._tokens import seed_tiktoken_cache
from pastcast.records import EpisodeRecord, Forecast, Setting
from pastcast.runlog import AgentSpec, Grading
from pastcast.runner import agent_env_config, code_version, play_episode
from pastcast.scoring import Fallback, metric_list, score_forecast, step_scores
from pastcast.validation import first_problem

STORE_KEY = "pastcast"
"""Where the solver leaves the step's agent spec, forecast and episode record in the sample's
store (``pastcast import inspect-log`` reads them back)."""

NATIVE_TOOLS = {"action_mode": "native"}
"""Inspect's providers call tools natively, so the tool agents default to native tool calls."""

_SETTINGS: tuple[Setting, ...] = ("memory_free", "no_tools")


def _spec(agent: str, agent_args: dict[str, Any], setting: Setting, model: str) -> AgentSpec:
    """The agent's spec; an agent that takes a model gets Inspect's (``inspect:MODEL``)."""
    args = dict(agent_args)
    label = agent
    if "model" in agents.get(agent).parameters():
        args["model"] = f"{PROVIDER}:{model}"
        label = f"{agent}:{model}"
    return agent_spec(agent, setting=setting, label=label, **args)


@solver
def pastcast_agent(
    dataset: str,
    corpus: str | None,
    retrieval: str,
    embedder: str | None,
    agent: str,
    agent_args: dict[str, Any],
    setting: Setting,
    env: dict[str, Any],
) -> Solver:
    """Play the sample's forecast step with a pastcast agent over Inspect's model."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        replay = shared_replay(dataset, corpus, retrieval, embedder)
        model = str(get_model())
        spec = _spec(agent, agent_args, setting, model)
        step = replay.step(state.metadata["event_id"], state.metadata["step_index"])
        config = agent_env_config(EnvConfig.model_validate(env), spec)
        episode = replay.episode(step, config, setting=setting, rollout=state.epoch - 1)
        # The agent is synchronous: it runs in a worker thread, and its model calls come back
        # to this event loop (pastcast.integrations.inspect._model).
        forecast, record = await anyio.to_thread.run_sync(
            functools.partial(play_episode, build_agent(spec), episode)
        )
        state.store.set(STORE_KEY, stored(spec, forecast, record))
        state.messages = last_conversation(record) or state.messages
        state.output = ModelOutput.from_content(model=model, content=forecast.raw_text)
        return state

    return solve


def stored(spec: AgentSpec, forecast: Forecast, record: EpisodeRecord) -> dict[str, Any]:
    """What a sample's store holds under ``STORE_KEY``: the agent, its forecast, its episode."""
    return {
        "agent": spec.model_dump(mode="json"),
        "forecast": forecast.model_dump(mode="json"),
        "episode": record.model_dump(mode="json"),
    }


def answer_text(forecast: Forecast) -> str:
    return ", ".join(f"{k}: {p:.3f}" for k, p in forecast.probs.items())


def last_conversation(record: EpisodeRecord) -> list[ChatMessage]:
    """What ``inspect view`` shows as the sample's messages: the last model call's request and
    reply (the whole research conversation for the tool agent); none without a model call."""
    if not record.model_calls:
        return []
    last = record.model_calls[-1]
    reply = record.reply_of(last)
    sent = [*record.messages_of(last), *(() if reply is None else (reply,))]
    return inspect_messages(sent)


SCORED = tuple(m.name for m in metric_list() if m.paired)
"""The metrics a sample's score holds (pastcast's paired ones, plugins installed when this
module is imported included), each with its mean and standard error, beside ``usable``."""


def sample_score(forecast: Forecast, grading: Grading, fallback: Fallback) -> dict[str, float]:
    """A sample's score: each of ``SCORED`` (an unusable forecast scored by the fallback) and
    ``usable``, 1 when the answer parsed."""
    values = step_scores(forecast, grading, fallback)
    return {**{name: values[name] for name in SCORED}, "usable": float(forecast.usable)}


def scored_sample(forecast: Forecast, grading: Grading, fallback: Fallback) -> Score:
    """The scorer's ``Score`` of a forecast: ``sample_score``, the answer, why it is unusable,
    and the grading and every score in its metadata."""
    scores = score_forecast(forecast, grading, fallback=fallback)
    return Score(
        value=sample_score(forecast, grading, fallback),
        answer=answer_text(forecast),
        explanation=forecast.rationale or forecast.failure_reason or "",
        metadata={
            "grading": grading.model_dump(mode="json"),
            "scores": scores.model_dump(mode="json"),
        },
    )


@scorer(metrics={**{name: [mean(), stderr()] for name in SCORED}, "usable": [mean()]})
def forecast_score(
    dataset: str,
    corpus: str | None,
    retrieval: str,
    embedder: str | None = None,
    fallback: Fallback = "uniform",
) -> Scorer:
    """pastcast's scores of the forecast (``SCORED``: Brier on pastcast's scale, accuracy, log
    loss; an unusable forecast is scored by the fallback); the grading is in the score's
    metadata."""

    async def score(state: TaskState, target: Target) -> Score:
        replay = shared_replay(dataset, corpus, retrieval, embedder)
        played = state.store.get(STORE_KEY)
        forecast = Forecast.model_validate(played["forecast"])
        step = replay.step(state.metadata["event_id"], state.metadata["step_index"])
        return scored_sample(forecast, replay.grading(step), fallback)

    return score


@task
def forecast(
    dataset: str = "world",
    corpus: str | None = None,
    retrieval: str = "bm25",
    embedder: str | None = None,
    split: str | None = None,
    max_events: int | None = None,
    agent: str = "tool-agent",
    agent_args: dict[str, Any] | None = None,
    setting: Setting = "memory_free",
    env: dict[str, Any] | None = None,
    fallback: Fallback = "uniform",
) -> Task:
    """Forecast resolved questions as of past dates with cutoff-bound research tools.

    The arguments (``-T NAME=VALUE``) are described in docs/integrations.md ("Inspect"); rollouts
    are Inspect's epochs (``--epochs``).
    """
    if setting not in _SETTINGS:
        raise ValueError(
            f"-T setting={setting}: choose {' or '.join(_SETTINGS)} (Inspect plays each step on "
            "its own, so no notebook is carried between steps)"
        )
    seed_tiktoken_cache()  # Inspect's token estimates need o200k_base; offline, from the wheel
    try:
        env_config = EnvConfig.model_validate(env or {})
    except ValidationError as exc:
        raise ValueError(first_problem(exc, "env")) from None
    if agent_args is None:
        agent_args = dict(NATIVE_TOOLS) if "action_mode" in agents.get(agent).parameters() else {}
    replay = shared_replay(dataset, corpus, retrieval, embedder)
    placeholder = _spec(agent, agent_args, setting, "model")  # checks the arguments now
    samples = [
        Sample(
            id=f"{step.event_id}#{step.step_index}",
            input=question_view(
                replay.dataset.event_at(step.event_id, step.cutoff), step.cutoff, step.step_index
            ).render(),
            metadata={
                "event_id": step.event_id,
                "step_index": step.step_index,
                "cutoff": step.cutoff.isoformat(),
                "split": replay.dataset.splits.get(step.event_id, ""),
                "category": replay.dataset.event(step.event_id).category,
            },
        )
        for step in replay.steps(split, max_events)
    ]
    env_json = env_config.model_dump(mode="json")
    return Task(
        dataset=samples,
        solver=pastcast_agent(
            dataset, corpus, retrieval, embedder, agent, agent_args, setting, env_json
        ),
        scorer=forecast_score(dataset, corpus, retrieval, embedder, fallback),
        metadata={
            STORE_KEY: {
                "dataset_id": replay.dataset.id,
                "corpus": None if replay.corpus is None else replay.corpus.model_dump(mode="json"),
                "env": env_json,
                "fallback": fallback,
                "split": split,
                "max_events": max_events,
                "prompts": prompts_for([placeholder]),
                "code_version": code_version(),
            }
        },
    )
