"""Question templates: each fills invented names into a title, a description and criteria.

A template also yields the phrases the news generator needs, so articles use the very words of
the event title: for a binary event an ``actor`` and an infinitive ``action`` ("Will <actor>
<action> by <date>?") plus a ``noun`` phrase for the same thing; for a multi-option event the
contest ``noun`` and ``action`` ("win <noun>") that every option is competing for.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date

from pastcast.records import BINARY_LABELS, EventKind
from pastcast.world._names import NameGen

__all__ = ["EventSpec", "make_spec"]


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


# (category, tags, actor, action, noun, context sentence)
_BINARY: tuple[tuple[str, tuple[str, ...], str, str, str, str], ...] = (
    ("politics", ("elections", "local"), "{P}", "be elected mayor of {C}",
     "{P}'s bid to become mayor of {C}",
     "{P}, a former city councillor, is running for mayor of {C} on a housing platform."),
    ("politics", ("legislation",), "the {N} parliament", "pass the {W} Reform Act",
     "the {W} Reform Act",
     "The {W} Reform Act would restructure pension funding in {N}."),
    ("politics", ("leadership",), "{P}", "resign as prime minister of {N}",
     "the resignation of {N} prime minister {P}",
     "{P} has led the {N} government through a difficult coalition period."),
    ("economics", ("central banks", "rates"), "the {N} central bank",
     "cut its benchmark interest rate", "an interest rate cut by the {N} central bank",
     "The {N} central bank has held its benchmark rate steady for three meetings."),
    ("economics", ("mergers",), "{K}", "complete its acquisition of {K2}",
     "the {K} acquisition of {K2}",
     "{K} agreed to buy {K2} last year, pending regulatory review."),
    ("economics", ("inflation",), "annual inflation in {N}", "fall below 3 percent",
     "a drop in {N} inflation below 3 percent",
     "Consumer prices in {N} have risen faster than the official target for two years."),
    ("economics", ("earnings",), "{K}", "report a quarterly profit", "a return to profit at {K}",
     "{K} has reported losses for six consecutive quarters."),
    ("sports", ("football",), "the {T}", "lift the {W} Cup", "the {T} title run in the {W} Cup",
     "The {T} reached the final stages of the {W} Cup once before, a decade ago."),
    ("sports", ("athletics",), "{P}", "set a new course record at the {C} Marathon",
     "a course record by {P} at the {C} Marathon",
     "{P} finished second at the {C} Marathon last season."),
    ("sports", ("transfers",), "{P}", "sign a contract extension with the {T}",
     "a contract extension between {P} and the {T}",
     "{P} enters the final year of a contract with the {T}."),
    ("technology", ("hardware", "launches"), "{K}", "release the {X} headset",
     "the {X} headset launch by {K}",
     "{K} first showed the {X} headset as a prototype at a developer event."),
    ("technology", ("apps",), "the {K} {X} app", "reach 10 million users",
     "10 million users for the {K} {X} app",
     "The {K} {X} app grew quickly after a viral marketing campaign."),
    ("technology", ("autonomy", "regulation"), "{K}",
     "secure approval for its {X} self-driving service in {C}",
     "approval of the {K} {X} self-driving service in {C}",
     "{K} has tested the {X} self-driving service in {C} with safety drivers."),
    ("geopolitics", ("trade",), "{N} and {N2}", "sign a free trade agreement",
     "the {N}-{N2} free trade agreement",
     "Negotiators from {N} and {N2} have met for several rounds of talks."),
    ("geopolitics", ("alliances",), "{N}", "join the {W} Alliance",
     "{N}'s membership of the {W} Alliance",
     "{N} applied to join the {W} Alliance after a change of government."),
    ("geopolitics", ("conflict",), "{N} and {N2}", "agree a ceasefire in their border dispute",
     "a ceasefire between {N} and {N2}",
     "Skirmishes along the border between {N} and {N2} began early in the year."),
    ("science", ("space",), "the {W} probe", "land on {B}", "the {W} probe landing on {B}",
     "The {W} probe was launched two years ago by a consortium of space agencies."),
    ("science", ("medicine", "trials"), "the {K} trial of {W}mab", "meet its primary endpoint",
     "success for the {K} trial of {W}mab",
     "{W}mab is an experimental antibody therapy developed by {K}."),
    ("science", ("astronomy",), "the {W} Observatory", "begin full science operations",
     "full science operations at the {W} Observatory",
     "Construction of the {W} Observatory in {N} ran several years behind schedule."),
)  # fmt: skip

# (category, tags, option kind, title, action, noun, context sentence)
_MULTI: tuple[tuple[str, tuple[str, ...], str, str, str, str, str], ...] = (
    ("politics", ("elections",), "person", "Who will win the {N} presidential election?",
     "win the {N} presidential election", "the {N} presidential election",
     "The {N} presidential election follows a turbulent term marked by strikes."),
    ("politics", ("parties",), "person", "Who will win the {W} Party leadership contest?",
     "win the {W} Party leadership contest", "the {W} Party leadership contest",
     "The {W} Party of {N} is choosing a new leader after a heavy defeat."),
    ("sports", ("football",), "team", "Which team will win the {W} League title?",
     "win the {W} League title", "the {W} League title race",
     "The {W} League season has been unusually close at the top of the table."),
    ("sports", ("tennis",), "person", "Who will win the {C} Open?",
     "win the {C} Open", "the {C} Open tournament",
     "The {C} Open attracts most of the top-ranked players every season."),
    ("economics", ("infrastructure", "contracts"), "company",
     "Which company will win the {W} rail line contract?",
     "win the {W} rail line contract", "the race for the {W} rail line contract",
     "The {W} rail line would connect the capital of {N} with its second city."),
    ("technology", ("smartphones", "markets"), "company",
     "Which company will top the {N} smartphone sales ranking?",
     "top the {N} smartphone sales ranking",
     "the race to top the {N} smartphone sales ranking",
     "Smartphone sales in {N} have recovered after two weak years."),
    ("geopolitics", ("diplomacy",), "city", "Which city will host the {W} Summit?",
     "host the {W} Summit", "the race to host the {W} Summit",
     "The {W} Summit brings together heads of government every two years."),
    ("science", ("prizes",), "company", "Which laboratory will win the {W} Prize?",
     "win the {W} Prize", "the race for the {W} Prize",
     "The {W} Prize rewards an outstanding contribution to materials science."),
)  # fmt: skip


def _fill(names: NameGen, texts: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``texts`` with one invented name per distinct slot, and those names (bodies aside)."""
    values: dict[str, str] = {}
    filled = tuple(names.fill(t, values) for t in texts)
    entities = tuple(v for k, v in sorted(values.items()) if not k.startswith("B"))
    return filled, entities


def _when(day: date) -> str:
    return f"{day:%B} {day.day}, {day.year}"


def make_spec(
    kind: EventKind, category: str, n_options: int, close_day: date, names: NameGen,
    rng: random.Random,
) -> EventSpec:  # fmt: skip
    """An event of ``kind`` in ``category`` (falling back to any category without templates)."""
    deadline = _when(close_day)
    if kind == "binary":
        pool = [t for t in _BINARY if t[0] == category] or list(_BINARY)
        cat, tags, *texts = rng.choice(pool)
        (actor, action, noun, context), entities = _fill(names, tuple(texts))
        return EventSpec(
            kind="binary",
            category=cat,
            tags=tags,
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
    mpool = [t for t in _MULTI if t[0] == category] or list(_MULTI)
    cat, tags, option_kind, *mtexts = rng.choice(mpool)
    (title, action, noun, context), entities = _fill(names, tuple(mtexts))
    make_option = {
        "person": names.person,
        "team": names.team,
        "company": names.company,
        "city": names.city,
    }[option_kind]
    labels = tuple(make_option() for _ in range(n_options))
    listed = ", ".join(labels)
    return EventSpec(
        kind="multi",
        category=cat,
        tags=(*tags, option_kind),
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
