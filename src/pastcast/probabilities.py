"""The two rules that turn stated probabilities into a distribution, used wherever a forecast is
made or scored (the ``Forecast`` record, the output parser, the tool server, the scores).

``scaled``: finite non-negative values divided by their sum, taken without overflow however large
they are. ``completed``: an answer that names only some of the outcomes, read as saying nothing
more than it states: the mass it leaves is shared evenly by the outcomes it does not name, so
``{"Yes": 0.3}`` of a binary question is P(No) = 0.7 (the complement), never P(Yes) = 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

__all__ = ["completed", "is_probability", "scaled"]

MASS_TOLERANCE = 1e-9
"""Stated mass within this of 1 counts as all of it (rounding in the model's decimals)."""


def is_probability(value: float) -> bool:
    """A finite number in [0, 1]."""
    return math.isfinite(value) and 0.0 <= value <= 1.0


def scaled(values: Mapping[str, float]) -> dict[str, float] | None:
    """``values`` divided by their sum; None when one is negative or not finite, or none is
    positive. Values above 1 are divided by the largest first, so that the sum of finite values
    of any size (two of 1e308) does not overflow; values in [0, 1] are divided by their sum as
    they are."""
    if any(not math.isfinite(v) or v < 0.0 for v in values.values()):
        return None
    top = max(values.values(), default=0.0)
    if not top > 0.0:
        return None
    if top > 1.0:
        values = {k: v / top for k, v in values.items()}
    total = math.fsum(values.values())
    return {k: v / total for k, v in values.items()}


def completed(stated: Mapping[str, float], labels: Sequence[str]) -> dict[str, float]:
    """``stated`` (probabilities in [0, 1] of some of ``labels``) over all ``labels``, in their
    order: an unnamed label gets an equal share of the mass the stated ones leave (1 minus their
    sum), or 0 when they leave none (their sum is 1 or more)."""
    missing = [label for label in labels if label not in stated]
    left = 1.0 - math.fsum(stated.values())
    share = left / len(missing) if missing and left > MASS_TOLERANCE else 0.0
    return {label: stated.get(label, share) for label in labels}
