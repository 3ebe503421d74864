"""The knowledge-cutoff probe: questions made deterministically from a dated corpus with the
real item's position balanced, and a change point that finds a planted cutoff."""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from datetime import date

import pytest

from _probe_corpus import probe_corpus
from pastcast.audit import (
    ProbeQuestions,
    change_point,
    probe_cutoff,
    probe_questions,
    render_options,
)
from pastcast.audit._cutoff_probe import ProbeAnswer, month_end
from pastcast.curate import Judge
from pastcast.models import ChatRequest, ScriptedModel
from pastcast.records import Document


def _questions(docs: list[Document] | None = None, **kw: object) -> ProbeQuestions:
    return probe_questions(docs or probe_corpus(), corpus="test", per_month=8, **kw)  # type: ignore[arg-type]


def test_questions_are_deterministic() -> None:
    docs = probe_corpus()
    a = _questions(docs)
    shuffled = list(docs)
    random.Random(1).shuffle(shuffled)
    assert _questions(shuffled) == a
    assert _questions(docs, seed=1) != a
    assert len(a.questions) == 18 * 8
    assert len({q.id for q in a.questions}) == len(a.questions)


def test_the_real_items_position_is_balanced_and_nothing_marks_it() -> None:
    qs = _questions()
    by_month: dict[str, Counter[int]] = {}
    for q in qs.questions:
        by_month.setdefault(q.month, Counter())[q.answer] += 1
        assert len(q.options) == 4 and len(set(q.options)) == 4
        real = q.options[q.answer]
        rendered = render_options(q)
        assert q.document not in rendered
        assert not re.search(r"\d{4}-\d{2}-\d{2}", rendered)
        assert "(Reuters)" not in rendered  # the source citation only the real item had
        assert real in {q.options[q.answer]} and real.endswith(".")
    for counts in by_month.values():
        assert max(counts.values()) - min(counts.get(p, 0) for p in range(4)) <= 1
    overall = Counter(q.answer for q in qs.questions)
    assert set(overall) == {0, 1, 2, 3}
    assert max(overall.values()) - min(overall.values()) <= len(by_month)
    # the real item is not the longest option more often than its share would make it
    longest = sum(len(q.options[q.answer]) == max(len(o) for o in q.options) for q in qs.questions)
    assert longest < 0.5 * len(qs.questions)


def _knows_until(qs: ProbeQuestions, last: str) -> ScriptedModel:
    """Answers correctly for months through ``last``, by a hash of the question after it."""
    key = {render_options(q): q for q in qs.questions}

    def respond(request: ChatRequest) -> str:
        user = request.messages[-1].content
        q = next(q for opts, q in key.items() if opts in user)
        if q.month <= last:
            letter = "ABCD"[q.answer]
        else:
            letter = "ABCD"[int(hashlib.sha256(user.encode()).hexdigest(), 16) % 4]
        return json.dumps({"answer": letter})

    return ScriptedModel(responder=respond, name="scripted-knows")


def test_the_change_point_recovers_a_planted_cutoff() -> None:
    qs = _questions()
    probe = probe_cutoff(qs, Judge(_knows_until(qs, "2023-10")), draws=300)
    assert probe.estimate.detected and probe.estimate.month == "2023-10"
    assert probe.estimate.low is not None and probe.estimate.high is not None
    assert probe.estimate.low <= "2023-10" <= probe.estimate.high
    assert probe.knowledge_cutoff == date(2023, 10, 31)
    assert probe.low is not None and probe.high is not None
    assert probe.low <= date(2023, 10, 31) <= probe.high
    assert probe.estimate.p_value is not None and probe.estimate.p_value < 0.05
    before = [m for m in probe.months if m.month <= "2023-10"]
    assert all(m.accuracy == 1.0 for m in before)
    assert probe.unusable == 0 and probe.questions == len(qs.questions)


def test_a_model_that_knows_nothing_gets_no_cutoff() -> None:
    qs = _questions()

    def guess(request: ChatRequest) -> str:
        h = int(hashlib.sha256(request.messages[-1].content.encode()).hexdigest(), 16)
        return json.dumps({"answer": "ABCD"[h % 4]})

    probe = probe_cutoff(qs, Judge(ScriptedModel(responder=guess)), draws=300)
    assert not probe.estimate.detected
    assert probe.knowledge_cutoff is None and probe.estimate.month is None


def test_unusable_answers_count_as_wrong() -> None:
    qs = _questions()
    probe = probe_cutoff(qs, Judge(ScriptedModel(["no idea"], cycle=True)), draws=100)
    assert probe.unusable == probe.questions and all(m.correct == 0 for m in probe.months)
    assert probe.knowledge_cutoff is None


def test_change_point_on_counts() -> None:
    answers = [
        ProbeAnswer(question=f"{m}-{i}", month=m, chosen=0, correct=(m <= "2024-03" or i < 2))
        for m in ("2024-01", "2024-02", "2024-03", "2024-04", "2024-05", "2024-06")
        for i in range(10)
    ]
    cp = change_point(answers, draws=200)
    assert cp.month == "2024-03" and cp.before == 1.0 and cp.after == pytest.approx(0.2)
    assert month_end("2024-02") == date(2024, 2, 29) and month_end("2023-12") == date(2023, 12, 31)
