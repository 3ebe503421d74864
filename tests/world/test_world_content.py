"""Invariants of the simulated content: schedule, beliefs, market quality, news and canaries."""

from __future__ import annotations

import re
from collections import Counter
from datetime import UTC, datetime, time, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pastcast.records import Event, Resolution
from pastcast.world import (
    NEGATIVE_CUES,
    POSITIVE_CUES,
    World,
    WorldConfig,
    build_world,
    default_steps,
)

_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"will", "the", "by", "who", "which", "its", "of", "in", "to", "a", "an", "and", "win"}


def _brier(probs: dict[str, float], truth: str, labels: tuple[str, ...]) -> float:
    return sum((probs.get(lab, 0.0) - (1.0 if lab == truth else 0.0)) ** 2 for lab in labels)


def _check_schedule(w: World) -> None:
    ds = w.dataset
    for e in ds.events:
        res = ds.resolutions[e.id]
        steps = ds.steps_of(e.id)
        # 3 to 5 grid points over the scheduled window; an event that resolved early keeps those
        # before its resolution (at least the first, one day after the opening)
        assert 3 <= len(steps) <= 5 or (steps and res.resolved_at < e.close_time), e.id
        cutoffs = [s.cutoff for s in steps]
        assert cutoffs == sorted(set(cutoffs))
        assert [s.step_index for s in steps] == list(range(len(steps)))
        for c in cutoffs:
            assert c.time() == time(0) and c.tzinfo is not None
            assert c < res.resolved_at
            assert c >= e.open_time + timedelta(days=1)


def _check_beliefs(w: World) -> None:
    ds = w.dataset
    for e in ds.events:
        res = ds.resolutions[e.id]
        for b in ds.beliefs[e.id]:
            assert e.open_time.date() <= b.day < res.resolved_at.date()
            assert set(b.probs) <= set(e.labels)
            assert all(0.0 <= p <= 1.0 for p in b.probs.values())
            assert abs(sum(b.probs.values()) - 1.0) < 1e-9
            assert len(b.probs) >= 2


def _check_canaries(w: World) -> None:
    ds = w.dataset
    by_id = {d.id: d for d in w.documents}
    canary_events = []
    for doc_id in w.canary_ids:
        doc = by_id[doc_id]
        [event] = [e for e in ds.events if f'"{e.title}"' in doc.text]
        res = ds.resolutions[event.id]
        assert res.resolved_at + timedelta(days=1) <= doc.timestamp
        assert doc.timestamp <= res.resolved_at + timedelta(days=30)
        assert f"resolved {res.label}".lower() in doc.text.lower()
        assert res.label.lower() in doc.title.lower()
        canary_events.append(event.id)
    assert len(set(canary_events)) == len(canary_events)


def _check_evidence_before_resolution(w: World) -> None:
    by_id = {d.id: d for d in w.documents}
    for event_id, doc_ids in w.evidence.items():
        res = w.dataset.resolutions[event_id]
        event = w.dataset.event(event_id)
        for doc_id in doc_ids:
            assert doc_id not in w.canary_ids
            assert event.open_time <= by_id[doc_id].timestamp < res.resolved_at


def test_schedule_beliefs_canaries_of_default_world(world: World) -> None:
    _check_schedule(world)
    _check_beliefs(world)
    _check_canaries(world)
    _check_evidence_before_resolution(world)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), multi=st.floats(0.0, 1.0))
def test_invariants_hold_for_any_seed(seed: int, multi: float) -> None:
    w = build_world(seed, WorldConfig(n_events=8, n_documents=300, multi_fraction=multi))
    _check_schedule(w)
    _check_beliefs(w)
    _check_canaries(w)
    _check_evidence_before_resolution(w)


def test_missing_days_and_unpriced_legs(world: World) -> None:
    ds = world.dataset
    possible = sum((ds.resolutions[e.id].resolved_at.date() - e.open_time.date()).days
                   for e in ds.events)  # fmt: skip
    present = sum(len(v) for v in ds.beliefs.values())
    assert 0.01 <= 1 - present / possible <= 0.1
    partial = [
        b for e in ds.events if e.kind == "multi"
        for b in ds.beliefs[e.id] if len(b.probs) < len(e.labels)
    ]  # fmt: skip
    assert partial


def test_market_beats_uniform(world: World) -> None:
    ds = world.dataset
    market: list[float] = []
    uniform: list[float] = []
    first: list[float] = []
    last: list[float] = []
    for e in ds.events:
        truth = ds.resolutions[e.id].label
        flat = {lab: 1 / len(e.labels) for lab in e.labels}
        scores = []
        for s in ds.steps_of(e.id):
            belief = ds.market_at(e.id, s.cutoff)
            scores.append(_brier(dict(belief.probs) if belief else flat, truth, e.labels))
            uniform.append(_brier(flat, truth, e.labels))
        market += scores
        first.append(scores[0])
        last.append(scores[-1])
    mean = sum(market) / len(market)
    assert mean < 0.75 * sum(uniform) / len(uniform)
    assert sum(last) / len(last) < sum(first) / len(first)  # the market learns over time
    assert min(market) > 0.0  # informative, not clairvoyant
    assert abs(world.summary()["market_brier_at_steps"] - mean) < 1e-3


def _terms(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP and not w.isdigit()}


