"""Knowledge cutoffs of models: the last day a model's training data may cover.

Not a step's cutoff (``pastcast.cutoff``: what an agent may see), but what a model may already
know: an event that resolved on or before a model's knowledge cutoff may simply be remembered by
the model, so its forecasts say nothing about forecasting. ``knowledge_cutoffs`` is a
``pastcast.registry`` registry (kind ``knowledge_cutoff``): the built-in entries are vendors'
published cutoffs, taken conservatively as the last day of the month they name; users add their
own with ``register_knowledge_cutoff``, a file (``load_knowledge_cutoffs``: TOML or JSON
``{"model": "2024-06-30"}``), a plan's ``knowledge_cutoff`` per model, or an entry point in the
group ``pastcast.knowledge_cutoffs`` that names a function returning a ``date``.

Names are matched like prices: the provider prefix (``openai:``) and an endpoint suffix
(``@http://...``) are dropped, and a dated snapshot (``gpt-4o-mini-2024-07-18``) falls back to
the longest registered prefix.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from pastcast.models._pricing import longest_prefix, spec_model_name
from pastcast.registry import Registry
from pastcast.textfiles import read_text_file

__all__ = [
    "knowledge_cutoff",
    "knowledge_cutoffs",
    "load_knowledge_cutoffs",
    "register_knowledge_cutoff",
    "remembered",
]

knowledge_cutoffs: Registry[date] = Registry("knowledge_cutoff")
"""Model name -> a factory returning its knowledge cutoff (``Entry.meta["knowledge_cutoff"]``)."""


def _constant(day: date) -> Callable[[], date]:
    def knowledge_cutoff() -> date:
        return day

    return knowledge_cutoff


def register_knowledge_cutoff(
    model: str, last_day: date | str, *, source: str = "", replace: bool = False
) -> None:
    """Record that ``model``'s training data may cover every day up to ``last_day``."""
    day = date.fromisoformat(last_day) if isinstance(last_day, str) else last_day
    knowledge_cutoffs.add(
        spec_model_name(model),
        _constant(day),
        description=f"training data through {day.isoformat()}" + (f" ({source})" if source else ""),
        replace=replace,
        knowledge_cutoff=day,
    )


# Published by the vendors (model cards, API documentation), month precision; the last day of
# the month is taken so that no day the model may have seen counts as clean.
_BUILT_IN = {
    "gpt-4o": date(2023, 10, 31),
    "gpt-4o-mini": date(2023, 10, 31),
    "gpt-4-turbo": date(2023, 12, 31),
    "gpt-4.1": date(2024, 6, 30),
    "gpt-4.1-mini": date(2024, 6, 30),
    "gpt-4.1-nano": date(2024, 6, 30),
    "o3": date(2024, 6, 30),
    "o4-mini": date(2024, 6, 30),
    "gpt-5": date(2024, 9, 30),
    "gpt-5-mini": date(2024, 5, 31),
    "claude-3-5-sonnet": date(2024, 4, 30),
    "llama-3.1": date(2023, 12, 31),
}
for _name, _day in _BUILT_IN.items():
    register_knowledge_cutoff(_name, _day, source="published by the vendor")


def knowledge_cutoff(spec: str) -> date | None:
    """The knowledge cutoff of the model named by ``spec``, or None when none is registered."""
    best = longest_prefix(spec_model_name(spec), knowledge_cutoffs.names())
    return knowledge_cutoffs.build(best) if best else None


def remembered(resolved_at: datetime, knowledge_cutoff: date) -> bool:
    """Whether an outcome public at ``resolved_at`` may be in training data through
    ``knowledge_cutoff`` (it resolved before the day after that one began)."""
    after = datetime.combine(knowledge_cutoff + timedelta(days=1), datetime.min.time(), tzinfo=UTC)
    return resolved_at < after


def load_knowledge_cutoffs(path: str | Path, *, replace: bool = True) -> dict[str, date]:
    """Register the cutoffs of a TOML or JSON file ``{"model": "YYYY-MM-DD", ...}``; returns them.
    Errors name the file and the model."""
    p = Path(path)
    try:
        text = read_text_file(p)
        raw = tomllib.loads(text) if p.suffix == ".toml" else json.loads(text)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{p}: cannot read model cutoffs: {exc}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{p}: expected a table of model -> date")
    out: dict[str, date] = {}
    for model, value in raw.items():
        try:
            if isinstance(value, datetime):
                day = value.date()
            else:
                day = value if isinstance(value, date) else date.fromisoformat(str(value))
        except ValueError:
            raise ValueError(f"{p}: {model}: not a date (YYYY-MM-DD): {value!r}") from None
        register_knowledge_cutoff(model, day, source=str(p), replace=replace)
        out[model] = day
    return out
