"""What a plan will cost before it runs: the work, the model calls, tokens and dollars, and the
events a model may simply remember (how each is estimated: docs/runs.md, "pastcast plan FILE").
"""

from __future__ import annotations

from datetime import date

from pydantic import Field

from pastcast.agents import CallContext, call_estimate, prompts_for
from pastcast.dataset import Dataset
from pastcast.models import PriceTable, remembered, spec_model_name
from pastcast.records import Record
from pastcast.runlog import AgentSpec
from pastcast.runner._plan import EstimateAssumptions, ExperimentPlan
from pastcast.runner._run import _chains, knowledge_cutoffs_of


class EstimateRow(Record):
    agent: str
    setting: str
    model: str | None
    episodes: int
    model_calls: int
    """Expected calls over all episodes."""
    model_calls_max: int
    """What the budgets allow at most."""
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    """None: the model has no price."""
    cost_max_usd: float | None


class PlanEstimate(Record):
    dataset_id: str
    events: int
    steps: int
    """Forecast steps (event x date)."""
    agents: int
    rollouts: int
    episodes: int
    """Steps x agents x rollouts: one run-log record each."""
    rows: tuple[EstimateRow, ...]
    model_calls: int
    model_calls_max: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    """Over priced models only (see ``unpriced``)."""
    cost_max_usd: float
    unpriced: tuple[str, ...] = ()
    knowledge_cutoffs: dict[str, date | None] = Field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    assumptions: EstimateAssumptions = EstimateAssumptions()


def _tokens(text: str) -> int:
    return len(text) // 4


def _conversation(base: float, turns: int, growth: float) -> float:
    """Input tokens of ``turns`` calls whose context grows by ``growth`` per turn."""
    return turns * base + growth * turns * (turns - 1) / 2


def _per_step(
    spec: AgentSpec, plan: ExperimentPlan, question: int, prompt: int
) -> tuple[float, float, float, float, float]:
    """Calls, calls at most, input tokens, at most, and output tokens of one episode."""
    a = plan.estimate
    context = CallContext(budgets=plan.budgets, research_turns=a.tool_turns)
    calls = call_estimate(spec, context)
    base = float(prompt + question)
    reply = a.reply_tokens
    if spec.setting == "memory_on":
        base += reply  # the notebook carried in
    if calls.conversation:
        growth = a.tool_result_tokens + reply
        tin = _conversation(base, round(calls.calls), growth)
        tin_max = _conversation(base, calls.max_calls, growth)
    else:
        fresh = base + calls.evidence_results * a.tool_result_tokens
        tin, tin_max = calls.calls * fresh, calls.max_calls * fresh
    return calls.calls, calls.max_calls, tin, tin_max, calls.calls * reply


def estimate_plan(plan: ExperimentPlan, dataset: Dataset) -> PlanEstimate:
    """The plan's work, calls, tokens and cost on ``dataset`` (already rescheduled)."""
    config = plan.run_config()
    chains = _chains(dataset, config)
    prices = PriceTable.load(plan.prices) if plan.prices else PriceTable()
    rows: list[EstimateRow] = []
    unpriced: list[str] = []
    for spec in config.agents:
        mine = [c for c in chains if c.spec is spec]
        prompt = sum(_tokens(t) for t in prompts_for((spec,)).values())
        sums = [0.0] * 5
        for chain in mine:
            e = dataset.event(chain.event_id)
            question = _tokens(" ".join((e.title, e.description, e.resolution_criteria, *e.labels)))
            per = _per_step(spec, plan, question, prompt)
            sums = [t + len(chain.steps) * x for t, x in zip(sums, per, strict=True)]
        calls, calls_max, tin, tin_max, tout = sums
        model = spec.args.get("model")
        own = (spec.args.get("model_options") or {}).get("prices")
        table = PriceTable.load(own) if isinstance(own, str) and own != plan.prices else prices
        out_max = calls_max * (plan.decoding.max_tokens or plan.estimate.reply_tokens)
        cost = cost_max = None
        if isinstance(model, str):
            price = table.price(spec_model_name(model))
            if price is None:
                if model not in unpriced:
                    unpriced.append(model)
            else:
                cost = (tin * price.input + tout * price.output) / 1e6
                cost_max = (tin_max * price.input + out_max * price.output) / 1e6
        else:
            cost = cost_max = 0.0
        rows.append(
            EstimateRow(
                agent=spec.name,
                setting=spec.setting,
                model=model if isinstance(model, str) else None,
                episodes=sum(len(c.steps) for c in mine),
                model_calls=round(calls),
                model_calls_max=round(calls_max),
                input_tokens=round(tin),
                output_tokens=round(tout),
                cost_usd=cost,
                cost_max_usd=cost_max,
            )
        )
    events = {c.event_id for c in chains}
    cutoffs = knowledge_cutoffs_of(config.agents, plan.knowledge_cutoffs())
    return PlanEstimate(
        dataset_id=dataset.id,
        events=len(events),
        steps=len({(c.event_id, s.step_index) for c in chains for s in c.steps}),
        agents=len(config.agents),
        rollouts=config.rollouts,
        episodes=sum(r.episodes for r in rows),
        rows=tuple(rows),
        model_calls=sum(r.model_calls for r in rows),
        model_calls_max=sum(r.model_calls_max for r in rows),
        input_tokens=sum(r.input_tokens for r in rows),
        output_tokens=sum(r.output_tokens for r in rows),
        cost_usd=sum(r.cost_usd or 0.0 for r in rows),
        cost_max_usd=sum(r.cost_max_usd or 0.0 for r in rows),
        unpriced=tuple(unpriced),
        knowledge_cutoffs=cutoffs,
        warnings=_warnings(dataset, sorted(events), cutoffs, unpriced),
        assumptions=plan.estimate,
    )


def _warnings(
    dataset: Dataset, events: list[str], cutoffs: dict[str, date | None], unpriced: list[str]
) -> tuple[str, ...]:
    out: list[str] = []
    for model, cutoff in cutoffs.items():
        if cutoff is None:
            out.append(
                f"{model}: knowledge cutoff unknown (set `knowledge_cutoff` for the model in the "
                "plan, or register one): events it may remember cannot be left out"
            )
            continue
        early = [
            e
            for e in events
            if (r := dataset.resolutions.get(e)) is not None and remembered(r.resolved_at, cutoff)
        ]
        if early:
            out.append(
                f"{model}: {len(early)} of {len(events)} events resolved by its knowledge cutoff "
                f"{cutoff.isoformat()} (e.g. {early[0]}): it may remember the outcome; "
                "`pastcast score --after-knowledge-cutoff` leaves them out"
            )
    out.extend(f"{m}: no price in the price table: its cost is not counted" for m in unpriced)
    return tuple(out)
