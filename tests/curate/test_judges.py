"""The judges: query decomposition, fused retrieval, the evidence and leakage judge, and the
judgement cache and records; and the guarantee that no judge is sent the outcome, the market's
prices or their trajectory."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from curate_judges import world_judge

from pastcast.agents import list_prompts, load_prompt
from pastcast.corpus import SearchHit
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.curate import CurationConfig, Judge, Retriever, curate_dataset, judging_date
from pastcast.curate._evidence import judge_evidence
from pastcast.curate._queries import decompose, targets_outcome
from pastcast.curate._records import QueryPlan
from pastcast.curate._retrieve import fuse_rankings
from pastcast.dataset import Dataset
from pastcast.models import CachedModel, ChatRequest, ModelError, ScriptedModel
from pastcast.records import DailyBelief, Document, Event, Resolution
from pastcast.world import World

T0 = datetime(2024, 6, 1, tzinfo=UTC)
EVENT = Event(
    id="ev-1",
    title="Will the Lakeview council pass the budget by June 30?",
    description="The council votes on the city budget in June.",
    resolution_criteria="Yes if the council passes the budget by June 30, 2024.",
    kind="binary",
    labels=("Yes", "No"),
    open_time=T0,
    close_time=T0 + timedelta(days=29),
)
PLAN = {
    "predictive": [
        "council budget vote date",
        "budget council majority",
        "mayor budget plan",
        "Lakeview budget opposition",
    ],
    "background": [
        "Lakeview council history",
        "city budget process",
        "Lakeview finances",
        "Lakeview mayor",
    ],
}


def _judge(*outputs: str) -> tuple[Judge, ScriptedModel]:
    model = ScriptedModel(list(outputs), name="scripted:test")
    return Judge(model), model


def test_decomposition_keeps_4_to_7_queries_per_group_and_never_searches_the_outcome() -> None:
    reply = {**PLAN, "predictive": [*PLAN["predictive"], "Did the council budget resolve yes"]}
    judge, model = _judge(json.dumps(reply))
    plan, error = decompose(judge, EVENT, T0 + timedelta(days=27))
    assert error == "" and plan is not None
    assert plan.predictive == tuple(PLAN["predictive"])
    assert plan.background == tuple(PLAN["background"])
    assert plan.dropped == ("Did the council budget resolve yes",)
    schema = model.requests[0].response_schema
    assert schema is not None and schema["required"] == ["predictive", "background"]
    assert "4 to 7 queries" in model.requests[0].messages[-1].content.replace("\n  ", " ")


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ({**PLAN, "predictive": PLAN["predictive"][:3]}, "predictive: expected 4-7 distinct"),
        ({**PLAN, "background": PLAN["background"] * 2}, None),  # duplicates collapse to 4
        ({"predictive": PLAN["predictive"]}, "background: expected a list of strings"),
        ("not json at all", "the reply holds no JSON object"),
    ],
)
def test_an_unusable_decomposition_is_recorded_with_its_reason(
    reply: object, error: str | None
) -> None:
    judge, _ = _judge(reply if isinstance(reply, str) else json.dumps(reply))
    plan, why = decompose(judge, EVENT, T0)
    (judgement,) = judge.judgements
    if error is None:
        assert plan is not None and len(plan.background) == 4 and judgement.error is None
    else:
        assert plan is None and why.startswith(error) and judgement.error == why


def test_a_failed_model_call_is_a_recorded_judgement_not_a_crash() -> None:
    def broken(request: ChatRequest) -> str:
        raise ModelError("server down")

    judge = Judge(ScriptedModel(responder=broken))
    plan, why = decompose(judge, EVENT, T0)
    assert plan is None and why == "model call failed: server down"
    assert judge.judgements[0].output == "" and judge.judgements[0].error == why


@pytest.mark.parametrize(
    ("query", "targets"),
    [
        ("who won the Lakeview mayoral race", True),
        ("how did the budget vote resolve", True),
        ("final result of the council vote", True),
        ("the outcome of the referendum", True),
        ("Lakeview council budget vote schedule", False),
        ("mayor Alvarez campaign promises", False),
    ],
)
def test_the_outcome_screen(query: str, targets: bool) -> None:
    assert targets_outcome(query) is targets


def _hit(doc_id: str, day: int) -> SearchHit:
    return SearchHit(id=doc_id, timestamp=T0 + timedelta(days=day), title=doc_id, score=1.0)


def test_reciprocal_rank_fusion_with_k_60() -> None:
    fused = fuse_rankings(
        [[_hit("a", 0), _hit("b", 0), _hit("c", 0)], [_hit("b", 0), _hit("d", 0)]]
    )
    assert [h.id for h, _ in fused] == ["b", "a", "d", "c"]
    scores = dict((h.id, s) for h, s in fused)
    assert scores["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert scores["a"] == pytest.approx(1 / 61)
    assert scores["d"] == pytest.approx(1 / 62)
    assert scores["c"] == pytest.approx(1 / 63)


class _Leg:
    """A backend that ranks given hits and records the cutoffs it was asked with."""

    def __init__(self, hits: list[SearchHit]) -> None:
        self.hits = hits
        self.as_of: list[datetime] = []

    def search(self, query: str, *, as_of: datetime, k: int = 10) -> list[SearchHit]:
        self.as_of.append(as_of)
        return [h for h in self.hits if h.timestamp < as_of][:k]

    def read(self, doc_id: str, *, as_of: datetime) -> Document:
        hit = next(h for h in self.hits if h.id == doc_id)
        assert hit.timestamp < as_of
        return Document(id=doc_id, timestamp=hit.timestamp, title=hit.title, text=f"text {doc_id}")

    def count_before(self, as_of: datetime) -> int:
        return sum(h.timestamp < as_of for h in self.hits)


def test_retrieval_keeps_each_legs_top_10_in_the_window_and_the_15_best_unique() -> None:
    # Newest first; ten documents older than the window at the end.
    bm25 = _Leg([_hit(f"b{i:02d}", 100 - i) for i in range(30)] + [_hit("old", -200)])
    dense = _Leg([_hit(f"b{i:02d}", 100 - i) for i in range(0, 30, 2)] + [_hit("d", 50)])
    retriever = Retriever([bm25, dense], window_days=60)
    as_of = T0 + timedelta(days=101)
    per_leg = retriever.ranked("q", as_of)
    assert [len(r) for r in per_leg] == [10, 10]
    assert all(h.timestamp >= as_of - timedelta(days=60) for r in per_leg for h in r)
    best = retriever.best(["q1", "q2"], as_of, 15)
    ids = [h.id for h, _ in best]
    assert len(ids) == len(set(ids)) == 15 and "old" not in ids
    assert ids[0] == "b00"  # first on both legs for both queries
    assert set(bm25.as_of) == set(dense.as_of) == {as_of}


def test_the_evidence_judge_keeps_only_sufficient_evidence_that_does_not_leak() -> None:
    leg = _Leg([_hit(f"x{i}", i) for i in range(20)])
    plan = QueryPlan(predictive=("q",), background=())
    when = T0 + timedelta(days=27)
    cases = [
        ({"verdict": "Sufficient", "leakage": False}, True, ()),
        ({"verdict": "Sufficient", "leakage": True, "leak_documents": [2, 99]}, False, ("x1",)),
        ({"verdict": "Partial", "leakage": False}, False, ()),
        ({"verdict": "Insufficient", "leakage": False}, False, ()),
    ]
    for reply, keep, leaked in cases:
        judge, model = _judge(json.dumps({"leak_documents": [], "rationale": "r", **reply}))
        verdict, error = judge_evidence(judge, Retriever([leg]), EVENT, plan, when)
        assert error == "" and verdict is not None
        assert verdict.keep is keep and verdict.leak_documents == leaked
        # One query, one leg: its top 10 in rank order.
        assert [d.id for d in verdict.documents] == [f"x{i}" for i in range(10)]
        prompt = model.requests[0].messages[-1].content
        assert "[1] 2024-06-01 | x0\ntext x0" in prompt and "[11]" not in prompt
    judge, _ = _judge(
        '{"verdict": "Maybe", "leakage": false, "leak_documents": [], "rationale": ""}'
    )
    verdict, error = judge_evidence(judge, Retriever([leg]), EVENT, plan, when)
    assert verdict is None and error.startswith("verdict:")


def test_with_no_document_in_the_window_the_verdict_is_insufficient_without_a_call() -> None:
    judge, model = _judge("unused")
    plan = QueryPlan(predictive=("q",), background=())
    verdict, _ = judge_evidence(judge, Retriever([_Leg([])]), EVENT, plan, T0)
    assert verdict is not None and verdict.verdict == "Insufficient" and not model.requests


def test_the_judging_date_is_two_days_before_close_and_never_after_the_last_step() -> None:
    assert judging_date(EVENT, None) == EVENT.close_time - timedelta(days=2)
    last = T0 + timedelta(days=10)
    assert judging_date(EVENT, last) == last


def _counterfactual(ds: Dataset) -> Dataset:
    """The same questions and dates with other outcomes and other prices throughout."""
    resolutions = {}
    for e in ds.events:
        res = ds.resolutions[e.id]
        other = next(label for label in reversed(e.labels) if label != res.label)
        resolutions[e.id] = Resolution(event_id=e.id, label=other, resolved_at=res.resolved_at)
    beliefs = {
        eid: tuple(
            DailyBelief(
                event_id=eid,
                day=b.day,
                probs={k: round(0.987654 - 0.5 * v, 6) for k, v in b.probs.items()},
            )
            for b in seq
        )
        for eid, seq in ds.beliefs.items()
    }
    return replace(ds, resolutions=resolutions, beliefs=beliefs)


def test_judges_are_never_sent_the_outcome_prices_or_trajectory(world: World) -> None:
    """Two datasets that differ only in outcomes and prices get byte-identical judge requests:
    nothing a judge is sent depends on them."""
    index = EmbeddedIndex.in_memory(world.documents)
    config = CurationConfig(topics="source")  # the world's categories: no topic calls
    sent = []
    for ds in (world.dataset, _counterfactual(world.dataset)):
        model = ScriptedModel(responder=world_judge)
        result = curate_dataset(ds, Retriever([index]), Judge(model), config)
        sent.append([r.model_dump_json() for r in model.requests])
        assert result.funnel[-2].stage == "coverage probe"
    assert len(sent[0]) > 100 and sent[0] == sent[1]
    text = "\n".join(sent[1])
    assert "resolved to" not in text and "resolution date" not in text.lower()
    # The counterfactual's prices (six decimals) appear nowhere: no price, no trajectory.
    prices = {
        str(p)
        for b in _counterfactual(world.dataset).beliefs["world-001"]
        for p in b.probs.values()
        if len(str(p)) >= 7
    }
    assert prices and not any(p in text for p in prices)


def test_judgements_are_cached_recorded_and_replayed_without_model_calls(
    world: World, tmp_path: Path
) -> None:
    index = EmbeddedIndex.in_memory(world.documents)
    events = world.dataset.event_ids_with_steps()[:6]
    ds = world.dataset.with_steps(s for s in world.dataset.steps if s.event_id in events)
    first = ScriptedModel(responder=world_judge, name="scripted:world")
    cached = CachedModel(first, tmp_path / "cache", settings={"spec": "scripted:world"})
    one = curate_dataset(ds, Retriever([index]), Judge(cached))
    assert len(one.judgements) == len(first.requests) > 10
    for judgement, request in zip(one.judgements, first.requests, strict=True):
        assert judgement.messages == request.messages
        assert judgement.response_schema == json.dumps(
            request.response_schema, sort_keys=True, separators=(",", ":")
        )
        prompt = load_prompt(judgement.prompt)
        assert judgement.prompt_sha256 == prompt.sha256
        assert judgement.model == "scripted:world" and judgement.version == "1"
        assert judgement.parsed is not None and not judgement.cached

    def unreachable(request: ChatRequest) -> str:
        raise AssertionError("a cached judgement called the model")

    again = CachedModel(
        ScriptedModel(responder=unreachable, name="scripted:world"),
        tmp_path / "cache",
        settings={"spec": "scripted:world"},
    )
    two = curate_dataset(ds, Retriever([index]), Judge(again))
    assert all(j.cached for j in two.judgements)
    assert [j.output for j in two.judgements] == [j.output for j in one.judgements]
    assert two.dataset.id == one.dataset.id and two.funnel == one.funnel


def test_the_curation_prompts_are_registered_and_versioned() -> None:
    names = set(list_prompts())
    assert {
        "curate_queries.v1",
        "curate_evidence.v1",
        "curate_coverage_queries.v1",
        "curate_coverage_labels.v1",
        "curate_topic.v1",
    } <= names
