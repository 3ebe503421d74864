"""Question templates: each fills invented names into a title, a description and criteria.

The templates are data (``phrases.toml``). A template also yields the phrases the news generator
needs, so articles use the very words of the event title: for a binary event an ``actor`` and an
infinitive ``action`` ("Will <actor> <action> by <date>?") plus a ``noun`` phrase for the same
thing; for a multi-option event the contest ``noun`` and ``action`` ("win <noun>") that every
option is competing for."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date

from pastcast.records import BINARY_LABELS, EventKind
from pastcast.world._names import NameGen
from pastcast.world._phrases import BINARY_TEMPLATES, MULTI_TEMPLATES


@dataclass(frozen=True)
class EventSpec:
    kind: EventKind
    category: str
    tags: tuple[str, ...]
    title: str
    description: str
    criteria: str
    labels: tuple[str, ...]
    actor: str
    """Binary: who or what the question is about. Multi: empty (each option is an actor)."""
    action: str
    noun: str
    entities: tuple[str, ...]
    """Proper names of the event, reused by look-alike distractor articles."""


def _fill(names: NameGen, texts: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``texts`` with one invented name per distinct slot, and those names (bodies aside)."""
    values: dict[str, str] = {}
    filled = tuple(names.fill(t, values) for t in texts)
    entities = tuple(v for k, v in sorted(values.items()) if not k.startswith("B"))
    return filled, entities


def make_spec(
    kind: EventKind, category: str, n_options: int, close_day: date, names: NameGen,
    rng: random.Random,
) -> EventSpec:  # fmt: skip
    """An event of ``kind`` in ``category`` (falling back to any category without templates)."""
    deadline = f"{close_day:%B} {close_day.day}, {close_day.year}"
    if kind == "binary":
        t = rng.choice(
            [t for t in BINARY_TEMPLATES if t["category"] == category] or BINARY_TEMPLATES
        )
        texts = (t["actor"], t["action"], t["noun"], t["context"])
        (actor, action, noun, context), entities = _fill(names, texts)
        return EventSpec(
            kind="binary",
            category=t["category"],
            tags=tuple(t["tags"]),
            title=f"Will {actor} {action} by {deadline}?",
            description=f"{context} This question asks whether {actor} will {action} "
            f"on or before {deadline}.",
            criteria=f"Resolves Yes if {actor} is confirmed to {action} on or before "
            f"{deadline} (23:59 UTC), as reported by at least two major outlets. "
            "Otherwise resolves No.",
            labels=BINARY_LABELS,
            actor=actor,
            action=action,
            noun=noun,
            entities=entities,
        )
    t = rng.choice([t for t in MULTI_TEMPLATES if t["category"] == category] or MULTI_TEMPLATES)
    option_kind = t["option"]
    texts = (t["title"], t["action"], t["noun"], t["context"])
    (title, action, noun, context), entities = _fill(names, texts)
    labels = tuple(names.name(option_kind) for _ in range(n_options))
    listed = ", ".join(labels)
    return EventSpec(
        kind="multi",
        category=t["category"],
        tags=(*t["tags"], option_kind),
        title=title,
        description=f"{context} Options: {listed}. The outcome is expected by {deadline}.",
        criteria=f"Resolves to the listed option that is officially confirmed to {action} "
        f"on or before {deadline} (23:59 UTC). Exactly one option resolves; options: {listed}.",
        labels=labels,
        actor="",
        action=action,
        noun=noun,
        entities=entities,
    )
