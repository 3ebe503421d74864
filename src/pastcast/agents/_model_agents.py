"""Registration of the model-driven agents: their factories (JSON-able arguments, rebuilt from the
run log; presets set theirs under the arguments given), the prompts each sends and the model
calls each step costs. Settings given alone (``temperature=0.1``) are read as the fields of
``decoding`` and ``config`` they are (docs/agents.md, "Common arguments").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from pastcast.agents._answer import Decoding, ParseFallback, over, stages_over
from pastcast.agents._base import agent_args
from pastcast.agents._calls import CallContext, CallEstimate, one_call
from pastcast.agents._llm_registry import agent_model
from pastcast.agents._no_tools import NO_TOOLS_PROMPT, ZERO_SHOT_PROMPT, NoToolsAgent
from pastcast.agents._round_agent import ROUND_PROMPT, RoundBenchmarkAgent
from pastcast.agents._tool_agent import PROMPTS, ActionMode, ToolAgent
from pastcast.agents._two_stage import (
    TwoStageAgent,
    TwoStageConfig,
    TwoStageStage,
    two_stage_prompts,
)
from pastcast.models import CacheMode
from pastcast.records import Record, Setting
from pastcast.registry import type_name
from pastcast.runlog import AgentSpec
from pastcast.validation import first_error

Count = Annotated[int, Field(ge=1)]


def _gather(
    args: dict[str, Any],
    into: str,
    record: type[Record],
    renamed: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Arguments named after fields of the record ``into`` takes, each checked, moved into it."""
    names = dict(renamed or {}) | {f: f for f in record.model_fields}
    flat: dict[str, Any] = {}
    for key in [k for k in args if k in names]:
        value = args.pop(key)
        name = names[key]
        try:
            record.model_validate({name: value})
        except ValidationError as exc:
            expected = type_name(record.model_fields[name].annotation)
            msg = " ".join(first_error(exc)[1].split())
            raise ValueError(
                f"argument {key!r} must be {expected}, not {value!r:.80} ({msg})"
            ) from None
        flat[name] = value
    if not flat:
        return args
    given = args.get(into)
    if isinstance(given, BaseModel):
        given = given.model_dump(exclude_unset=True)
    if given is None:
        given = {}
    if not isinstance(given, Mapping):
        raise ValueError(f"argument {into!r} must be an object of its fields, not {given!r:.80}")
    both = sorted(set(flat) & set(given))
    if both:
        raise ValueError(f"{both[0]!r} is given twice: alone and in {into!r}")
    args[into] = dict(given) | flat
    return args


def _flat_decoding(args: dict[str, Any]) -> dict[str, Any]:
    """``temperature=0.1`` as ``decoding={"temperature": 0.1}`` (and each other setting)."""
    return _gather(args, "decoding", Decoding)


def _flat_two_stage(args: dict[str, Any]) -> dict[str, Any]:
    """The research loop's settings as ``config``, the request settings as ``decoding``."""
    args = _gather(args, "config", TwoStageConfig, {"parse_fallback": "fallback"})
    return _flat_decoding(args)


# -- no-tools and zero-shot ---------------------------------------------------------------------


# The prompts each agent sends, as their registrations (``_builtin``) name them.
NO_TOOLS_PROMPTS = (NO_TOOLS_PROMPT,)
ZERO_SHOT_PROMPTS = (ZERO_SHOT_PROMPT,)
ROUND_PROMPTS = (ROUND_PROMPT,)


def no_tools(
    model: str,
    model_options: dict[str, Any] | None = None,
    constrained: bool = False,
    normalize_typography: bool = False,
    decoding: Decoding | None = None,
    cache_dir: str | None = None,
    cache_mode: CacheMode = "auto",
) -> NoToolsAgent:
    """One model call with the question only (Forecast-Dojo's no-tools setting)."""
    return NoToolsAgent(
        agent_model(model, model_options, cache_dir, cache_mode),
        constrained=constrained,
        normalize_typography=normalize_typography,
        decoding=Decoding.model_validate(decoding or {}),
    )


ZeroShotStage = Literal["forecast", "repair", "compact", "json_only"]

HINDCAST_RETRIES: dict[str, Decoding] = {
    "repair": Decoding(max_tokens=1400),
    "compact": Decoding(max_tokens=2400),
    "json_only": Decoding(max_tokens=900),
}
"""Hindcast Table 4's forecast-retry budgets: the JSON-repair, compact and JSON-only passes."""

ZERO_SHOT_DECODING = Decoding(temperature=0.1, max_tokens=4096, top_p=1.0)


