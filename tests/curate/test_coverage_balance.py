"""The coverage probe's scores and labels, and balancing: outcomes first, then topics, seeded;
evaluation events keep at least three forecast dates."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from pastcast.corpus import SearchHit
from pastcast.curate import Judge, Retriever, too_few_dates
from pastcast.curate._balance import balance_outcomes, source_topic
from pastcast.curate._coverage import CoverageProbe, contrastive_score, coverage_label, side_score
from pastcast.models import ChatRequest, ScriptedModel
from pastcast.records import Document, Event

T0 = datetime(2024, 6, 1, tzinfo=UTC)


def _event(i: int, kind: str = "binary", category: str = "", tags: tuple[str, ...] = ()) -> Event:
    labels = ("Yes", "No") if kind == "binary" else ("A", "B", "C")
    return Event(
        id=f"e{i:02d}",
        title=f"Question {i}?",
        kind=kind,  # type: ignore[arg-type]
        labels=labels,
        category=category,
        tags=tags,
        open_time=T0,
        close_time=T0 + timedelta(days=30),
    )


def test_side_scores_contrastive_score_and_labels() -> None:
    assert side_score(["strong"] * 5) == 1.0
    assert side_score(["contra"] * 5) == 0.0
    assert side_score(["irrelevant"] * 5) == pytest.approx(1 / 3)
    assert side_score(["strong", "weak", "irrelevant", "contra", "irrelevant"]) == pytest.approx(
        (2 + 1 + 0 - 1 + 0 + 5) / 15
    )
    scores = {"Yes": 1.0, "No": 1 / 3}
    assert contrastive_score(scores, "Yes") == pytest.approx(2 / 3)
    assert contrastive_score(scores, "No") == pytest.approx(-2 / 3)
    assert contrastive_score({"A": 0.5, "B": 0.9, "C": 0.2}, "A") == pytest.approx(-0.4)
    assert [coverage_label(x) for x in (1.0, 0.2, 0.19, 0.01, 0.0, -1.0)] == [
        "strong",
        "strong",
        "weak",
        "weak",
        "none",
        "none",
    ]


class _Leg:
    def __init__(self, docs: list[Document]) -> None:
        self.docs = docs

    def search(self, query: str, *, as_of: datetime, k: int = 10) -> list[SearchHit]:
        words = set(query.lower().split())
        found = [d for d in self.docs if d.timestamp < as_of and words & set(d.text.split())]
        return [SearchHit(id=d.id, timestamp=d.timestamp, title=d.title, score=1.0) for d in found][
            :k
        ]

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        return next(d for d in self.docs if d.id == doc_id and d.timestamp < as_of)

    def count_before(self, as_of: datetime) -> int:
        return len(self.docs)


def test_the_probe_labels_each_side_blind_and_scores_against_the_realised_side() -> None:
    docs = [
        Document(id=f"d{i}", timestamp=T0 + timedelta(days=i), title=f"t{i}", text="budget vote")
        for i in range(5)
    ]

    def reply(request: ChatRequest) -> str:
        assert request.response_schema is not None
        if request.response_schema["title"] == "curate_coverage_queries":
            return json.dumps(
                {"Yes": [f"budget {i}" for i in range(5)], "No": [f"nothing{i}" for i in range(5)]}
            )
        # "strong" for every block of both sides: the empty NO blocks must still count as 0.
        return json.dumps({"labels": ["strong"] * 5})

    model = ScriptedModel(responder=reply)
    probe = CoverageProbe(Judge(model), Retriever([_Leg(docs)]))
    when = T0 + timedelta(days=28)
    yes, error = probe.probe(_event(1), "Yes", when)
    assert error == "" and yes is not None
    by_side = {s.side: s for s in yes.sides}
    assert by_side["Yes"].labels == ("strong",) * 5 and by_side["Yes"].score == 1.0
    assert all(len(block) == 3 for block in by_side["Yes"].blocks)
    # The NO queries found nothing: empty blocks are irrelevant whatever the judge said.
    assert by_side["No"].labels == ("irrelevant",) * 5 and by_side["No"].blocks == ((),) * 5
    assert yes.score == pytest.approx(2 / 3) and yes.label == "strong"
    no, _ = probe.probe(_event(1), "No", when)
    assert no is not None and no.score == pytest.approx(-2 / 3) and no.label == "none"
    # The realised side never reaches the judge: both probes sent the same requests.
    sent = [r.model_dump_json() for r in model.requests]
    assert sent[: len(sent) // 2] == sent[len(sent) // 2 :]


def test_outcomes_are_balanced_first_and_the_majoritys_topics_spread() -> None:
    topics = {"e00": "a", "e01": "a", "e02": "a", "e03": "a", "e04": "b", "e05": "c"}
    events = [_event(i) for i in range(8)] + [_event(9, "multi")]
    outcomes = {f"e{i:02d}": "Yes" for i in range(6)} | {"e06": "No", "e07": "No", "e09": "B"}
    removed = balance_outcomes(events, outcomes, topics | {"e06": "a", "e07": "b"}, {}, seed=0)
    kept_yes = [e for e in topics if e not in removed]
    assert len(removed) == 4 and len(kept_yes) == 2
    assert len({topics[e] for e in kept_yes}) == 2  # two topics, not two of topic a
    assert set(removed.values()) == {"Yes outcomes cut from 6 to 2"}
    assert "e09" not in removed  # a multi-option event has no YES/NO to balance


def test_balancing_is_deterministic_by_seed_and_per_split() -> None:
    events = [_event(i) for i in range(12)]
    outcomes = {e.id: ("Yes" if i < 9 else "No") for i, e in enumerate(events)}
    topics = {e.id: "t" for e in events}
    draws = [frozenset(balance_outcomes(events, outcomes, topics, {}, seed=s)) for s in range(6)]
    assert draws[0] == frozenset(balance_outcomes(events, outcomes, topics, {}, seed=0))
    assert len(set(draws)) > 1  # another seed draws other events
    splits = {e.id: ("train" if i % 2 else "eval") for i, e in enumerate(events)}
    removed = balance_outcomes(events, outcomes, topics, splits, seed=0)
    kept = [e.id for e in events if e.id not in removed]
    per_split = Counter((splits[e], outcomes[e]) for e in kept)
    assert per_split[("eval", "Yes")] == per_split[("eval", "No")]
    assert per_split[("train", "Yes")] == per_split[("train", "No")]


def test_evaluation_events_keep_at_least_three_dates() -> None:
    events = [_event(i) for i in range(4)]
    steps = {"e00": 2, "e01": 3, "e02": 1, "e03": 5}
    assert set(too_few_dates(events, steps, {})) == {"e00", "e02"}
    splits = {"e00": "train", "e01": "eval", "e02": "eval", "e03": "eval"}
    removed = too_few_dates(events, steps, splits)
    assert removed == {"e02": "1 forecast dates (an evaluation event needs 3)"}


def test_topics_come_from_the_source_category_or_tag() -> None:
    assert source_topic(_event(0, category="Politics")) == "politics"
    assert source_topic(_event(0, tags=("Crypto", "x"))) == "crypto"
    assert source_topic(_event(0)) is None
