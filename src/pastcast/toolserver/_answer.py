"""The answer an agent behind the tool server submits, read under the parser's rules: labels of
the question only, and a partial answer completed, never renormalised into certainty
(``pastcast.probabilities.completed``)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pastcast.probabilities import completed, is_probability
from pastcast.records import FailureReason, Forecast

__all__ = ["checked_answer"]


def _unusable(forecast: Forecast, reason: FailureReason, why: str) -> Forecast:
    raw = forecast.raw_text or json.dumps(forecast.probs, ensure_ascii=False)
    return forecast.model_copy(
        update={"usable": False, "failure_reason": reason, "raw_text": f"{raw} ({why})"}
    )


def _stated(values: Mapping[str, Any]) -> dict[str, float] | None:
    """The submitted values as floats, or None for one that is no finite number in [0, 1]."""
    out: dict[str, float] = {}
    for label, value in values.items():
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            return None
        if not is_probability(number):
            return None
        out[label] = number
    return out


def checked_answer(submitted: dict[str, Any], labels: Sequence[str]) -> Forecast:
    """The forecast ``submitted`` (the request's JSON object) over ``labels``: unusable when it
    names another label or, naming only some of them, states a value outside [0, 1]; a partial
    one is completed (the mass it leaves shared by the labels it does not name). Raises
    ``pydantic.ValidationError`` for what is no forecast."""
    forecast = Forecast.model_validate(submitted)
    if not forecast.usable:
        return forecast
    unknown = sorted(set(forecast.probs) - set(labels))
    if unknown:
        return _unusable(
            forecast, "unknown_labels", f"labels not in the question: {', '.join(unknown)}"
        )
    if set(forecast.probs) == set(labels):
        return forecast
    stated = _stated(submitted["probs"])  # as sent: the record scales values above 1
    if stated is None:
        shown = ", ".join(f"{k}={v!r}" for k, v in submitted["probs"].items())
        why = f"a partial answer states probabilities in [0, 1]: {shown}"
        return _unusable(forecast.model_copy(update={"probs": {}}), "invalid_probability", why)
    probs = completed(stated, labels)
    if not math.fsum(probs.values()) > 0.0:
        return _unusable(forecast, "no_positive_mass", "no positive probability")
    return forecast.model_copy(update={"probs": probs})