def test_evidence_is_findable_by_title_words(world: World) -> None:
    ds = world.dataset
    docs = [(d.id, _terms(f"{d.title} {d.text}")) for d in world.documents]
    precisions = []
    for e in ds.events:
        title = _terms(e.title) - {"january", "february", "march", "april", "may", "june",
                                   "july", "august", "september", "october", "november",
                                   "december"}  # fmt: skip
        ranked = sorted(docs, key=lambda d: (-len(title & d[1]), d[0]))[:10]
        own = set(world.evidence[e.id])
        precisions.append(sum(doc_id in own for doc_id, _ in ranked) / 10)
    assert sum(precisions) / len(precisions) >= 0.9
    assert min(precisions) >= 0.5


def test_evidence_articles_name_the_subject_and_carry_one_cue_direction(world: World) -> None:
    ds = world.dataset
    by_id = {d.id: d for d in world.documents}
    yes_share: dict[str, list[float]] = {"Yes": [], "No": []}
    for e in ds.events:
        truth = ds.resolutions[e.id].label
        positive = 0
        truth_mentions = Counter[bool]()
        for doc_id in world.evidence[e.id]:
            d = by_id[doc_id]
            body = f"{d.title} {d.text}".lower()
            pos = any(c in body for c in POSITIVE_CUES)
            neg = any(c in body for c in NEGATIVE_CUES)
            assert pos != neg, doc_id  # exactly one direction per article
            positive += pos
            if e.kind == "multi":
                named = [lab for lab in e.labels if lab.lower() in body]
                assert len(named) == 1, doc_id
                truth_mentions[(named[0] == truth) == pos] += 1
        if e.kind == "binary":
            yes_share[truth].append(positive / len(world.evidence[e.id]))
        else:  # most multi articles favour the truth or disfavour a rival
            assert truth_mentions[True] > truth_mentions[False], e.id
    mean = {k: sum(v) / len(v) for k, v in yes_share.items()}
    assert mean["Yes"] > 0.6 > 0.4 > mean["No"]


def test_distractors_carry_no_cues_and_some_share_event_names(world: World) -> None:
    ds = world.dataset
    evidence = {i for ids in world.evidence.values() for i in ids}
    others = [d for d in world.documents if d.id not in evidence and d.id not in world.canary_ids]
    assert 0.25 <= len(others) / len(world.documents) <= 0.4
    entity_words = {w for e in ds.events for w in _terms(e.title)}
    sharing = 0
    for d in others:
        body = f"{d.title} {d.text}".lower()
        assert not any(c in body for c in (*POSITIVE_CUES, *NEGATIVE_CUES)), d.id
        sharing += bool(_terms(d.title) & entity_words)
    assert sharing >= 0.1 * len(others)


def test_cue_pools_avoid_opposite_generic_words() -> None:
    from pastcast.world import _phrases as ph

    for template in (*ph.BINARY_NEG, *ph.MULTI_NEG):
        words = set(_WORD.findall(template.lower()))
        assert not words & {"win", "wins", "ahead", "support", "likely", "leads", "boost"}
    for template in (*ph.BINARY_POS, *ph.MULTI_POS):
        words = set(_WORD.findall(template.lower()))
        assert not words & {"unlikely", "doubts", "behind", "fails", "weak", "blow"}


def _event(open_time: datetime, days: int) -> tuple[Event, Resolution]:
    close = open_time + timedelta(days=days)
    ev = Event(id="e", title="t", kind="binary", labels=("Yes", "No"), open_time=open_time,
               close_time=close)  # fmt: skip
    return ev, Resolution(event_id="e", label="Yes", resolved_at=close)


def test_default_steps_edges() -> None:
    t0 = datetime(2024, 3, 1, 15, 30, tzinfo=UTC)
    ev, res = _event(t0, 10)  # resolves 2024-03-11 15:30
    cut = [s.cutoff.day for s in default_steps(ev, res)]
    assert cut == [3, 7, 11]
    ev, res = _event(datetime(2024, 3, 1, tzinfo=UTC), 10)  # resolves exactly at midnight
    steps = default_steps(ev, res, n_steps=5)
    assert [s.cutoff.day for s in steps] == [2, 4, 6, 8, 10]
    ev, res = _event(t0, 1)  # too short for any step
    assert default_steps(ev, res) == ()
    ev, res = _event(datetime(2024, 1, 1, tzinfo=UTC), 200)
    assert len(default_steps(ev, res)) == 5


def test_planted_hindsight_rewrites() -> None:
    assert build_world(0).hindsight_ids == frozenset()  # none unless asked for
    w = build_world(0, WorldConfig(hindsight_fraction=0.3))
    docs = {d.id: d for d in w.documents}
    assert len(w.hindsight_ids) == 15
    for doc_id in w.hindsight_ids:
        doc = docs[doc_id]
        event = next(e for e in w.dataset.events if e.title in doc.text)
        res = w.dataset.resolutions[event.id]
        # dated before the resolution, so the cutoff alone would let it through ...
        assert doc.timestamp < res.resolved_at - timedelta(days=1)
        # ... yet it states the outcome
        assert f"resolved {res.label.upper() if event.kind == 'binary' else res.label}" in doc.text
    assert not w.hindsight_ids & w.canary_ids
    assert not w.hindsight_ids & {i for ids in w.evidence.values() for i in ids}
