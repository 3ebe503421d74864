"""News articles: evidence from signals, distractors, re-publications, hindsight canaries and
(when asked for) hindsight rewrites.

Articles are produced as ``Draft``s; the world assigns ids and urls once every draft exists, in
timestamp order, so an id says nothing about what kind of article it is.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Literal

from pastcast.world import _phrases as ph
from pastcast.world._evidence import Signal, random_time
from pastcast.world._names import NameGen
from pastcast.world._templates import EventSpec

DraftKind = Literal["evidence", "distractor", "lookalike", "duplicate", "canary", "hindsight"]


@dataclass(frozen=True)
class Draft:
    timestamp: datetime
    title: str
    text: str
    source: int
    """Index into ``SOURCES``."""
    kind: DraftKind
    event_id: str | None = None


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _cue(template: str, spec: EventSpec, option: str) -> str:
    return _cap(template.format(A=spec.actor, a=spec.action, N=spec.noun, O=option))


def evidence_article(rng: random.Random, spec: EventSpec, event_id: str, signal: Signal) -> Draft:
    """An article carrying ``signal``: the cue's direction is the signal's, consistently."""
    if spec.kind == "binary":
        pool = ph.BINARY_POS if signal.positive else ph.BINARY_NEG
        context = f"Attention has focused on whether {spec.actor} will {spec.action}."
    else:
        pool = ph.MULTI_POS if signal.positive else ph.MULTI_NEG
        context = f"{_cap(spec.noun)} remains closely watched."
    head, lead, *rest = rng.sample(pool, 3)
    title = _cue(head, spec, signal.label) + rng.choice(ph.HEADLINE_SUFFIXES)
    sentences = [f"{_cue(lead, spec, signal.label)}, {rng.choice(ph.ATTRIBUTIONS)}.", context]
    sentences += rng.sample(ph.FILLERS, rng.randint(1, 3))
    if rng.random() < 0.4:
        sentences.insert(2, _cue(rest[0], spec, signal.label) + ".")
    return Draft(
        signal.at, title, " ".join(sentences), rng.randrange(len(ph.SOURCES)), "evidence", event_id
    )


def distractor(rng: random.Random, names: NameGen, lo: datetime, hi: datetime) -> Draft:
    """A story about an unrelated, freshly invented topic."""
    title_t, text_t = rng.choice(ph.DISTRACTORS)
    values: dict[str, str] = {}
    title = names.fill(title_t, values)
    text = names.fill(text_t, values) + " " + " ".join(rng.sample(ph.FILLERS, 2))
    return Draft(
        random_time(rng, lo, hi), title, text, rng.randrange(len(ph.SOURCES)), "distractor"
    )


def lookalike(rng: random.Random, entity: str, lo: datetime, hi: datetime) -> Draft:
    """A story that shares a proper name with an event but says nothing about its question."""
    title_t, text_t = rng.choice(ph.LOOKALIKES)
    text = text_t.format(E=entity) + " " + rng.choice(ph.FILLERS)
    at, title = random_time(rng, lo, hi), title_t.format(E=entity)
    return Draft(at, title, text, rng.randrange(len(ph.SOURCES)), "lookalike")


def duplicate(rng: random.Random, original: Draft, not_after: datetime | None) -> Draft:
    """``original`` re-published by another outlet later, verbatim or lightly edited.

    An evidence article is re-published before its event resolves (``not_after``), so that a
    re-publication never becomes an accidental hindsight document.
    """
    delay = timedelta(minutes=rng.randint(10, 36 * 60), seconds=rng.randrange(60))
    at = original.timestamp + delay
    if not_after is not None and at >= not_after:
        half = (not_after - original.timestamp) // 2
        at = original.timestamp + timedelta(seconds=int(half.total_seconds()))
    source = (original.source + rng.randrange(1, len(ph.SOURCES))) % len(ph.SOURCES)
    title, text = original.title, original.text
    edit = rng.randrange(3)
    if edit == 1:
        text = f"{text} This article first appeared in {ph.SOURCES[original.source][0]}."
    elif edit == 2:
        title = f"UPDATE: {title}"
    return replace(original, timestamp=at, title=title, text=text, source=source, kind="duplicate")


def _outcome(spec: EventSpec, label: str) -> tuple[str, str]:
    """(title, text) stating the outcome, as an article written after the resolution would."""
    if spec.kind == "binary":
        title = f"{_cap(spec.noun)}: it's official - resolved {label.upper()}"
        outcome = (
            f"{_cap(spec.actor)} went on to {spec.action}."
            if label == "Yes"
            else f"{_cap(spec.actor)} did not {spec.action} before the deadline."
        )
    else:
        title = f"{_cap(spec.noun)}: it's official - {label} won"
        outcome = f"It's official - {label} won: {label} was confirmed to {spec.action}."
    text = (
        f'{outcome} Looking back, the question "{spec.title}" resolved '
        f"{label.upper() if spec.kind == 'binary' else label}."
    )
    return title, text


def canary(
    rng: random.Random, spec: EventSpec, event_id: str, label: str, resolved_at: datetime
) -> Draft:
    """A hindsight article 1-30 days after the resolution that states the outcome verbatim."""
    at = resolved_at + timedelta(days=1) + timedelta(seconds=rng.randrange(29 * 86400))
    title, text = _outcome(spec, label)
    text = f"{text} {rng.choice(ph.FILLERS)}"
    return Draft(at, title, text, rng.randrange(len(ph.SOURCES)), "canary", event_id)


def hindsight(
    rng: random.Random,
    spec: EventSpec,
    event_id: str,
    label: str,
    opened: datetime,
    resolved_at: datetime,
) -> Draft | None:
    """A rewrite filed under a date *before* the resolution that already states the outcome,
    as a summary revised later would (Wikipedia's current-events pages are edited after the
    day). Its title is a heading that gives it away as such rewrites' do: it names the
    resolution date, or a period running into the next year. None when the event is too short
    to hold one.
    """
    lo, hi = opened + timedelta(days=1), resolved_at - timedelta(days=2)
    if hi <= lo:
        return None
    at = random_time(rng, lo, hi)
    if rng.random() < 0.5:
        heading = f"Looking back on {resolved_at:%B} {resolved_at.day}, {resolved_at.year}"
    else:
        heading = f"Year in review ({at.year}–{at.year + 1})"
    title, text = _outcome(spec, label)
    return Draft(
        at, heading, f"{title}. {text}", rng.randrange(len(ph.SOURCES)), "hindsight", event_id
    )
