"""Experiment plans: a whole benchmark run declared in one TOML or YAML file, one agent per
model and setting (``PLAN_SETTINGS``); docs/runs.md, "Experiment plans", lists every key.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, JsonValue, model_validator

from pastcast.agents import Decoding, agent_spec, agents
from pastcast.cutoff import DayConvention
from pastcast.dataset import Dataset
from pastcast.env import EnvConfig
from pastcast.errors import FieldError
from pastcast.markets import make_schedule, schedules
from pastcast.models import known_providers, spec_model_name
from pastcast.records import Record, Setting, StepSpec
from pastcast.retrying import RetryPolicy
from pastcast.runlog import AgentSpec
from pastcast.runner._config import (
    MAX_ROLLOUTS,
    MAX_WORKERS,
    BreakerConfig,
    Execution,
    PlanCorpus,
    ProviderLimits,
    RunConfig,
)
from pastcast.runner._executors import executors
from pastcast.runner._plan_file import load_record
from pastcast.runner._presets import PresetRecord, deep_merge, preset

PlanSetting = Literal["no_tools", "memory_free", "memory_on", "two_stage", "market_access"]

# setting -> (registered agent, run-log setting, suffix of the agent's name)
PLAN_SETTINGS: dict[PlanSetting, tuple[str, Setting, str]] = {
    "no_tools": ("tool-agent", "no_tools", ""),
    "memory_free": ("tool-agent", "memory_free", ""),
    "memory_on": ("tool-agent", "memory_on", ""),
    "two_stage": ("two-stage", "memory_free", "+two-stage"),
    "market_access": ("tool-agent-market", "memory_free", "+market"),
}


# Providers built on the OpenAI-compatible client, which take a ``prices`` file option.
_PRICED_PROVIDERS = ("openai", "openai-compatible")


class PlanModel(Record):
    spec: str = Field(min_length=1)
    """A provider spec (``openai:gpt-4o-mini``, ``openai-compatible:NAME@URL``, ...)."""
    label: str | None = None
    """The agents' name in the run log (default: the model's name)."""
    options: dict[str, JsonValue] = Field(default_factory=dict)
    knowledge_cutoff: date | None = Field(
        default=None, validation_alias=AliasChoices("knowledge_cutoff", "cutoff")
    )
    """The last day its training data may cover (default: ``pastcast.models.knowledge_cutoffs``);
    ``cutoff``, its first name, is read too."""

    @property
    def name(self) -> str:
        return self.label or spec_model_name(self.spec)


class PlanAgent(Record):
    """A registered agent run as it is (a reference, the heuristic, a baseline)."""

    name: str = Field(min_length=1)
    label: str | None = None
    setting: Setting = "memory_free"
    args: dict[str, JsonValue] = Field(default_factory=dict)


class PlanConcurrency(Record):
    episodes: int = Field(default=16, ge=1, le=MAX_WORKERS)
    """Episodes in flight at once (the global limit)."""
    executor: str = "local"
    executor_args: dict[str, JsonValue] = Field(default_factory=dict)
    providers: dict[str, ProviderLimits] = Field(default_factory=dict)


class EstimateAssumptions(Record):
    """What ``pastcast plan`` assumes of a model-driven step (the plan may change them)."""

    tool_turns: int = Field(default=8, ge=1)
    """Model turns of a research step of the tool agent (each may call a tool)."""
    tool_result_tokens: int = Field(default=600, ge=0)
    """Tokens one tool result adds to the conversation."""
    reply_tokens: int = Field(default=300, ge=1)
    """Tokens of one model reply."""


class ExperimentPlan(PresetRecord):
    PRESET_STAGE = "run"
    # Agent arguments are set under each agent's own (``_preset_args``), not here: a plan's
    # ``agent_args`` replace an agent's listed arguments, a preset's never do.
    PRESET_SKIPS = frozenset({"agent_args"})
    PRESET_DENSE_LEG = ("corpus.retrieval", "corpus.embedder")

    dataset: str = "world"
    """'world[:SEED][,FIELD=VALUE...]' (docs/world.md), a dataset directory, or a Forecast-Dojo
    release folder (questions/train.parquet, questions/eval.parquet)."""
    split: str | None = None
    schedule: str | None = None
    """Re-schedule forecast dates (a registered schedule: ``causal-dojo``, ``dojo``, ...); the
    default: the dataset's own steps."""
    max_events: int | None = Field(default=None, ge=1)
    max_steps: int | None = Field(default=None, ge=1)
    """The most steps one execution runs, then it stops with the log resumable: the same
    command again goes on (``Execution.max_steps``; not part of the run's definition)."""
    day_convention: DayConvention = DayConvention.START_OF_DAY
    """How a Forecast-Dojo release's forecast dates become cutoffs (``pastcast.cutoff``)."""
    covered_only: bool = False
    """Play only the steps the corpus covers (a document in the coverage days before the
    cutoff); uncovered steps are always reported."""
    coverage_days: int = Field(default=7, ge=1)
    out: str = "runs/plan/run.jsonl"
    corpus: PlanCorpus = PlanCorpus()
    models: tuple[PlanModel, ...] = ()
    settings: tuple[PlanSetting, ...] = ("memory_free",)
    agents: tuple[PlanAgent, ...] = ()
    agent_args: dict[str, dict[str, JsonValue]] = Field(default_factory=dict)
    """Arguments of every agent built on a registered agent, by that agent's name
    (``[agent_args.tool-agent] action_mode = "native"``); ``tool-agent-market`` takes those of
    ``tool-agent`` unless it has its own."""
    rollouts: int = Field(default=1, ge=1, le=MAX_ROLLOUTS)
    fallback: Literal["uniform", "worst"] = "uniform"
    budgets: EnvConfig = EnvConfig()
    decoding: Decoding = Decoding()
    """Request settings of every model agent's calls (the agents' ``decoding`` argument; an
    agent's own in ``agent_args`` is set over these)."""
    concurrency: PlanConcurrency = PlanConcurrency()
    retries: RetryPolicy = RetryPolicy()
    breaker: BreakerConfig = BreakerConfig()
    prices: str | None = None
    """A price table file (TOML or JSON) on top of the built-in one: for the estimate, and for
    the recorded cost of OpenAI-compatible models (a model's own ``options.prices`` wins)."""
    estimate: EstimateAssumptions = EstimateAssumptions()

    @model_validator(mode="after")
    def _check(self) -> ExperimentPlan:
        if not self.models and not self.agents:
            raise ValueError("the plan runs nothing: give models (with settings) or agents")
        if self.models and not self.settings:
            raise ValueError("settings: give at least one setting for the models")
        if len(set(self.settings)) != len(self.settings):
            raise ValueError("settings: a setting is listed twice")
        labels = [m.name for m in self.models]
        if len(set(labels)) != len(labels):
            raise ValueError("models: two models have the same label (set label)")
        if self.schedule is not None and self.schedule not in schedules.names():
            raise ValueError(
                f"schedule: unknown {self.schedule!r} (one of {', '.join(schedules.names())})"
            )
        if self.concurrency.executor not in executors:
            raise ValueError(
                f"concurrency.executor: unknown {self.concurrency.executor!r} "
                f"(one of {', '.join(executors.names())})"
            )
        return self

    def agent_specs(self) -> tuple[AgentSpec, ...]:
        """Every agent of the plan: each model in each setting, then the plan's agents."""
        specs: list[AgentSpec] = []
        for i, model in enumerate(self.models):
            provider = model.spec.partition(":")[0]
            if ":" not in model.spec or provider not in known_providers():
                raise FieldError(
                    "",
                    f"models[{i}].spec: {model.spec!r} is not PROVIDER:NAME with a known "
                    f"provider ({', '.join(known_providers())})",
                )
            for setting in self.settings:
                factory, run_setting, suffix = PLAN_SETTINGS[setting]
                args: dict[str, Any] = {"model": model.spec}
                options = dict(model.options)
                if self.prices and provider in _PRICED_PROVIDERS:
                    options.setdefault("prices", self.prices)  # the run's costs, as estimated
                if options:
                    args["model_options"] = options
                args |= self._model_args(factory)
                where = f"models[{i}] ({setting})"
                specs.append(_checked_spec(factory, run_setting, model.name + suffix, args, where))
        for i, agent in enumerate(self.agents):
            where = f"agents[{i}]"
            try:
                agents.get(agent.name)
            except ValueError as exc:
                raise FieldError("", f"{where}.name: {exc}") from None
            args = deep_merge(
                self._preset_args(agent.name),
                dict(agent.args) | _args_of(self.agent_args, agent.name),
            )
            specs.append(_checked_spec(agent.name, agent.setting, agent.label, args, where))
        keys = [(s.name, s.setting) for s in specs]
        dup = next((k for k in keys if keys.count(k) > 1), None)
        if dup is not None:
            raise FieldError("", f"agents: {dup[0]}@{dup[1]} is planned twice (set a label)")
        return tuple(specs)

    def _model_args(self, factory: str) -> dict[str, Any]:
        """The plan's decoding and its arguments for ``factory``: the agent's own decoding set
        over the plan's."""
        extra = _args_of(self.agent_args, factory)
        decoding = self.decoding.model_dump(mode="json", exclude_unset=True)
        own = extra.pop("decoding", None)
        if isinstance(own, dict):
            decoding |= own
        elif own is not None:
            extra["decoding"] = own  # not an object: refused, naming it, by the agent's check
        return deep_merge(
            self._preset_args(factory), ({"decoding": decoding} if decoding else {}) | extra
        )

    def _preset_args(self, factory: str) -> dict[str, Any]:
        """The preset's arguments of agents built on ``factory`` (set under everything else)."""
        if self.preset is None:
            return {}
        return _args_of(preset(self.preset).fields("run").get("agent_args", {}), factory)

    def run_config(self) -> RunConfig:
        return RunConfig(
            agents=self.agent_specs(),
            rollouts=self.rollouts,
            env=self.budgets,
            fallback=self.fallback,
            workers=self.concurrency.episodes,
            split=self.split,
            max_events=self.max_events,
        )

    def execution(self) -> Execution:
        return Execution(
            executor=self.concurrency.executor,
            executor_args=dict(self.concurrency.executor_args),
            providers=dict(self.concurrency.providers),
            retry=self.retries,
            breaker=self.breaker,
            max_steps=self.max_steps,
        )

    def knowledge_cutoffs(self) -> dict[str, date]:
        """The cutoffs the plan gives for its models (by model spec)."""
        return {m.spec: m.knowledge_cutoff for m in self.models if m.knowledge_cutoff is not None}


