"""Hindcast's answer object (choice, probabilities, confidence, reasoning), its four-step parse
fallback, and reading logged answers again with typographic label normalization."""

from __future__ import annotations

import json

import pytest

from pastcast.agents import NoToolsAgent, parse_forecast, reparse_forecast
from pastcast.agents._answer import Decoding
from pastcast.env import EnvConfig, Episode, ForecastEnv
from pastcast.models import ScriptedModel
from pastcast.records import Forecast
from pastcast.world import World

YES_NO = ("Yes", "No")
SYSTEM = "You are a forecaster. Predict the probability of the event."  # Hindcast B.1


def test_hindcast_shape_records_choice_and_confidence() -> None:
    text = (
        "Prior 0.4.\n"
        '{"choice": "Yes", "prob_yes": 0.7, "prob_no": 0.3, "confidence": 0.8, '
        '"reasoning": "Prior 0.4; the evidence leans yes."}'
    )
    f = parse_forecast(text, YES_NO)
    assert f.usable and f.probs == pytest.approx({"Yes": 0.7, "No": 0.3})
    assert (f.choice, f.confidence) == ("Yes", 0.8)
    assert f.rationale.startswith("Prior 0.4")


@pytest.mark.parametrize(
    ("fields", "choice", "confidence"),
    [
        ({"choice": "B", "confidence": "85%"}, "B", 0.85),
        ({"choice": "B", "confidence": 85}, "B", 0.85),
        ({"choice": "Z", "confidence": 1.5e3}, None, None),  # not an option, not a confidence
        ({}, None, None),
    ],
)
def test_choice_and_confidence_of_several_options(
    fields: dict[str, object], choice: str | None, confidence: float | None
) -> None:
    obj = {**fields, "probabilities": {"A": 0.2, "B": 0.5, "C": 0.3}, "reasoning": "r"}
    f = parse_forecast(json.dumps(obj), ("A", "B", "C"))
    assert f.usable and (f.choice, f.confidence) == (choice, confidence)


def test_an_unknown_prob_key_is_an_unknown_label() -> None:
    f = parse_forecast('{"prob_maybe": 0.5, "prob_no": 0.5}', YES_NO)
    assert not f.usable and f.failure_reason == "unknown_labels"


def _episode(world: World) -> Episode:
    step = next(s for s in world.dataset.steps if world.dataset.event(s.event_id).kind == "binary")
    return ForecastEnv(world.dataset, None, EnvConfig()).reset(step)


def _zero_shot(outputs: list[str]) -> tuple[NoToolsAgent, ScriptedModel]:
    model = ScriptedModel(outputs)
    retries = {
        "repair": Decoding(max_tokens=1400),
        "compact": Decoding(max_tokens=2400),
        "json_only": Decoding(max_tokens=900),
    }
    agent = NoToolsAgent(
        model,
        prompt="zero_shot.v1",
        fallback="four_step",
        decoding=Decoding(temperature=0.1, max_tokens=4096, top_p=1.0),
        stages=retries,
    )
    return agent, model


GOOD = '{"choice": "No", "prob_yes": 0.25, "prob_no": 0.75, "confidence": 0.6, "reasoning": "ok"}'


def test_the_four_step_fallback_walks_repair_compact_then_json_only(world: World) -> None:
    agent, model = _zero_shot(["I lean yes, " * 40, "still prose", "prose again", GOOD])
    forecast = agent.forecast(_episode(world))
    assert forecast.usable and forecast.choice == "No" and forecast.confidence == 0.6
    first, fix, compact, only = model.requests
    assert (
        first.messages[0].content == "You are a forecaster. Predict the probability of the event."
    )
    assert (first.temperature, first.max_tokens, first.top_p) == (0.1, 4096, 1.0)
    # 2. JSON repair: the model's own reply, to be rewritten as the answer object.
    assert len(fix.messages) == 1 and "I lean yes" in fix.messages[0].content
    assert '"prob_yes": 0.0-1.0' in fix.messages[0].content
    assert fix.response_schema is not None and fix.max_tokens == 1400
    # 3. Compact re-prompt: the short prompt and a brief answer, unconstrained.
    assert compact.messages[:2] == first.messages[:2]
    assert "briefly" in compact.messages[-1].content and compact.response_schema is None
    assert compact.max_tokens == 2400
    # 4. JSON only, under the schema.
    assert only.messages[-1].content.startswith("Reply with only the JSON object")
    assert only.response_schema is not None and only.max_tokens == 900
    assert set(only.response_schema["properties"]) == {
        "choice",
        "prob_yes",
        "prob_no",
        "confidence",
        "reasoning",
    }
    # Every reply is kept, so the answers can be read again.
    assert forecast.raw_text.count("[reply to the") == 3


def test_the_fallback_stops_at_the_first_usable_reply(world: World) -> None:
    agent, model = _zero_shot(["no json here", GOOD])
    assert agent.forecast(_episode(world)).usable
    assert len(model.requests) == 2


def test_an_answer_unusable_after_every_pass_keeps_every_reply(world: World) -> None:
    agent, _ = _zero_shot(["a", "b", "c", "d"])
    forecast = agent.forecast(_episode(world))
    assert not forecast.usable and forecast.failure_reason == "no_answer_block"
    for marker in ("JSON repair request", "compact re-prompt", "JSON-only re-prompt"):
        assert f"[reply to the {marker}]" in forecast.raw_text


def test_labels_are_read_again_with_normalization() -> None:
    labels = ("Le Pen's party", "Other")
    curly = '{"probabilities": {"le pen’s  party": 0.8, "OTHER": 0.2}}'
    exact = parse_forecast(curly, labels)
    assert not exact.usable and exact.failure_reason == "unknown_labels"
    again = reparse_forecast(exact, labels, normalize_typography=True)
    assert again.usable and again.probs == pytest.approx({"Le Pen's party": 0.8, "Other": 0.2})
    assert again.raw_text == curly


def test_a_repaired_answer_is_read_again_from_its_first_reply() -> None:
    # Exact matching rejected the first reply and the repair answered otherwise; with
    # normalization the first reply would have been taken.
    raw = (
        '{"probabilities": {"yes": 0.9, "no": 0.1}}'
        '\n\n[reply to the repair request]\n{"probabilities": {"Yes": 0.5, "No": 0.5}}'
    )
    logged = parse_forecast(raw, YES_NO).model_copy(update={"raw_text": raw})
    assert logged.usable and logged.probs["Yes"] == pytest.approx(0.5)
    again = reparse_forecast(logged, YES_NO, normalize_typography=True)
    assert again.probs["Yes"] == pytest.approx(0.9)


@pytest.mark.parametrize(
    "forecast",
    [
        Forecast(probs={"Yes": 0.5, "No": 0.5}, raw_text="uniform"),  # a baseline
        Forecast(usable=False, failure_reason="budget_exhausted", raw_text="tool budget"),
        Forecast(usable=False, failure_reason="no_market_price"),
    ],
)
def test_forecasts_not_read_from_text_are_kept(forecast: Forecast) -> None:
    assert reparse_forecast(forecast, YES_NO, normalize_typography=True) is forecast