def _retries(fallback: ParseFallback) -> int:
    return 1 if fallback == "repair" else 3


def _zero_shot_calls(args: Mapping[str, Any], context: CallContext) -> CallEstimate:
    """One call; the parse fallback's retries at most."""
    return one_call(args, context, retries=_retries(args.get("parse_fallback", "four_step")))


def zero_shot(
    model: str,
    model_options: dict[str, Any] | None = None,
    constrained: bool = False,
    normalize_typography: bool = False,
    decoding: Decoding | None = None,
    parse_fallback: ParseFallback = "four_step",
    stages: dict[ZeroShotStage, Decoding] | None = None,
    cache_dir: str | None = None,
    cache_mode: CacheMode = "auto",
) -> NoToolsAgent:
    """Hindcast's zero-shot baseline: its prompt and answer (choice, probabilities, confidence,
    reasoning), its settings by default (temperature 0.1, 4096 tokens, top-p 1, four-step parse
    fallback, its retry budgets), decoding and stages set over them."""
    return NoToolsAgent(
        agent_model(model, model_options, cache_dir, cache_mode),
        constrained=constrained,
        normalize_typography=normalize_typography,
        decoding=over(ZERO_SHOT_DECODING, decoding),
        prompt=ZERO_SHOT_PROMPT,
        fallback=parse_fallback,
        stages=stages_over(HINDCAST_RETRIES, stages),
    )


# -- the tool agent ------------------------------------------------------------------------------


def _tool_agent_prompts(spec: AgentSpec) -> tuple[str, ...]:
    """The tool agent's prompt: by action mode and memory; the no-tools prompt without tools."""
    if spec.setting == "no_tools":
        return (NO_TOOLS_PROMPT,)
    memory = spec.args.get("memory")
    on = bool(memory) if memory is not None else spec.setting == "memory_on"
    return (PROMPTS[(spec.args.get("action_mode", "json"), on)],)


def _tool_agent_calls(args: Mapping[str, Any], context: CallContext) -> CallEstimate:
    """The research turns assumed, within the turn budget; then the final ask and a repair."""
    if context.setting == "no_tools":
        return one_call(args, context)
    return _conversation(context, args.get("max_iterations"), asks=2)


def _conversation(context: CallContext, turns: int | None, asks: int) -> CallEstimate:
    """A research conversation: the turns assumed, within the turn budget (``turns`` caps it),
    then ``asks`` more calls at most (the final ask, a repair)."""
    env = context.budgets
    most = min(
        min(turns or env.max_tool_iterations, env.max_tool_iterations) + asks, env.max_model_calls
    )
    return CallEstimate(calls=min(context.research_turns, most), max_calls=most, conversation=True)


def tool_agent(
    model: str,
    model_options: dict[str, Any] | None = None,
    action_mode: ActionMode = "json",
    max_iterations: Count | None = None,
    max_tool_calls: Count | None = None,
    memory: bool | None = None,
    normalize_typography: bool = False,
    max_result_chars: Count = 12_000,
    decoding: Decoding | None = None,
    no_tools: Decoding | None = None,
    cache_dir: str | None = None,
    cache_mode: CacheMode = "auto",
    setting: Setting = "memory_free",
) -> ToolAgent:
    """ReAct research agent (JSON actions or native tool calls); notebook under @memory_on.
    ``no_tools``: the decoding of the single call made without tools, over ``decoding``
    (Forecast-Dojo raises its reply cap to 65,536 tokens: the whole forecast is that call)."""
    return ToolAgent(
        agent_model(model, model_options, cache_dir, cache_mode),
        action_mode=action_mode,
        max_iterations=max_iterations,
        max_tool_calls=max_tool_calls,
        memory=memory if memory is not None else setting == "memory_on",
        normalize_typography=normalize_typography,
        max_result_chars=max_result_chars,
        decoding=Decoding.model_validate(decoding or {}),
        no_tools=Decoding.model_validate(no_tools) if no_tools is not None else None,
    )


# -- Foresight Arena's round-level benchmark agent ----------------------------------------------


def _round_calls(args: Mapping[str, Any], context: CallContext) -> CallEstimate:
    """One conversation per round, charged to its first market's step: the research turns
    assumed, within the turn budget, then the last ask for the submission."""
    return _conversation(context, int(args.get("max_turns") or 20), asks=1)


