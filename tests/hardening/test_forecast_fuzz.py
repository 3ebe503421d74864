"""Model answers and submitted forecasts at their worst: partial, negative, above 1, NaN and
infinities as numbers and as strings, huge exponents, keys given twice, labels that differ only
by case, whitespace or Unicode form. Whatever comes in, what comes out is a forecast over the
question's labels whose probabilities are finite, in [0, 1] and sum to one, or an unusable one
with its reason; it never raises, and it is never a certainty the answer did not state."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from pastcast.agents import parse_forecast
from pastcast.records import FAILURE_REASONS, Forecast
from pastcast.scoring import normalize

YN = ("Yes", "No")
ABC = ("Alice", "Bob", "Carol")


def _holds_the_invariant(fc: Forecast, labels: tuple[str, ...]) -> None:
    assert all(math.isfinite(p) and 0.0 <= p <= 1.0 for p in fc.probs.values()), fc.probs
    if fc.usable:
        assert list(fc.probs) == list(labels)
        assert math.isclose(math.fsum(fc.probs.values()), 1.0, rel_tol=1e-9)
    else:
        assert fc.failure_reason in FAILURE_REASONS
    json.loads(fc.model_dump_json(), parse_constant=_no_constants)  # no NaN reaches a log


def _no_constants(name: str) -> None:
    raise AssertionError(f"{name} in a forecast's JSON")


# (answer text, labels, the reason it is unusable, or P(first label) when usable)
CASES: dict[str, tuple[str, tuple[str, ...], str | float]] = {
    "partial binary yes": ('{"Yes": 0.3}', YN, 0.3),
    "partial binary no": ('{"No": 0.3}', YN, 0.7),
    "partial hindcast key": ('{"prob_yes": 0.8}', YN, 0.8),
    "partial hindcast no key": ('{"prob_no": 0.8}', YN, 0.2),
    "partial zero": ('{"Yes": 0}', YN, 0.0),
    "partial percent string": ('{"No": "25%"}', YN, 0.75),
    "partial nested": ('{"probabilities": {"Yes": 0.6}, "rationale": "r"}', YN, 0.6),
    "partial multi": ('{"Alice": 0.5}', ABC, 0.5),
    "partial multi full mass": ('{"Alice": 0.5, "Bob": 0.5}', ABC, 0.5),
    "partial on a 0-100 scale": ('{"Yes": 97}', YN, "invalid_probability"),
    "partial above 1": ('{"Alice": 1.5}', ABC, "invalid_probability"),
    "negative": ('{"Yes": -0.2, "No": 1.2}', YN, "invalid_probability"),
    "negative zero": ('{"Yes": -0.0, "No": 1.0}', YN, 0.0),
    "negative percent": ('{"Yes": "-30%", "No": "130%"}', YN, "invalid_probability"),
    "above 1 not a percent map": ('{"Yes": 3, "No": 5}', YN, "invalid_probability"),
    "percent map": ('{"Yes": 55, "No": 45}', YN, 0.55),
    "NaN number": ('{"Yes": NaN, "No": 0.5}', YN, "invalid_probability"),
    "NaN string": ('{"Yes": "NaN", "No": 0.5}', YN, "invalid_probability"),
    "nan lower-case string": ('{"Yes": "nan", "No": 0.5}', YN, "invalid_probability"),
    "Infinity number": ('{"Yes": Infinity, "No": 0.5}', YN, "invalid_probability"),
    "Infinity string": ('{"Yes": "Infinity", "No": 0.5}', YN, "invalid_probability"),
    "minus Infinity": ('{"Yes": -Infinity, "No": 0.5}', YN, "invalid_probability"),
    "inf string": ('{"Yes": "inf", "No": "0.5"}', YN, "invalid_probability"),
    "huge exponent": ('{"Yes": 1e308, "No": 1e308}', YN, "invalid_probability"),
    "exponent beyond a float": ('{"Yes": 1e999, "No": 0.5}', YN, "invalid_probability"),
    "tiny exponent": ('{"Yes": 1e-320, "No": 1e-320}', YN, 0.5),
    "tiny against nothing": ('{"Yes": 5e-324, "No": 0}', YN, 1.0),
    "all zero": ('{"Yes": 0, "No": 0}', YN, "no_positive_mass"),
    "duplicated key": ('{"Yes": 0.3, "Yes": 0.9, "No": 0.1}', YN, "duplicate_labels"),
    "duplicated nested key": (
        '{"probs": {"No": 0.5, "No": 0.2, "Yes": 0.5}}',
        YN,
        "duplicate_labels",
    ),
    "duplicated map": (
        '{"probabilities": {"Yes": 0.2}, "probabilities": {"Yes": 0.9}}',
        YN,
        "duplicate_labels",
    ),
    "lower-case label": ('{"yes": 0.7, "no": 0.3}', YN, "unknown_labels"),
    "padded label": ('{" Yes ": 0.7, "No": 0.3}', YN, "unknown_labels"),
    "full-width label": ('{"Ｙｅｓ": 0.7, "No": 0.3}', YN, "unknown_labels"),
    "decomposed accent": ('{"Zoe\u0301": 0.7, "Other": 0.3}', ("Zoé", "Other"), "unknown_labels"),
    "unknown label": ('{"Yes": 0.7, "Maybe": 0.3}', YN, "unknown_labels"),
    "boolean value": ('{"Yes": true, "No": false}', YN, "invalid_probability"),
    "null value": ('{"Yes": null, "No": 0.5}', YN, "invalid_probability"),
    "list value": ('{"Yes": [0.5], "No": 0.5}', YN, "invalid_probability"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_an_adversarial_answer_is_read_or_refused_by_the_rules(name: str) -> None:
    text, labels, expected = CASES[name]
    fc = parse_forecast(text, labels)
    _holds_the_invariant(fc, labels)
    if isinstance(expected, str):
        assert not fc.usable and fc.failure_reason == expected, (name, fc)
    else:
        assert fc.usable, (name, fc.failure_reason)
        assert fc.probs[labels[0]] == pytest.approx(expected), name


# Labels that differ from the question's only typographically are matched under the sensitivity
# variant (normalize_typography), and two that meet there are duplicates.
TYPOGRAPHY: dict[str, tuple[str, tuple[str, ...], str | float]] = {
    "case": ('{"yes": 0.7, "NO": 0.3}', YN, 0.7),
    "whitespace": ('{"  Yes\\t": 0.7, "No": 0.3}', YN, 0.7),
    "full width": ('{"Ｙｅｓ": 0.7, "No": 0.3}', YN, 0.7),
    "curly quote": ('{"Trump’s party": 0.7, "Other": 0.3}', ("Trump's party", "Other"), 0.7),
    "two spellings of one label": ('{"Yes": 0.5, "YES": 0.5}', YN, "duplicate_labels"),
    "partial after matching": ('{"yes": 0.9}', YN, 0.9),
}


@pytest.mark.parametrize("name", list(TYPOGRAPHY))
def test_typographic_label_matching(name: str) -> None:
    text, labels, expected = TYPOGRAPHY[name]
    fc = parse_forecast(text, labels, normalize_typography=True)
    _holds_the_invariant(fc, labels)
    if isinstance(expected, str):
        assert fc.failure_reason == expected, name
    else:
        assert fc.usable and fc.probs[labels[0]] == pytest.approx(expected), name


VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**400), max_value=10**400),
    st.sampled_from(["NaN", "nan", "Infinity", "-inf", "1e999", "-0", "0.5", "50%", "", "x"]),
    st.booleans(),
    st.none(),
)


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["Yes", "No", "yes", " No", "Maybe"]), VALUES, max_size=3),
    st.booleans(),
)
def test_any_answer_map_gives_a_forecast_holding_the_invariant(
    values: dict[str, Any], nested: bool
) -> None:
    body = {"probabilities": values} if nested else values
    text = json.dumps(body, allow_nan=True, default=str)
    for typography in (False, True):
        _holds_the_invariant(parse_forecast(text, YN, normalize_typography=typography), YN)


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["Yes", "No", "A"]), VALUES, max_size=3),
    st.booleans(),
)
def test_any_submitted_forecast_is_refused_or_holds_the_invariant(
    probs: dict[str, Any], usable: bool
) -> None:
    try:
        fc = Forecast.model_validate({"probs": probs, "usable": usable})
    except ValidationError:
        return  # not numbers at all: refused, with the field named
    assert all(math.isfinite(p) and 0.0 <= p <= 1.0 for p in fc.probs.values())
    if fc.usable:
        assert any(p > 0 for p in fc.probs.values())
        assert normalize(fc.probs) is not None
    json.loads(fc.model_dump_json(), parse_constant=_no_constants)
