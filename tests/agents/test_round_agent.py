"""Foresight Arena's round-level benchmark agent: one conversation over a round's markets,
with getMarketDetails, getPriceHistory, the corpus search, and submitPredictions; what it can
reach is what was public before the commit deadline."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pastcast.agents import RoundBenchmarkAgent, agent_info, agent_spec, build_agent, prompts_for
from pastcast.agents._round_agent import HISTORY_DAYS
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.dataset import Dataset
from pastcast.env import EnvConfig, Episode, ForecastEnv
from pastcast.models import ChatRequest, ChatResponse, ScriptedModel, register_provider
from pastcast.records import RequestedToolCall, Resolution, StepSpec
from pastcast.runlog import read_run_log
from pastcast.runner import ExperimentPlan, estimate_plan, run_benchmark
from pastcast.world import World

DEADLINE = datetime(2024, 5, 5, 16, 0, tzinfo=UTC)

Call = tuple[str, dict[str, Any]]


def markets(dataset: Dataset, deadline: datetime, n: int = 4) -> list[str]:
    """Binary markets open a week before the deadline and resolved after it."""
    return [
        e.id
        for e in dataset.events
        if e.kind == "binary"
        and e.open_time < deadline - timedelta(days=HISTORY_DAYS + 1)
        and dataset.resolutions[e.id].resolved_at > deadline
    ][:n]


def episodes(
    dataset: Dataset,
    index: EmbeddedIndex | None,
    deadline: datetime = DEADLINE,
    *,
    market_access: bool = True,
    n: int = 4,
) -> list[Episode]:
    env = ForecastEnv(dataset, index, EnvConfig(market_access=market_access))
    ids = markets(dataset, deadline, n)
    assert len(ids) == n
    return [env.reset(StepSpec(event_id=i, step_index=0, cutoff=deadline)) for i in ids]


def scripted(
    turns: Sequence[Sequence[Call] | Callable[[ChatRequest], Sequence[Call]]],
) -> ScriptedModel:
    """A model that makes the given tool calls turn by turn (a turn may depend on the request),
    then replies with text only."""

    def respond(request: ChatRequest) -> ChatResponse:
        n = sum(m.role == "assistant" for m in request.messages)
        if n >= len(turns):
            return ChatResponse(content="done")
        turn = turns[n]
        calls = turn(request) if callable(turn) else turn
        return ChatResponse(
            content="",
            tool_calls=tuple(
                RequestedToolCall(id=f"c{n}-{i}", name=name, arguments=args)
                for i, (name, args) in enumerate(calls)
            ),
        )

    return ScriptedModel(responder=respond)


def tool_results(model: ScriptedModel) -> dict[str, str]:
    """Every tool result the model was sent, by call id."""
    return {
        m.tool_call_id: m.content
        for r in model.requests
        for m in r.messages
        if m.role == "tool" and m.tool_call_id is not None
    }


def sent_text(model: ScriptedModel) -> str:
    return "\n".join(m.content for r in model.requests for m in r.messages)


@pytest.fixture()
def round_eps(world: World, world_index: EmbeddedIndex) -> list[Episode]:
    return episodes(world.dataset, world_index)


def test_it_researches_the_round_and_submits_one_probability_per_market(
    world: World, round_eps: list[Episode]
) -> None:
    title = round_eps[1].question.title
    model = scripted(
        [
            [("getMarketDetails", {"index": i}) for i in range(4)],
            [("getPriceHistory", {"index": 2}), ("searchNews", {"query": title})],
            [("submitPredictions", {"probabilities": [0.1, 0.2, 0.3, 0.9]})],
        ]
    )
    forecasts = RoundBenchmarkAgent(model).forecast_round(round_eps)
    assert [f.probs["Yes"] for f in forecasts] == [0.1, 0.2, 0.3, 0.9]
    assert all(f.usable and f.probs["No"] == pytest.approx(1 - f.probs["Yes"]) for f in forecasts)
    assert len(model.requests) == 3  # the submission ends the conversation
    results = tool_results(model)
    details = json.loads(results["c0-1"])
    q = round_eps[1].question
    assert details["question"] == q.title and details["category"] == q.category
    last = world.dataset.market_at(q.event_id, DEADLINE)
    assert last is not None and details["yes_price"] == round(last.probs["Yes"], 4)
    assert details["yes_price_day"] == last.day.isoformat()
    # the conversation is the first market's record; the price look-ups each market's own
    lead = round_eps[0].record("forecast")
    assert len(lead.model_calls) == 3 and [c.name for c in lead.tool_calls] == [
        "market_history",
        "search",
    ]
    assert [c.name for c in round_eps[2].record("forecast").tool_calls] == [
        "market_history",
        "market_history",
    ]
    # the prompt lists every market by index, and the tools
    first = model.requests[0]
    assert all(
        f"{i}. {e.question.title}" in first.messages[1].content for i, e in enumerate(round_eps)
    )
    assert {t.name for t in first.tools} == {
        "getMarketDetails",
        "getPriceHistory",
        "searchNews",
        "readDocument",
        "submitPredictions",
    }


@pytest.mark.parametrize("hour", [16, 0])
def test_the_price_history_stops_before_the_deadline(world: World, hour: int) -> None:
    deadline = DEADLINE.replace(hour=hour)
    eps = episodes(world.dataset, None, deadline)
    model = scripted(
        [
            [("getPriceHistory", {"index": i}) for i in range(4)],
            [("submitPredictions", {"probabilities": [0.5] * 4})],
        ]
    )
    RoundBenchmarkAgent(model).forecast_round(eps)
    results = tool_results(model)
    for i, ep in enumerate(eps):
        days = json.loads(results[f"c0-{i}"])
        beliefs = world.dataset.beliefs[ep.question.event_id]
        # every day shown ended by the deadline; the deadline's own day never
        assert days and all(
            datetime.fromisoformat(d["day"]).replace(tzinfo=UTC) + timedelta(days=1) <= deadline
            for d in days
        )
        assert all(d["day"] < deadline.date().isoformat() for d in days)
        # exactly the last HISTORY_DAYS days before it, with their prices
        first = (deadline - timedelta(days=HISTORY_DAYS)).date()
        expected = [
            {"day": b.day.isoformat(), "yes": round(b.probs["Yes"], 4)}
            for b in beliefs
            if first <= b.day and b.day + timedelta(days=1) <= deadline.date()
        ]
        assert days == expected and len(days) <= HISTORY_DAYS
    # a later price is nowhere in what the model was sent
    later = {
        f"{b.probs['Yes']:.4f}".rstrip("0")
        for ep in eps
        for b in world.dataset.beliefs[ep.question.event_id]
        if b.day >= deadline.date()
    }
    text = sent_text(model)
    assert not [p for p in later if len(p) > 4 and f'"yes": {p}' in text]


def test_the_search_never_returns_a_document_from_the_deadline_on(
    world: World, world_index: EmbeddedIndex
) -> None:
    eps = episodes(world.dataset, world_index)
    dated = {d.id: d.timestamp for d in world.documents}
    # an attacker's queries: the titles of documents published at or after the deadline
    after = [d for d in world.documents if d.timestamp >= DEADLINE][:5]
    assert after
    model = scripted(
        [
            [("searchNews", {"query": d.title, "top_k": 20}) for d in after],
            [("readDocument", {"doc_id": after[0].id})],
            [("submitPredictions", {"probabilities": [0.5] * 4})],
        ]
    )
    RoundBenchmarkAgent(model).forecast_round(eps)
    results = tool_results(model)
    shown = [hit for i in range(len(after)) for hit in json.loads(results[f"c0-{i}"])]
    assert shown, "the searches found nothing at all"
    assert all(dated[h["id"]] < DEADLINE for h in shown)
    assert "error" in json.loads(results["c1-0"])  # not shown, and not visible anyway
    # no later document's id in any result but the refused read's own error
    later = {d.id for d in world.documents if d.timestamp >= DEADLINE}
    seen = " ".join(v for k, v in results.items() if k != "c1-0")
    assert not [i for i in later if f'"{i}"' in seen]


def test_the_outcome_reaches_no_prompt_and_no_tool_result(world: World) -> None:
    """The same round with every outcome flipped sends the model the same bytes."""
    ds = world.dataset
    flipped = Dataset(
        ds.id,
        ds.events,
        {
            k: Resolution(
                event_id=k,
                label=("No" if r.label == "Yes" else "Yes")
                if r.label in ("Yes", "No")
                else r.label,
                resolved_at=r.resolved_at,
            )
            for k, r in ds.resolutions.items()
        },
        ds.beliefs,
        ds.steps,
        texts=ds.texts,
    )
    turns: list[list[Call]] = [
        [("getMarketDetails", {"index": i}) for i in range(4)]
        + [("getPriceHistory", {"index": i}) for i in range(4)],
        [("submitPredictions", {"probabilities": [0.5] * 4})],
    ]
    sent = []
    for dataset in (ds, flipped):
        model = scripted(turns)
        RoundBenchmarkAgent(model).forecast_round(episodes(dataset, None))
        sent.append([r.model_dump_json() for r in model.requests])
    assert sent[0] == sent[1]
    # and neither the resolution instant nor a resolution's wording is there
    text = "\n".join(sent[0])
    for ep in episodes(ds, None):
        res = ds.resolutions[ep.question.event_id]
        assert res.resolved_at.strftime("%Y-%m-%d %H:%M") not in text
        assert res.resolved_at.isoformat() not in text
    assert "resolved" not in text.lower().replace("resolution criteria", "")


def test_bad_calls_get_tool_errors_the_model_can_correct(round_eps: list[Episode]) -> None:
    model = scripted(
        [
            [
                ("getMarketDetails", {"index": 4}),
                ("getPriceHistory", {"index": -1}),
                ("getMarketDetails", {"index": "first"}),
                ("getMarketDetails", {}),
                ("placeBet", {"index": 0}),
            ],
            [("submitPredictions", {"probabilities": [0.5, 0.5]})],
            [("submitPredictions", {"probabilities": "0.5, 0.5, 0.5, 0.5"})],
            [("submitPredictions", {"probabilities": [0.5, 1.5, True, 0.5]})],
            [("submitPredictions", {"probabilities": [0.5] * 5})],
            [("submitPredictions", {"probabilities": [0.4, 0.5, 0.6, 0.7]})],
        ]
    )
    forecasts = RoundBenchmarkAgent(model).forecast_round(round_eps)
    assert [f.probs["Yes"] for f in forecasts] == [0.4, 0.5, 0.6, 0.7]
    errors = {k: json.loads(v).get("error", "") for k, v in tool_results(model).items()}
    assert "index 4 is out of range: this round's markets are 0 to 3" in errors["c0-0"]
    assert "out of range" in errors["c0-1"]
    assert "index must be an integer from 0 to 3" in errors["c0-2"]
    assert "index must be an integer" in errors["c0-3"]
    assert "unknown or unavailable tool 'placeBet'" in errors["c0-4"]
    assert "4 probabilities needed, 2 given: markets [2, 3] have none" in errors["c1-0"]
    assert "must be a list of 4 numbers" in errors["c2-0"]
    assert "numbers in [0, 1]; not those at [1, 2]" in errors["c3-0"]
    assert "4 probabilities needed (markets 0 to 3), 5 given" in errors["c4-0"]


def test_a_round_without_a_valid_submission_falls_back_and_says_why(
    round_eps: list[Episode],
) -> None:
    # the model only ever looks: its turn budget runs out, it is asked once more, and fails
    model = scripted([[("getMarketDetails", {"index": 0})]] * 3)
    agent = RoundBenchmarkAgent(model, max_turns=3)
    forecasts = agent.forecast_round(round_eps)
    assert len(forecasts) == 4 and not any(f.usable for f in forecasts)
    assert {f.failure_reason for f in forecasts} == {"no_answer_block"}
    assert "no valid submitPredictions call" in forecasts[0].raw_text
    last = model.requests[-1]
    assert [t.name for t in last.tools] == ["submitPredictions"]
    assert "Call submitPredictions now" in last.messages[-1].content
    # a spent tool budget: the last ask offers only the submission, and a good one counts
    model = scripted(
        [[("getMarketDetails", {"index": i}) for i in range(4)],
         [("submitPredictions", {"probabilities": [0.3] * 4})]]
    )  # fmt: skip
    forecasts = RoundBenchmarkAgent(model, max_tool_calls=4).forecast_round(round_eps)
    assert [f.probs["Yes"] for f in forecasts] == [0.3] * 4
    assert [t.name for t in model.requests[-1].tools] == ["submitPredictions"]


def test_without_market_access_no_price_is_shown(world: World) -> None:
    eps = episodes(world.dataset, None, market_access=False)
    model = scripted(
        [
            [("getMarketDetails", {"index": 0}), ("getPriceHistory", {"index": 0})],
            [("submitPredictions", {"probabilities": [0.5] * 4})],
        ]
    )
    RoundBenchmarkAgent(model).forecast_round(eps)
    results = tool_results(model)
    assert json.loads(results["c0-0"])["yes_price"] is None
    assert "not available in this setting" in json.loads(results["c0-1"])["error"]
    # no corpus: no search tool offered
    assert "searchNews" not in {t.name for t in model.requests[0].tools}


def test_it_is_registered_with_market_access_and_builds_from_its_spec() -> None:
    spec = agent_spec("arena-benchmark", model="scripted", max_turns=5)
    info = agent_info(spec)
    assert info.round_level and info.market_access and info.role == "agent"
    assert info.prompt_ids(spec) == ("round_benchmark.v1",)
    agent = build_agent(spec)
    assert isinstance(agent, RoundBenchmarkAgent) and agent.max_turns == 5
    with pytest.raises(Exception, match="max_turns"):
        agent_spec("arena-benchmark", model="scripted", max_turns=0)


def test_a_single_step_is_a_round_of_one_market(round_eps: list[Episode]) -> None:
    model = scripted([[("submitPredictions", {"probabilities": [0.25]})]])
    forecast = RoundBenchmarkAgent(model).forecast(round_eps[0])
    assert forecast.usable and forecast.probs["Yes"] == 0.25
    assert "0 to 0" in model.requests[0].messages[1].content


def test_the_call_estimate_is_within_a_call_of_a_scripted_run(
    world: World, world_index: EmbeddedIndex, tmp_path: Path
) -> None:
    ds = world.dataset
    binary = {e.id for e in ds.events if e.kind == "binary"}
    dataset = Dataset(
        ds.id,
        tuple(e for e in ds.events if e.id in binary),
        {k: v for k, v in ds.resolutions.items() if k in binary},
        {k: v for k, v in ds.beliefs.items() if k in binary},
        tuple(s for s in ds.steps if s.event_id in binary),
    )
    model = scripted(
        [
            [("getMarketDetails", {"index": 0})],
            lambda r: [("searchNews", {"query": r.messages[1].content.splitlines()[-3][3:]})],
            [("submitPredictions", {"probabilities": [0.5]})],
        ]
    )
    register_provider("round-estimate-test")(lambda rest, **options: model)
    plan = ExperimentPlan.model_validate(
        {
            "agents": [{"name": "arena-benchmark", "args": {"model": "round-estimate-test:x"}}],
            "max_events": 2,
            "estimate": {"tool_turns": 3},
        }
    )
    (row,) = estimate_plan(plan, dataset).rows
    out = tmp_path / "run.jsonl"
    config = plan.run_config()
    run_benchmark(
        dataset, world_index, config, out, prompts=prompts_for(config.agents), progress=False
    )
    log = read_run_log(out)
    assert len(log.steps) == row.episodes > 0
    assert all(r.forecast.usable for r in log.steps), [r.forecast.raw_text for r in log.steps]
    made = sum(r.episode.usage.model_calls for r in log.steps) / len(log.steps)
    assert abs(row.model_calls / row.episodes - made) <= 1
    assert row.model_calls_max >= row.model_calls
