"""The leakage card's figures are those of their sources: the construction audit, the
question-text audit, the corpus identity's dating record and the models' knowledge cutoffs."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

from pastcast.app import build_corpus, open_corpus
from pastcast.app._datasets import dataset_leakage_card
from pastcast.audit import audit_construction, audit_texts, leakage_card
from pastcast.dataset import Dataset
from pastcast.models import remembered
from pastcast.records import Event, Resolution
from pastcast.world import world_from_spec


def at(s: str) -> datetime:
    return datetime.fromisoformat(s).replace(tzinfo=UTC)


def _planted() -> Dataset:
    """The world's dataset with a multi-option event whose answer another question names, and a
    question whose text carries an update dated after its first step."""
    world = world_from_spec("world").dataset
    first = world.events[0]
    steps = world.steps_of(first.id)
    late = steps[-1].cutoff
    update = f"\n\nUpdate {late:%Y-%m-%d}: the outcome is now clear."
    edited = first.model_copy(update={"description": first.description + update})
    race = Event(
        id="race", title="Who wins the race?", kind="multi",
        labels=("Quentin Blackwood", "Ada Ferreira", "Other"),
        open_time=first.open_time, close_time=first.close_time,
    )  # fmt: skip
    winner = Resolution(event_id="race", label="Quentin Blackwood", resolved_at=late)
    named = edited.model_copy(update={"title": first.title + " (after Quentin Blackwood's win)"})
    events = tuple(named if e.id == first.id else e for e in world.events) + (race,)
    return Dataset(
        "planted", events, {**world.resolutions, "race": winner}, world.beliefs, world.steps
    )


def test_the_card_figures_are_those_of_their_sources() -> None:
    ds = _planted()
    cutoff = date(2024, 6, 30)
    card = leakage_card(ds, models={"m-known": cutoff, "m-unknown": None})
    texts = audit_texts(ds)
    assert texts.sibling_steps > 0 and texts.shortened_steps > 0  # the plants are seen
    assert (card.sibling_steps, card.sibling_pairs, card.sibling_rate) == (
        texts.sibling_steps, len(texts.sibling_answers), texts.sibling_rate,
    )  # fmt: skip
    assert (card.later_text_steps, card.shortened_steps, card.dropped_text_steps) == (
        texts.later_text_steps, texts.shortened_steps, len(texts.dropped_steps),
    )  # fmt: skip
    assert card.events_with_dated_edits == texts.events_with_dated_edits
    built = audit_construction([ds], [], permutations=200, draws=200).results[0]
    assert (card.construction_auc, card.construction_p_value) == (built.auc, built.p_value)
    known, unknown = card.models
    expected = sum(remembered(r.resolved_at, cutoff) for r in ds.resolutions.values())
    assert known.remembered == expected and known.events == len(ds.events)
    assert unknown.remembered is None
    rows = dict(card.rows())
    assert f"{texts.sibling_steps} steps" in rows["sibling answers"]
    assert f"{texts.shortened_steps} of them shortened" in rows["question-text edits"]
    assert rows["served-document leakage"] == "not measured"
    assert rows["corpus dating"] == "no corpus"


def test_the_card_shows_the_corpus_dating_its_identity_records(tmp_path: Path) -> None:
    lines = [
        {"id": f"d{i}", "timestamp": f"2024-05-0{i + 1}T10:00:00Z", "title": f"Doc {i}",
         "text": f"report number {i} " * 10, "dated_by": kind}
        for i, kind in enumerate(("published", "crawled", "published"))
    ]  # fmt: skip
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    build_corpus(f"jsonl:{tmp_path / 'd.jsonl'}", out=tmp_path / "idx")
    corpus = open_corpus(tmp_path / "idx")
    try:
        identity = corpus.identity()
    finally:
        corpus.close()
    ds = world_from_spec("world").dataset
    card = dataset_leakage_card(ds, tmp_path / "idx")
    assert card.corpus_dating == identity.options["dating"]
    assert card.corpus_dating is not None and card.corpus_dating["crawl_or_fetch_dated"] == 1
    text = dict(card.rows())["corpus dating"]
    assert "crawled 1 (33.3%)" in text and "1 dated only by crawl or fetch time" in text