def arena_benchmark(
    model: str,
    model_options: dict[str, Any] | None = None,
    max_turns: Count = 20,
    max_tool_calls: Count = 60,
    max_result_chars: Count = 12_000,
    decoding: Decoding | None = None,
    cache_dir: str | None = None,
    cache_mode: CacheMode = "auto",
) -> RoundBenchmarkAgent:
    """Foresight Arena's LLM benchmark agent (appendix D.1): one conversation per round over
    all its markets (getMarketDetails, getPriceHistory, searchNews, readDocument,
    submitPredictions); market-access setting. Alone, a step is a round of one market."""
    return RoundBenchmarkAgent(
        agent_model(model, model_options, cache_dir, cache_mode),
        max_turns=max_turns,
        max_tool_calls=max_tool_calls,
        max_result_chars=max_result_chars,
        decoding=Decoding.model_validate(decoding or {}),
    )


# -- the two-stage agent -------------------------------------------------------------------------


class TwoStagePreset(Record):
    """What a two-stage agent's ``config``, ``decoding`` and ``stages`` are set over."""

    config: TwoStageConfig = TwoStageConfig()
    decoding: Decoding = Decoding()
    stages: dict[str, Decoding] = Field(default_factory=dict)

    def resolve(self, args: Mapping[str, Any]) -> TwoStageConfig:
        given: TwoStageConfig | None = args.get("config")
        return over(self.config, given)

    def prompts(self, spec: AgentSpec) -> tuple[str, ...]:
        """The prompt files of a spec: its config over the preset's."""
        return two_stage_prompts(self.resolve(agent_args(spec)))

    def calls(self, args: Mapping[str, Any], context: CallContext) -> CallEstimate:
        """Seed queries, a reflection between rounds, the report, the tally, the forecast; the
        parse fallback's retries at most. Without the search tool: the forecast only."""
        cfg = self.resolve(args)
        retries = _retries(cfg.fallback)
        if context.setting == "no_tools":
            return one_call(args, context, retries=retries)
        research = 1 + (cfg.rounds - 1) + 1 + int(cfg.tally)
        most = min(research + 1 + retries, context.budgets.max_model_calls)
        # a research prompt carries the evidence of about two tool results
        return CallEstimate(calls=min(research + 1, most), max_calls=most, evidence_results=2)

    def factory(self, doc: str) -> Callable[..., TwoStageAgent]:
        """The registered factory of an agent with these settings under its own."""

        def two_stage(
            model: str,
            model_options: dict[str, Any] | None = None,
            config: TwoStageConfig | None = None,
            decoding: Decoding | None = None,
            stages: dict[TwoStageStage, Decoding] | None = None,
            cache_dir: str | None = None,
            cache_mode: CacheMode = "auto",
        ) -> TwoStageAgent:
            return TwoStageAgent(
                agent_model(model, model_options, cache_dir, cache_mode),
                over(self.config, config),
                decoding=over(self.decoding, decoding),
                stages=stages_over(self.stages, stages),
            )

        two_stage.__doc__ = doc
        return two_stage


DEFAULT_TWO_STAGE = TwoStagePreset()

HINDCAST_TWO_STAGE = TwoStagePreset(
    config=TwoStageConfig(
        rounds=3,
        seed_queries=6,
        followup_queries=6,
        top_k=20,
        expand=20,
        stop_confidence=0.7,
        expand_threads=True,
        author_posts=5,
        author_comments=5,
        tally=True,
        answer_form="choice",
        fallback="four_step",
    ),
    decoding=Decoding(temperature=0.1, top_p=1.0),
    stages={
        "queries": Decoding(temperature=0.2, max_tokens=4096),
        "reflect": Decoding(temperature=0.3, max_tokens=4096),
        "report": Decoding(temperature=0.1, max_tokens=3500),
        "tally": Decoding(temperature=0.1, max_tokens=2200),
        "forecast": Decoding(temperature=0.1, max_tokens=3200),
        **HINDCAST_RETRIES,
    },
)
"""Hindcast's retrieval agent (section 5.2, appendix B.3): 3 rounds of 6 seed and up to 6
follow-up queries, top-20 hits, the 20 best expanded with full text, thread and the author's
last 5 posts and 5 comments, a 0.7 confidence stop, the tally, its answer object and four-step
parse fallback, top-p 1 and Table 4's temperature and token cap per call."""


two_stage = DEFAULT_TWO_STAGE.factory(
    """Research rounds (queries, expansion, reflection, confidence stop), report and optional
    tally, then forecast; the loop in config, per-stage request settings in stages."""
)
two_stage_hindcast = HINDCAST_TWO_STAGE.factory(
    """The two-stage agent with Hindcast's settings (``HINDCAST_TWO_STAGE``) under its own."""
)
