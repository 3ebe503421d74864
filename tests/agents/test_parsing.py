"""Forecast output parsing: answer-block selection, lenient repairs, labels, failure reasons."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pastcast.agents._answer import normalize_label, parse_forecast, repair_prompt
from pastcast.records import FAILURE_REASONS

YN = ("Yes", "No")

label_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=20
).filter(lambda s: s.strip() and s not in {"rationale", "reasoning", "explanation"})
label_sets = st.lists(label_text, min_size=2, max_size=6, unique=True)


@st.composite
def labelled_probs(draw: st.DrawFn) -> tuple[list[str], list[float]]:
    labels = draw(label_sets)
    weights = draw(
        st.lists(
            st.floats(0.0, 1.0, allow_nan=False), min_size=len(labels), max_size=len(labels)
        ).filter(lambda ws: sum(ws) > 1e-6)
    )
    return labels, weights


def _wrap(kind: str, payload: str) -> str:
    if kind == "fence":
        return f"Here is my reasoning.\n```json\n{payload}\n```\n"
    if kind == "tag":
        return f"Thinking done. <answer>{payload}</answer>"
    return f"Final answer: {payload} -- done"


@settings(max_examples=150, deadline=None)
@given(labelled_probs(), st.sampled_from(["fence", "tag", "bare"]), st.booleans())
def test_round_trip_any_labels(lp: tuple[list[str], list[float]], kind: str, nested: bool) -> None:
    labels, weights = lp
    probs = dict(zip(labels, weights, strict=True))
    obj = {"probabilities": probs, "rationale": "r"} if nested else probs
    fc = parse_forecast(_wrap(kind, json.dumps(obj, ensure_ascii=False)), labels)
    assert fc.usable, fc.failure_reason
    total = sum(weights)
    for label, w in probs.items():
        assert math.isclose(fc.probs[label], w / total, rel_tol=1e-9, abs_tol=1e-12)
    assert list(fc.probs) == labels


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), label_sets)
def test_never_raises_and_reports_known_reason(text: str, labels: list[str]) -> None:
    fc = parse_forecast(text, labels)
    if fc.usable:
        assert set(fc.probs) == set(labels)
        assert math.isclose(sum(fc.probs.values()), 1.0, rel_tol=1e-9)
        assert all(0.0 <= p <= 1.0 for p in fc.probs.values())
    else:
        assert fc.failure_reason in FAILURE_REASONS
        assert fc.probs == {}
    assert fc.raw_text == text


@settings(max_examples=100, deadline=None)
@given(st.floats(0.01, 0.99), st.floats(0.01, 0.99))
def test_last_complete_block_wins(first: float, second: float) -> None:
    text = (
        f'Draft: {{"Yes": {first}, "No": {1 - first}}}\n'
        f'Final:\n```json\n{{"Yes": {second}, "No": {1 - second}}}\n```\n'
        'And a truncated one: {"Yes": 0.5, "No"'
    )
    fc = parse_forecast(text, YN)
    assert fc.usable
    assert math.isclose(fc.probs["Yes"], second, rel_tol=1e-9)


@pytest.mark.parametrize(
    ("text", "yes"),
    [
        ('{"Yes": 0.7, "No": 0.3,}', 0.7),  # trailing comma
        ("{'Yes': 0.7, 'No': 0.3}", 0.7),  # single quotes
        ('{"Yes": "70%", "No": "30%"}', 0.7),  # quoted percentages
        ('{"Yes": 70%, "No": 30%}', 0.7),  # bare percentages
        ('{"Yes": "0.7", "No": "0.3"}', 0.7),  # numbers as strings
        ('{"Yes": 70, "No": 30}', 0.7),  # whole map on a 0-100 scale
        ('{"Yes": 0.35, "No": 0.15}', 0.7),  # renormalised
        ('{"probabilities": {"Yes": 0.7}, "rationale": "only one"}', 0.7),  # No gets the rest
        ("{“Yes”: 0.7, “No”: 0.3}", 0.7),  # curly quotes as delimiters
        ('<think>{"Yes": 0.1, "No": 0.9}</think>{"Yes": 0.7, "No": 0.3}', 0.7),
        ('{"probs": {"Yes": 0.7, "No": 0.3}, "confidence": 0.9, "reasoning": "x"}', 0.7),
    ],
)
def test_lenient_repairs(text: str, yes: float) -> None:
    fc = parse_forecast(text, YN)
    assert fc.usable, fc.failure_reason
    assert math.isclose(fc.probs["Yes"], yes, rel_tol=1e-9)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty_output"),
        ("   \n", "empty_output"),
        ("I think yes, about 70 percent.", "no_answer_block"),
        ("```json\nnot json at all\n```", "invalid_json"),
        ("{this is: not, valid json}", "invalid_json"),
        ('{"rationale": "nothing else"}', "no_probabilities"),
        ('{"Maybe": 0.5, "No": 0.5}', "unknown_labels"),
        ('{"Yes": -0.1, "No": 0.5}', "invalid_probability"),
        ('{"Yes": "high", "No": 0.5}', "invalid_probability"),
        ('{"Yes": 3, "No": 0.5}', "invalid_probability"),
        ('{"Yes": NaN, "No": 0.5}', "invalid_probability"),
        ('{"Yes": 0, "No": 0.0}', "no_positive_mass"),
        ('{"Yes": true, "No": 0.5}', "invalid_probability"),
    ],
)
def test_failure_reasons(text: str, reason: str) -> None:
    fc = parse_forecast(text, YN)
    assert not fc.usable
    assert fc.failure_reason == reason


def test_typographic_normalisation_is_opt_in() -> None:
    labels = ["Donald Trump’s party", "Other"]
    text = '{"donald  trump\'s PARTY": 0.6, "other": 0.4}'
    assert parse_forecast(text, labels).failure_reason == "unknown_labels"
    fc = parse_forecast(text, labels, normalize_typography=True)
    assert fc.usable
    assert math.isclose(fc.probs["Donald Trump’s party"], 0.6)


def test_duplicate_after_normalisation() -> None:
    fc = parse_forecast('{"yes": 0.5, "YES": 0.5}', YN, normalize_typography=True)
    assert fc.failure_reason == "duplicate_labels"


@given(label_text)
def test_normalize_label_idempotent(label: str) -> None:
    assert normalize_label(normalize_label(label)) == normalize_label(label)


def test_failure_reasons_and_repair_prompt() -> None:
    outs = [parse_forecast(t, YN) for t in ("", "no json", '{"Yes": 1}', "nope")]
    reasons = [f.failure_reason for f in outs if not f.usable]
    assert reasons == ["empty_output", "no_answer_block", "no_answer_block"]
    prompt = repair_prompt("unknown_labels", ['A "quoted" one', "B"])
    assert '"A \\"quoted\\" one"' in prompt
    assert "not among the allowed outcomes" in prompt


def test_label_named_like_a_meta_key_is_kept() -> None:
    fc = parse_forecast('{"confidence": 0.2, "choice": 0.8}', ["confidence", "choice"])
    assert fc.usable
    assert math.isclose(fc.probs["choice"], 0.8)


ABC = ("A", "B", "C")


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ('{"Yes": 0.3}', YN, {"Yes": 0.3, "No": 0.7}),  # the complement rule
        ('{"No": 0.3}', YN, {"Yes": 0.7, "No": 0.3}),
        ('{"prob_yes": 0.8}', YN, {"Yes": 0.8, "No": 0.2}),
        ('{"Yes": "30%"}', YN, {"Yes": 0.3, "No": 0.7}),
        ('{"Yes": 0}', YN, {"Yes": 0.0, "No": 1.0}),
        ('{"Yes": 1.0}', YN, {"Yes": 1.0, "No": 0.0}),  # certainty only where it is stated
        ('{"A": 0.4}', ABC, {"A": 0.4, "B": 0.3, "C": 0.3}),  # the rest shared evenly
        ('{"A": 0.5, "B": 0.5}', ABC, {"A": 0.5, "B": 0.5, "C": 0.0}),  # nothing left
        ('{"A": 0.6, "B": 0.6}', ABC, {"A": 0.5, "B": 0.5, "C": 0.0}),  # over 1: renormalised
    ],
)
def test_a_partial_answer_is_completed_never_turned_into_certainty(
    text: str, labels: tuple[str, ...], expected: dict[str, float]
) -> None:
    fc = parse_forecast(text, labels)
    assert fc.usable, fc.failure_reason
    assert list(fc.probs) == list(labels)
    assert fc.probs == pytest.approx(expected)


@pytest.mark.parametrize("text", ['{"Yes": 97}', '{"Yes": 60}', '{"A": 30}'])
def test_a_partial_answer_is_not_read_on_a_0_100_scale(text: str) -> None:
    assert parse_forecast(text, (*YN, *ABC)).failure_reason == "invalid_probability"


@pytest.mark.parametrize(
    "text",
    [
        '{"Yes": 0.3, "Yes": 0.9, "No": 0.1}',
        '{"probabilities": {"No": 0.2, "Yes": 0.5, "No": 0.5}}',
        '{"probabilities": {"Yes": 0.5, "No": 0.5}, "probabilities": {"Yes": 0.9, "No": 0.1}}',
    ],
)
def test_a_label_given_twice_is_a_duplicate(text: str) -> None:
    assert parse_forecast(text, YN).failure_reason == "duplicate_labels"
