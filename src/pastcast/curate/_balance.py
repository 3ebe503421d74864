"""Balancing: equal YES and NO outcomes first, then topics spread as evenly as that allows,
deterministic by seed.

Within each split, the larger of the YES and NO classes of binary events is cut to the size of
the smaller; the events each class keeps are drawn round-robin over its topics, so no topic is
cut before another one still has more than it. Multi-option events pass through. Topics come
from the events' own category or first tag, or from the judge (``classify_topic``).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pastcast.curate._judge import Judge, question_text, reply_schema
from pastcast.records import Event

TAXONOMY = (
    "politics",
    "geopolitics",
    "economics",
    "finance",
    "business",
    "technology",
    "science",
    "health",
    "climate",
    "sports",
    "entertainment",
    "crypto",
    "other",
)
PROMPT = "curate_topic"


def source_topic(event: Event) -> str | None:
    """The topic the source gave: the category, else the first tag."""
    if event.category.strip():
        return event.category.strip().lower()
    return event.tags[0].strip().lower() if event.tags and event.tags[0].strip() else None


def classify_topic(judge: Judge, event: Event) -> tuple[str | None, str]:
    """The judge's topic for ``event`` from ``TAXONOMY`` (None when unusable) and, then, why."""
    # The question as of its open date: the topic needs no later context.
    fields = {
        "question": question_text(event, event.open_time),
        "taxonomy": "\n".join(f"- {t}" for t in TAXONOMY),
    }
    schema = reply_schema(PROMPT, {"topic": {"type": "string", "enum": list(TAXONOMY)}})

    def parse(data: dict[str, Any]) -> str:
        topic = data.get("topic")
        if topic not in TAXONOMY:
            raise ValueError(f"topic: {topic!r} is not in the taxonomy")
        return str(topic)

    value, judgement = judge.ask("topic", event.id, PROMPT, fields, schema, parse)
    return value, judgement.error or ""


def _spread(ids: Sequence[str], n: int, topics: Mapping[str, str], rng: random.Random) -> list[str]:
    """``n`` of ``ids`` drawn round-robin over their topics."""
    by_topic: dict[str, list[str]] = defaultdict(list)
    for i in sorted(ids):
        by_topic[topics.get(i, "other")].append(i)
    order = sorted(by_topic)
    rng.shuffle(order)
    for t in order:
        rng.shuffle(by_topic[t])
    picked: list[str] = []
    while len(picked) < n:
        for t in order:
            if by_topic[t] and len(picked) < n:
                picked.append(by_topic[t].pop())
    return picked


def balance_outcomes(
    events: Sequence[Event],
    outcomes: Mapping[str, str],
    topics: Mapping[str, str],
    splits: Mapping[str, str],
    seed: int = 0,
) -> dict[str, str]:
    """The binary events cut to equalise YES and NO within each split, with the reason."""
    rng = random.Random(seed)
    groups: dict[str, dict[str, list[str]]] = defaultdict(lambda: {"Yes": [], "No": []})
    for e in events:
        label = outcomes.get(e.id)
        if e.kind == "binary" and label in ("Yes", "No"):
            groups[splits.get(e.id, "")][label].append(e.id)
    removed: dict[str, str] = {}
    for split in sorted(groups):
        yes, no = groups[split]["Yes"], groups[split]["No"]
        n = min(len(yes), len(no))
        where = f" in split {split}" if split else ""
        for label, ids in (("Yes", yes), ("No", no)):
            kept = set(_spread(ids, n, topics, rng))
            reason = f"{label} outcomes cut from {len(ids)} to {n}{where}"
            removed.update((i, reason) for i in ids if i not in kept)
    return removed
