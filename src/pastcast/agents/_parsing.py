"""Turning a model's final text into a ``Forecast``.

The answer is the last complete answer block (``<answer>...</answer>``, a fenced ```json block,
or a bare balanced ``{...}``), loaded strictly and then with lenient repairs. Labels are matched
exactly by default (Forecast-Dojo's main scoring); ``normalize_typography`` is the sensitivity
variant (case, curly quotes, whitespace). Unusable outputs never raise: they become a
``Forecast(usable=False, failure_reason=...)`` whose reason is a ``pastcast.records.FailureReason``.

A forecast's ``raw_text`` keeps every reply an answer was read from (retries after markers), so
``reparse_forecast`` can read the same outputs again under the other label matching without
re-running anything.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pastcast.agents._jsonish import find_blocks, load_object, repeated_keys, strip_thinking
from pastcast.probabilities import completed, scaled
from pastcast.records import FailureReason, Forecast, answer_attempts

__all__ = [
    "count_failures",
    "normalize_label",
    "parse_forecast",
    "prob_key",
    "repair_prompt",
    "reparse_forecast",
]


_PROB_KEYS = ("probabilities", "probs", "forecast", "distribution")
_TEXT_KEYS = ("rationale", "reasoning", "explanation")
_META_KEYS = frozenset({*_TEXT_KEYS, "confidence", "choice", "answer", "notes", "notebook"})
_QUOTES = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'", "`": "'"})
_PROB_PREFIX = "prob_"


def normalize_label(label: str) -> str:
    """Typographic normal form: NFKC, straight quotes, collapsed whitespace, casefolded."""
    text = unicodedata.normalize("NFKC", label).translate(_QUOTES)
    return re.sub(r"\s+", " ", text).strip().casefold()


def prob_key(label: str) -> str:
    """The key of ``label``'s probability in Hindcast's answer shape: ``"Yes"`` -> ``prob_yes``."""
    return _PROB_PREFIX + re.sub(r"[^0-9a-z]+", "_", label.casefold()).strip("_")


def _fail(raw: str, reason: FailureReason, rationale: str = "") -> Forecast:
    return Forecast(raw_text=raw, usable=False, failure_reason=reason, rationale=rationale)


def _to_number(value: Any) -> tuple[float, bool] | None:
    """A probability candidate and whether it was written as a percentage."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return float(value), False
        except OverflowError:  # an integer beyond any float: not a probability
            return math.inf, False
    if isinstance(value, str):
        s = value.strip()
        pct = s.endswith("%")
        try:
            x = float(s.rstrip("%").strip())
        except ValueError:
            return None
        return (x / 100.0 if pct else x), pct
    return None


def _probability_map(
    obj: Mapping[str, Any],
    label_keys: Mapping[str, str],
    key_of: Callable[[str], str],
    labels: Sequence[str],
) -> tuple[Mapping[str, Any] | None, str]:
    rationale = next((str(obj[k]) for k in _TEXT_KEYS if isinstance(obj.get(k), str)), "")
    for key in _PROB_KEYS:
        if isinstance(obj.get(key), Mapping):
            return obj[key], rationale
    by_prob_key = {prob_key(label): label for label in labels}
    prob_keys = [k for k in obj if k.startswith(_PROB_PREFIX)]
    if prob_keys:  # Hindcast's shape: {"prob_yes": p, "prob_no": q}; an unknown one stays unknown
        return {by_prob_key.get(k, k): obj[k] for k in prob_keys}, rationale
    flat = {k: v for k, v in obj.items() if k not in _META_KEYS or key_of(k) in label_keys}
    return (flat or None), rationale


