"""A tiny hand-written world for fast tests of the environment and runner."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from pastcast.corpus import DocumentNotVisible, SearchFilter, SearchHit
from pastcast.dataset import Dataset
from pastcast.records import DailyBelief, Document, Event, Resolution, StepSpec

T0 = datetime(2024, 3, 1, tzinfo=UTC)


def tiny_dataset() -> Dataset:
    e1 = Event(
        id="ev-rocket",
        title="Will the Zephyr rocket launch succeed",
        kind="binary",
        labels=("Yes", "No"),
        open_time=T0,
        close_time=T0 + timedelta(days=20),
        category="science",
    )
    e2 = Event(
        id="ev-mayor",
        title="Who wins the Lakeview mayoral race",
        kind="multi",
        labels=("Alvarez", "Brooks", "Chen"),
        open_time=T0,
        close_time=T0 + timedelta(days=30),
        category="politics",
    )
    res = {
        "ev-rocket": Resolution(
            event_id="ev-rocket", label="Yes", resolved_at=T0 + timedelta(days=20)
        ),
        "ev-mayor": Resolution(
            event_id="ev-mayor", label="Chen", resolved_at=T0 + timedelta(days=30)
        ),
    }
    beliefs = {
        "ev-rocket": tuple(
            DailyBelief(
                event_id="ev-rocket",
                day=date(2024, 3, 1) + timedelta(days=i),
                probs={"Yes": 0.5 + 0.02 * i, "No": 0.5 - 0.02 * i},
            )
            for i in range(20)
        ),
        "ev-mayor": tuple(
            DailyBelief(
                event_id="ev-mayor",
                day=date(2024, 3, 1) + timedelta(days=i),
                probs={"Alvarez": 0.3, "Brooks": 0.3, "Chen": 0.4},
            )
            for i in range(30)
        ),
    }
    steps = (
        StepSpec(event_id="ev-rocket", step_index=0, cutoff=T0 + timedelta(days=5)),
        StepSpec(event_id="ev-rocket", step_index=1, cutoff=T0 + timedelta(days=12)),
        StepSpec(event_id="ev-mayor", step_index=0, cutoff=T0 + timedelta(days=10)),
        StepSpec(event_id="ev-mayor", step_index=1, cutoff=T0 + timedelta(days=25)),
    )
    return Dataset("tiny-v1", (e1, e2), res, beliefs, steps)


def tiny_documents() -> tuple[Document, ...]:
    def doc(i: str, days: float, title: str, text: str) -> Document:
        return Document(id=i, timestamp=T0 + timedelta(days=days), title=title, text=text)

    return (
        doc("d1", 1, "Zephyr rocket on track", "The Zephyr rocket launch is on track and likely."),
        doc("d2", 3, "Zephyr rocket launch poised", "Engineers say the Zephyr rocket is poised."),
        doc("d3", 8, "Zephyr rocket faces doubts", "The Zephyr rocket launch faces doubts."),
        doc("d4", 9, "Lakeview race", "Chen leads the Lakeview mayoral race; Brooks trails."),
        doc("d5", 11.5, "Zephyr rocket confirmed", "Zephyr rocket launch confirmed for Friday."),
        doc("d6", 15, "Lakeview debate", "Alvarez struggles in the Lakeview debate."),
        # Hindsight canaries: dated after resolution, revealing outcomes.
        doc(
            "canary-rocket",
            21,
            "Zephyr rocket launch succeeded",
            "Resolved YES: the Zephyr rocket launch succeeded.",
        ),
        doc(
            "canary-mayor",
            31,
            "Chen wins Lakeview mayoral race",
            "It's official: Chen won the Lakeview mayoral race.",
        ),
    )


class ListBackend:
    """A brute-force reference backend: filter by cutoff, then count query-term hits."""

    def __init__(self, documents: tuple[Document, ...]) -> None:
        self.docs = {d.id: d for d in documents}

    def search(
        self, query: str, *, as_of: datetime, k: int = 10, filters: SearchFilter | None = None
    ) -> list[SearchHit]:
        terms = set(re.findall(r"\w+", query.lower()))
        scored = []
        for d in self.docs.values():
            if d.timestamp >= as_of or (filters is not None and not filters.matches(d)):
                continue
            words = re.findall(r"\w+", f"{d.title} {d.text}".lower())
            score = float(sum(w in terms for w in words))
            if score > 0:
                scored.append((-score, d.id, d))
        scored.sort()
        return [
            SearchHit(id=d.id, timestamp=d.timestamp, title=d.title, score=-s, snippet=d.text[:80])
            for s, _, d in scored[:k]
        ]

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        d = self.docs.get(doc_id)
        if d is None or d.timestamp >= as_of:
            raise DocumentNotVisible(f"document {doc_id!r} is not visible at this cutoff")
        return d

    def count_before(self, as_of: datetime) -> int:
        return sum(d.timestamp < as_of for d in self.docs.values())