def _args_of(by_agent: dict[str, Any], factory: str) -> dict[str, Any]:
    """The arguments listed for ``factory``; ``tool-agent-market`` takes ``tool-agent``'s unless
    it has its own."""
    own = by_agent.get(factory)
    if own is None and factory == "tool-agent-market":
        own = by_agent.get("tool-agent")
    return dict(own or {})


def _checked_spec(
    factory: str, setting: Setting, label: str | None, args: dict[str, Any], where: str
) -> AgentSpec:
    """The agent's spec, its arguments checked by the registry before any work."""
    try:
        return agent_spec(factory, setting=setting, label=label, **args)
    except ValueError as exc:
        raise FieldError("", f"{where}: {exc}") from None


def load_plan(path: str | Path) -> ExperimentPlan:
    """Read and check a plan (TOML, or YAML for ``.yaml``/``.yml``); ``FieldError`` names the
    file and the key of the first problem."""
    plan = load_record(ExperimentPlan, path)
    try:
        plan.agent_specs()
    except FieldError as exc:
        raise FieldError("", f"{path}: {exc}") from None
    return plan


def reschedule(dataset: Dataset, schedule: str | None) -> Dataset:
    """The dataset with its forecast steps made by ``schedule`` (a registered schedule:
    ``causal-dojo``, ``dojo``, ...) from each resolved event's beliefs; unchanged for None. The
    dataset id names the schedule, so a run log's header (and a resume) tells the two apart."""
    if schedule is None:
        return dataset
    make = make_schedule(schedule)
    steps: list[StepSpec] = []
    for event in dataset.events:
        resolution = dataset.resolutions.get(event.id)
        if resolution is not None:
            steps.extend(make(event, dataset.beliefs.get(event.id, ()), resolution))
    return replace(dataset, id=f"{dataset.id}+schedule={schedule}", steps=tuple(steps))