def parse_forecast(
    text: str, labels: Sequence[str], *, normalize_typography: bool = False
) -> Forecast:
    """Parse ``text`` into a forecast over ``labels`` (normalised to sum to one).

    Accepts ``{"probabilities": {"Label": p, ...}, "rationale": "..."}`` or a flat
    ``{"Label": p}``; probabilities may be numbers, numeric strings or percentages ("65%"), and a
    whole map written on a 0-100 scale (sums to about 100) is read as percentages. An answer
    that names only some labels is completed, never renormalised into certainty: the mass it
    leaves (1 minus its sum) is shared evenly by the labels it does not name, which get 0 only
    when it leaves none (``pastcast.probabilities.completed``); ``{"Yes": 0.3}`` of a binary
    question is P(No) = 0.7. A key given twice is ``duplicate_labels``.
    """
    if not text or not text.strip():
        return _fail(text, "empty_output")
    blocks = find_blocks(strip_thinking(text))
    if not blocks:
        return _fail(text, "no_answer_block")
    obj: dict[str, Any] | None = None
    for block in reversed(blocks):
        obj, _ = load_object(block.text)
        if obj is not None or block.explicit:
            break
    if obj is None:
        return _fail(text, "invalid_json")
    key_of: Callable[[str], str] = normalize_label if normalize_typography else str
    by_key: dict[str, str] = {}
    for label in labels:
        by_key.setdefault(key_of(label), label)
    mapping, rationale = _probability_map(obj, by_key, key_of, labels)
    if not mapping:
        return _fail(text, "no_probabilities", rationale)
    if repeated_keys(mapping) or repeated_keys(obj) - _META_KEYS:  # which value was meant?
        return _fail(text, "duplicate_labels", rationale)
    stated = _stated(obj, by_key, key_of)
    values: dict[str, float] = {}
    any_pct = False
    for key, value in mapping.items():
        matched = by_key.get(key_of(str(key)))
        if matched is None:
            return _fail(text, "unknown_labels", rationale)
        if matched in values:
            return _fail(text, "duplicate_labels", rationale)
        num = _to_number(value)
        if num is None or not math.isfinite(num[0]) or num[0] < 0:
            return _fail(text, "invalid_probability", rationale)
        values[matched] = num[0]
        any_pct = any_pct or num[1]
    complete = len(values) == len(by_key)
    if not any_pct and max(values.values()) > 1.0:
        if complete and 95.0 <= sum(values.values()) <= 105.0:  # all on a 0-100 scale
            values = {k: v / 100.0 for k, v in values.items()}
        else:
            return _fail(text, "invalid_probability", rationale)
    if any(v > 1.0 + 1e-9 for v in values.values()):
        return _fail(text, "invalid_probability", rationale)
    values = {k: min(v, 1.0) for k, v in values.items()}
    probs = scaled(completed(values, list(by_key.values())))
    if probs is None:
        return _fail(text, "no_positive_mass", rationale)
    return Forecast(probs=probs, raw_text=text, usable=True, rationale=rationale, **stated)


def _stated(
    obj: Mapping[str, Any], label_keys: Mapping[str, str], key_of: Callable[[str], str]
) -> dict[str, Any]:
    """The chosen option (when it names an outcome) and the self-reported confidence in [0, 1]
    (a percentage, or a number on a 0-100 scale, is read as such), where the answer gives them."""
    out: dict[str, Any] = {}
    choice = obj.get("choice")
    if isinstance(choice, str) and key_of(choice) in label_keys:
        out["choice"] = label_keys[key_of(choice)]
    num = _to_number(obj.get("confidence"))
    if num is not None and math.isfinite(num[0]):
        value = num[0] / 100.0 if not num[1] and 1.0 < num[0] <= 100.0 else num[0]
        if 0.0 <= value <= 1.0:
            out["confidence"] = value
    return out


def count_failures(forecasts: Iterable[Forecast]) -> Counter[str]:
    """Failure reasons of the unusable forecasts, counted."""
    return Counter(f.failure_reason or "unknown" for f in forecasts if not f.usable)


_REASON_TEXT = {
    "empty_output": "Your reply was empty.",
    "no_answer_block": "Your reply did not contain a JSON answer object.",
    "invalid_json": "Your answer block was not valid JSON.",
    "no_probabilities": "Your answer did not contain any probabilities.",
    "unknown_labels": "Your answer used outcome names that are not among the allowed outcomes.",
    "duplicate_labels": "Your answer gave the same outcome more than once.",
    "invalid_probability": "Every probability must be a number between 0 and 1.",
    "no_positive_mass": "At least one probability must be greater than 0.",
}


def reparse_forecast(
    forecast: Forecast, labels: Sequence[str], *, normalize_typography: bool
) -> Forecast:
    """``forecast`` read again from its raw text under the other label matching.

    A forecast whose first reply did not parse (unusable, or usable only after a retry) is
    re-read reply by reply, in the order the agent read them: the first usable reply wins, as it
    would have in a run with this matching. Forecasts read from their first reply, forecasts
    that ended without an answer (a spent budget, an agent error) and baselines' forecasts are
    returned unchanged.
    """
    attempts = answer_attempts(forecast.raw_text)
    retried = len(attempts) > 1
    if forecast.usable and not retried:
        return forecast
    if not forecast.usable and forecast.failure_reason not in _REASON_TEXT:
        return forecast
    for reply in attempts:
        again = parse_forecast(reply, labels, normalize_typography=normalize_typography)
        if again.usable:
            return again.model_copy(update={"raw_text": forecast.raw_text})
    return forecast


def repair_prompt(reason: str, labels: Sequence[str], template: str | None = None) -> str:
    """A short re-prompt asking for the answer again in the exact expected format (``template``:
    the agent's answer format; pastcast's probabilities object by default)."""
    pairs = ", ".join(f"{json.dumps(label, ensure_ascii=False)}: <probability>" for label in labels)
    example_text = template or (
        f'{{"probabilities": {{{pairs}}}, "rationale": "<one or two sentences>"}}'
    )
    problem = _REASON_TEXT.get(reason, "Your answer could not be read.")
    allowed = ", ".join(json.dumps(label, ensure_ascii=False) for label in labels)
    return (
        f"{problem} Reply again with only one JSON object and nothing else, in this format:\n"
        f"{example_text}\n"
        f"Use exactly these outcome names as keys: {allowed}. "
        "Probabilities are numbers between 0 and 1 and should sum to 1."
    )
