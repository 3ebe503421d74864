"""The heuristic research agent: what it reads is what it knows. Its forecast moves off the
uniform one with the cue-bearing evidence it finds, further the more of it it reads, and stays at
0.5 where its hits say nothing about the question."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from pastcast.agents._heuristic import HeuristicResearchAgent

CUTOFF = datetime(2024, 6, 1, tzinfo=UTC)


class _Tools:
    """Search and read over a few documents, all dated the day before the cutoff."""

    def __init__(self, texts: list[str]) -> None:
        self.docs = {
            f"d{i}": SimpleNamespace(
                id=f"d{i}", date="2024-05-31 12:00", title="Zephyr rocket launch", text=text
            )
            for i, text in enumerate(texts)
        }
        self.reads: list[str] = []

    def search(self, query: str, top_k: int = 20) -> list[SimpleNamespace]:
        return [
            SimpleNamespace(id=d.id, score=1.0, date=d.date, title=d.title, snippet=d.text)
            for d in self.docs.values()
        ][:top_k]

    def read(self, doc_id: str) -> SimpleNamespace:
        self.reads.append(doc_id)
        return self.docs[doc_id]


def _p_yes(texts: list[str], **args: float) -> float:
    question = SimpleNamespace(
        title="Will the Zephyr rocket launch succeed",
        labels=("Yes", "No"),
        kind="binary",
        cutoff=CUTOFF,
    )
    episode = SimpleNamespace(question=question, tools=_Tools(texts), notebook_in=None)
    forecast = HeuristicResearchAgent(**args).forecast(episode)  # type: ignore[arg-type]
    assert episode.tools.reads == sorted(episode.tools.docs)[::-1][: int(args["max_reads"])]
    return forecast.probs["Yes"]


POSITIVE = ["The Zephyr rocket launch is on track, engineers confirmed."] * 4
NEGATIVE = ["The Zephyr rocket launch has stalled after a setback."] * 4


def test_reading_more_of_the_same_evidence_moves_the_forecast_further() -> None:
    p = [_p_yes(POSITIVE, max_reads=n) for n in (0, 2, 4)]
    assert 0.5 < p[0] < p[1] < p[2]


def test_evidence_against_the_outcome_moves_it_the_other_way() -> None:
    assert _p_yes(NEGATIVE, max_reads=4) < _p_yes(NEGATIVE, max_reads=0) < 0.5


@pytest.mark.parametrize("max_reads", [0, 4])
def test_hits_that_say_nothing_about_the_question_leave_it_uniform(max_reads: int) -> None:
    silent = ["Stocks closed higher on Tuesday in busy trading.", "The weather is likely mild."]
    assert _p_yes(silent, max_reads=max_reads) == 0.5
