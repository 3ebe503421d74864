"""The retrieval audit's statistics and sampling, and its judge: blind to outcomes, measured on
planted documents, corrected for its errors."""

from __future__ import annotations

import hashlib
import html
import json
import random
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pastcast.audit import (
    RetrievalAudit,
    audit_served,
    calibration_items,
    read_retrieval_audit,
    stratified_sample,
    write_retrieval_audit,
)
from pastcast.audit._retrievals import (
    BUCKETS,
    CalibrationItem,
    ServedDocument,
    closeness,
    retrieval_audit_path,
)
from pastcast.curate import Judge
from pastcast.dataset import Dataset
from pastcast.models import ChatRequest, ScriptedModel
from pastcast.records import Resolution
from pastcast.scoring import clopper_pearson, corrected_rate, wilson
from pastcast.scoring._binomial import rogan_gladen
from pastcast.world import World, WorldConfig, build_world

CUT = datetime(2024, 6, 1, tzinfo=UTC)
VERDICT = "audit_retrieval.v2"
"""The judge that gives its own verdict (the scripted replies below are its)."""


# --- intervals and the correction, against hand-computed values ---------------------------


def test_wilson_and_clopper_pearson_match_published_values() -> None:
    assert wilson(8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    assert clopper_pearson(8, 10) == pytest.approx((0.4439, 0.9748), abs=1e-4)
    assert clopper_pearson(0, 20)[0] == 0.0 and clopper_pearson(20, 20)[1] == 1.0
    assert clopper_pearson(0, 20)[1] == pytest.approx(1 - 0.025 ** (1 / 20), abs=1e-9)
    assert wilson(0, 0) == (0.0, 1.0)


def test_rogan_gladen_by_hand() -> None:
    # (0.30 + 0.80 - 1) / (0.90 + 0.80 - 1) = 0.10 / 0.70
    assert rogan_gladen(0.30, 0.90, 0.80) == pytest.approx(1 / 7)
    # a perfect judge: the apparent rate is the rate
    assert rogan_gladen(0.25, 1.0, 1.0) == pytest.approx(0.25)
    # (0.10 + 0.80 - 1) / 0.70 < 0: clipped to 0; (0.95 + 0.90 - 1) / 0.70 > 1: clipped to 1
    assert rogan_gladen(0.10, 0.90, 0.80) == 0.0
    assert rogan_gladen(0.95, 0.80, 0.90) == 1.0


@pytest.mark.parametrize(("se", "sp"), [(0.5, 0.5), (0.4, 0.55), (0.2, 0.3)])
def test_a_judge_no_better_than_chance_gets_no_number(se: float, sp: float) -> None:
    assert rogan_gladen(0.3, se, sp) is None
    n = 20
    r = corrected_rate([(1.0, 30, 100)], round(se * n), n, round(sp * n), n)
    assert r.estimate is None
    assert r.apparent == pytest.approx(0.3)


def test_the_interval_widens_with_a_worse_judge() -> None:
    good = corrected_rate([(1.0, 30, 100)], 19, 20, 19, 20)
    poor = corrected_rate([(1.0, 30, 100)], 12, 20, 12, 20)
    assert good.estimate is not None and poor.estimate is not None
    assert good.low <= good.estimate <= good.high
    assert poor.high - poor.low > good.high - good.low
    assert poor.uninformative_draws > good.uninformative_draws


def test_nothing_flagged_in_a_small_sample_is_not_a_certain_zero() -> None:
    # 0 of 24 judged: the rate may still be several percent (Clopper-Pearson's upper bound is
    # 14%); an interval of [0, 0] would read as proof of no leakage
    r = corrected_rate([(0.5, 0, 12), (0.5, 0, 12)], 8, 8, 6, 8)
    assert r.apparent == 0.0 and r.apparent_low < 0.01
    assert 0.02 < r.apparent_high < clopper_pearson(0, 24, 0.95)[1] + 0.05
    # fewer flagged than the judge's false positives predict: Rogan-Gladen alone gives [0, 0]
    assert r.estimate == 0.0 and r.low == 0.0
    assert r.high >= r.apparent_high


def test_the_apparent_rate_is_weighted_by_the_strata_shares() -> None:
    # 90 % of what was served is in a stratum with 0 of 10 flagged, 10 % with 10 of 10
    r = corrected_rate([(0.9, 0, 10), (0.1, 10, 10)], 20, 20, 20, 20)
    assert r.apparent == pytest.approx(0.1)


# --- sampling -------------------------------------------------------------------------------


def _served(sizes: dict[tuple[str, int], int]) -> list[ServedDocument]:
    ages = [timedelta(hours=3), timedelta(days=3), timedelta(days=20), timedelta(days=90)]
    out = []
    for (source, b), n in sizes.items():
        for i in range(n):
            ts = CUT - ages[b] - timedelta(minutes=i)
            out.append(
                ServedDocument(
                    event_id=f"e{i % 7}",
                    cutoff=CUT,
                    doc_id=f"{source}-{b}-{i}",
                    source=source,
                    timestamp=ts,
                    bucket=closeness(ts, CUT),
                )
            )
    return out


SIZES = {
    ("Wire", 0): 3,
    ("Wire", 1): 40,
    ("Wire", 2): 120,
    ("Wire", 3): 300,
    ("Daily", 0): 1,
    ("Daily", 1): 12,
    ("Daily", 3): 50,
    ("Blog", 2): 2,
}


def test_closeness_buckets() -> None:
    assert [closeness(CUT - d, CUT) for d in (timedelta(hours=1), timedelta(days=1))] == [
        "last_day",
        "last_day",
    ]
    assert closeness(CUT - timedelta(days=6), CUT) == "last_week"
    assert closeness(CUT - timedelta(days=30), CUT) == "last_month"
    assert closeness(CUT - timedelta(days=31), CUT) == "older"
    assert closeness(CUT, CUT) == "after_cutoff"
    assert set(BUCKETS) >= {"last_day", "last_week", "last_month", "older"}


def test_stratified_sampling_is_deterministic_and_covers_every_stratum() -> None:
    served = _served(SIZES)
    a = stratified_sample(served, 40, seed=3)
    shuffled = list(served)
    random.Random(9).shuffle(shuffled)
    assert stratified_sample(shuffled, 40, seed=3) == a
    assert stratified_sample(served, 40, seed=4) != a
    assert len(a) == 40 and len(set(a)) == 40
    assert {s.stratum for s in a} == {s.stratum for s in served}  # every stratum
    counts = {k: sum(s.stratum == k for s in a) for k in {s.stratum for s in served}}
    assert (
        counts[("Wire", "older")] > counts[("Wire", "last_month")] > counts[("Wire", "last_week")]
    )
    assert counts[("Blog", "last_month")] <= 2


def test_a_sample_larger_than_the_served_set_takes_everything() -> None:
    served = _served(SIZES)
    assert set(stratified_sample(served, 10_000)) == set(served)


def test_a_sample_smaller_than_the_strata_takes_the_largest() -> None:
    a = stratified_sample(_served(SIZES), 3)
    assert {s.stratum for s in a} == {("Wire", "older"), ("Wire", "last_month"), ("Daily", "older")}


# --- the judge on planted documents ---------------------------------------------------------


@pytest.fixture(scope="module")
def world() -> World:
    return build_world(0, WorldConfig(hindsight_fraction=0.6, n_events=160, n_documents=2500))


def _hash01(text: str) -> float:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16) / 16**12


def _noisy_judge(planted_texts: set[str], se: float, sp: float) -> ScriptedModel:
    """Knows which documents are planted; says so with probability ``se`` (a planted one) and
    wrongly flags a clean one with probability 1 - ``sp`` (by a hash of the request)."""

    def respond(request: ChatRequest) -> str:
        user = request.messages[-1].content
        planted = any(t[:200] in user for t in planted_texts)
        u = _hash01(user)
        flag = u < se if planted else u >= sp
        return json.dumps({"reveals_later": flag, "reason": "scripted"})

    return ScriptedModel(responder=respond, name="scripted-noisy")


def _served_from(items: list[CalibrationItem]) -> list[ServedDocument]:
    return [
        ServedDocument(
            event_id=it.event.id,
            cutoff=it.cutoff,
            doc_id=it.document.id,
            source=it.document.source,
            timestamp=it.document.timestamp,
            bucket=closeness(it.document.timestamp, it.cutoff),
        )
        for it in items
    ]


def test_calibration_documents_are_served_before_the_outcome(world: World) -> None:
    items = calibration_items(
        world.dataset, world.documents, world.hindsight_ids, world.evidence, positives=15
    )
    pos = [i for i in items if i.leaks]
    assert len(pos) == 15 and len(items) == 35
    for it in items:
        assert (
            it.document.timestamp < it.cutoff < world.dataset.resolutions[it.event.id].resolved_at
        )
    assert {i.document.id for i in pos} <= world.hindsight_ids
    assert not {i.document.id for i in items if not i.leaks} & world.hindsight_ids
    again = calibration_items(
        world.dataset, world.documents, world.hindsight_ids, world.evidence, positives=15
    )
    assert again == items


def test_the_corrected_rate_recovers_the_planted_rate(world: World) -> None:
    """A judge with Se 0.8 and Sp 0.85 over served documents of which a known share are planted
    rewrites: the apparent rate is off, the corrected one covers the truth."""
    everything = calibration_items(
        world.dataset,
        world.documents,
        world.hindsight_ids,
        world.evidence,
        positives=1000,
        negatives=1000,
        seed=1,
    )
    pos = [i for i in everything if i.leaks]
    neg = [i for i in everything if not i.leaks]
    # calibration and the served set share no document
    calib = pos[: len(pos) // 2] + neg[:120]
    served_items = pos[len(pos) // 2 :] + neg[120:]
    truth = (len(pos) - len(pos) // 2) / len(served_items)
    assert 0.1 < truth < 0.4
    planted = {d.text for d in world.documents if d.id in world.hindsight_ids}
    judge = Judge(_noisy_judge(planted, se=0.8, sp=0.85))
    served = _served_from(served_items)
    audit = audit_served(
        served,
        {d.id: d for d in world.documents},
        world.dataset,
        judge,
        calib,
        run_log="run.jsonl",
        calibration_name="world:0,hindsight_fraction=0.6",
        sample=len(served),
        prompt=VERDICT,
    )
    o = audit.overall
    assert o.judged == len(served) and audit.errors == 0
    assert o.corrected is not None and o.apparent is not None
    assert o.corrected_low <= truth <= o.corrected_high
    assert abs(o.corrected - truth) < abs(o.apparent - truth)
    acc = audit.judge_accuracy
    assert acc.informative and acc.positives == len(calib) - 120 and acc.negatives == 120
    assert acc.sensitivity_exact[0] <= 0.8 <= acc.sensitivity_exact[1]
    assert len(audit.flagged) == o.flagged
    assert all(f.reason == "scripted" and f.excerpt for f in audit.flagged)


def test_a_chance_judge_is_reported_uninformative(world: World) -> None:
    items = calibration_items(world.dataset, world.documents, world.hindsight_ids, world.evidence)
    judge = Judge(ScriptedModel([json.dumps({"reveals_later": True, "reason": "all"})], cycle=True))
    audit = audit_served(
        _served_from(list(items)),
        {d.id: d for d in world.documents},
        world.dataset,
        judge,
        items,
        run_log="run.jsonl",
        calibration_name="world",
        prompt=VERDICT,
    )
    assert audit.judge_accuracy.specificity == 0.0 and not audit.judge_accuracy.informative
    assert audit.overall.corrected is None
    assert (audit.overall.corrected_low, audit.overall.corrected_high) == (0.0, 1.0)
    assert audit.overall.apparent == 1.0


def _flipped(ds: Dataset) -> Dataset:
    res = {}
    for e in ds.events:
        r = ds.resolutions[e.id]
        other = next(lab for lab in e.labels if lab != r.label)
        res[e.id] = Resolution(event_id=e.id, label=other, resolved_at=r.resolved_at)
    return replace(ds, resolutions=res)


def test_the_judge_never_sees_the_outcome(world: World) -> None:
    """Two datasets that differ only in their outcomes send the judge the same requests."""
    calib = calibration_items(world.dataset, world.documents, world.hindsight_ids, world.evidence)
    served = _served_from(list(calib))
    docs = {d.id: d for d in world.documents}
    sent = []
    for ds in (world.dataset, _flipped(world.dataset)):
        model = ScriptedModel([json.dumps({"reveals_later": False, "reason": "x"})], cycle=True)
        audit_served(
            served, docs, ds, Judge(model), calib, run_log="r", calibration_name="w", prompt=VERDICT
        )
        sent.append([r.model_dump_json() for r in model.requests])
    assert sent[0] == sent[1] and len(sent[0]) == 2 * len(calib)
    flipped = _flipped(world.dataset)
    assert any(
        flipped.resolutions[e.id].label != world.dataset.resolutions[e.id].label
        for e in world.dataset.events
    )


def test_the_result_is_kept_beside_the_run_log(tmp_path: Path, world: World) -> None:
    calib = calibration_items(world.dataset, world.documents, world.hindsight_ids, world.evidence)
    model = ScriptedModel([json.dumps({"reveals_later": False, "reason": "x"})], cycle=True)
    log = tmp_path / "run.jsonl"
    audit = audit_served(
        _served_from(list(calib)),
        {d.id: d for d in world.documents},
        world.dataset,
        Judge(model),
        calib,
        run_log=str(log),
        calibration_name="w",
        prompt=VERDICT,
    )
    assert read_retrieval_audit(log) is None
    written = write_retrieval_audit(audit, log)
    assert written == retrieval_audit_path(log) == tmp_path / "run.retrieval-audit.json"
    back = read_retrieval_audit(log)
    assert isinstance(back, RetrievalAudit) and back == audit
    written.write_text("{}")
    with pytest.raises(ValueError, match="not a retrieval audit"):
        read_retrieval_audit(log)


def test_a_reply_cut_short_after_its_verdict_still_counts(world: World) -> None:
    calib = calibration_items(world.dataset, world.documents, world.hindsight_ids, world.evidence)
    model = ScriptedModel(['{"reveals_later": true, "reason": "the text names a la'], cycle=True)
    audit = audit_served(
        _served_from(list(calib)[:3]),
        {d.id: d for d in world.documents},
        world.dataset,
        Judge(model),
        calib,
        run_log="r",
        calibration_name="w",
        prompt=VERDICT,
    )
    assert audit.errors == 0 and audit.overall.flagged == 3
    assert all("cut short" in f.reason for f in audit.flagged)


def test_the_judge_prompt_suggests_no_verdict() -> None:
    """The reply format shown to the judge names no verdict: with a literal
    ``{"reveals_later": false, ...}`` in the prompt a 1.5B judge answered ``false`` to planted
    rewrites that state the outcome."""
    from pastcast.agents import load_prompt

    prompt = load_prompt(VERDICT)
    text = prompt.text
    assert "reveals_later" in text
    for verdict in ("true", "false"):
        assert f'"reveals_later": {verdict}' not in text
        assert f'"reveals_later":{verdict}' not in text


# --- the grounded judge (audit_retrieval.v3): extraction by the model, the decision in code ---

GROUNDED = "audit_retrieval.v3"


def _extraction(
    outcome: str = "not stated",
    quote: str | None = None,
    date: str | None = None,
    date_quote: str | None = None,
) -> str:
    return json.dumps(
        {
            "reported_outcome": outcome,
            "outcome_quote": quote,
            "latest_date": date,
            "date_quote": date_quote,
        }
    )


def _grounded(world: World, reply: Callable[[CalibrationItem], str]) -> RetrievalAudit:
    """Each calibration item served once, the scripted extraction ``reply(item)``."""
    items = list(
        calibration_items(world.dataset, world.documents, world.hindsight_ids, world.evidence)
    )
    by_text = {it.document.text[:300]: it for it in items}

    def respond(request: ChatRequest) -> str:
        user = request.messages[-1].content
        item = next(it for t, it in by_text.items() if t in user)
        return reply(item)

    return audit_served(
        _served_from(items),
        {d.id: d for d in world.documents},
        world.dataset,
        Judge(ScriptedModel(responder=respond, name="scripted-extractor")),
        items,
        run_log="r",
        calibration_name="w",
        sample=len(items),
        prompt=GROUNDED,
    )


def _sentence(doc_text: str) -> str:
    return doc_text.split(". ")[0]


def test_a_grounded_outcome_quote_flags_and_a_hallucinated_one_does_not(world: World) -> None:
    # every document "states" an outcome; only the quotes copied from the document count
    honest = _grounded(
        world, lambda it: _extraction(it.event.labels[0], _sentence(it.document.text))
    )
    assert honest.overall.flagged == honest.overall.judged > 0 and honest.errors == 0
    assert all("states the outcome" in f.reason for f in honest.flagged)
    # the same quotes re-spaced and re-cased still count ...
    respaced = _grounded(
        world,
        lambda it: _extraction(
            it.event.labels[0], "  " + _sentence(it.document.text).upper() + " "
        ),
    )
    assert respaced.overall.flagged == respaced.overall.judged
    # the whole text with its double quote marks turned into single ones (as a 1.5B judge
    # copied 'Will the ... by July 4, 2024? ' resolved YES)
    requoted = _grounded(
        world,
        lambda it: _extraction(it.event.labels[0], it.document.text.replace('"', "' ")),
    )
    assert requoted.overall.flagged == requoted.overall.judged
    escaped = _grounded(  # and as HTML entities (as the same judge wrote &#39;s and &#34;)
        world,
        lambda it: _extraction(it.event.labels[0], html.escape(it.document.text)),
    )
    assert escaped.overall.flagged == escaped.overall.judged
    # ... an invented one does not, nor a quote of the question rather than the document
    invented = _grounded(
        world, lambda it: _extraction(it.event.labels[0], "It resolved YES in the end.")
    )
    assert invented.overall.flagged == 0 and invented.errors == 0
    assert invented.judge_accuracy.sensitivity == 0.0
    asked = _grounded(
        world, lambda it: _extraction(it.event.labels[-1], f"Will {it.event.title} happen?")
    )
    assert asked.overall.flagged == 0
    # a quote with no outcome claimed says nothing
    unclaimed = _grounded(world, lambda it: _extraction("not stated", _sentence(it.document.text)))
    assert unclaimed.overall.flagged == 0


def test_a_grounded_date_at_or_after_the_cutoff_flags(world: World) -> None:
    """ "Looking back on August 10, 2024": the date is in the document, after the cutoff."""
    items = calibration_items(world.dataset, world.documents, world.hindsight_ids, world.evidence)
    looking_back = {it.document.id for it in items if it.document.title.startswith("Looking")}
    assert looking_back

    def read_title(it: CalibrationItem) -> str:
        if it.document.id not in looking_back:
            return _extraction()
        day = datetime.strptime(it.document.title.removeprefix("Looking back on "), "%B %d, %Y")
        return _extraction(date=day.date().isoformat(), date_quote=it.document.title)

    audit = _grounded(world, read_title)
    assert {f.doc_id for f in audit.flagged} == looking_back
    assert audit.judge_accuracy.specificity == 1.0
    # the same phrase quoted, the date given at month precision: its first day is what counts
    month = _grounded(
        world,
        lambda it: (
            _extraction(date=f"{it.cutoff:%Y-%m}", date_quote=it.document.title)
            if it.document.id in looking_back
            else _extraction()
        ),
    )
    assert month.overall.flagged == 0  # the cutoff's own month: not known to be later


def test_dates_count_when_the_document_writes_them(world: World) -> None:
    """Decided in code from the extraction: a date flags when its phrase is in the document,
    names its year and the date (its first day, at month or year precision) is not before the
    cutoff."""
    items = list(
        calibration_items(world.dataset, world.documents, world.hindsight_ids, world.evidence)
    )
    planted_years = [it for it in items if it.leaks and "Year in review" in it.document.title]
    assert planted_years
    title_year = {
        it.document.id: it.document.title.split("(")[1].split("–")[1][:4] for it in planted_years
    }

    def year_in_review(it: CalibrationItem) -> str:
        if it.document.id in title_year:  # "Year in review (2024–2025)": a period ending later
            return _extraction(date=title_year[it.document.id], date_quote=it.document.title)
        return _extraction()

    audit = _grounded(world, year_in_review)
    assert audit.overall.flagged == len(planted_years)
    assert all("mentions" in f.reason for f in audit.flagged)

    def same_year(it: CalibrationItem) -> str:  # the cutoff's own year: not known to be later
        y = it.cutoff.year
        return _extraction(date=str(y), date_quote=f"{it.document.title}")

    assert _grounded(world, same_year).overall.flagged == 0

    def copied_from_question(it: CalibrationItem) -> str:  # a later date the document lacks
        return _extraction(
            date=f"{it.cutoff.year + 1}-01-05", date_quote=f"by January 5, {it.cutoff.year + 1}"
        )

    assert _grounded(world, copied_from_question).overall.flagged == 0

    def before(it: CalibrationItem) -> str:
        day = it.document.timestamp.date()
        return _extraction(date=day.isoformat(), date_quote=it.document.title)

    assert _grounded(world, before).overall.flagged == 0


def test_the_grounded_judge_never_sees_the_outcome(world: World) -> None:
    """The v3 requests of two datasets that differ only in outcomes are byte for byte equal."""
    calib = calibration_items(world.dataset, world.documents, world.hindsight_ids, world.evidence)
    served = _served_from(list(calib))
    docs = {d.id: d for d in world.documents}
    sent = []
    for ds in (world.dataset, _flipped(world.dataset)):
        model = ScriptedModel([_extraction()], cycle=True)
        audit_served(
            served,
            docs,
            ds,
            Judge(model),
            calib,
            run_log="r",
            calibration_name="w",
            prompt=GROUNDED,
        )
        sent.append([r.model_dump_json() for r in model.requests])
    assert sent[0] == sent[1] and len(sent[0]) == 2 * len(calib)
    assert all(GROUNDED not in s for s in sent[0])  # the prompt's text, not its name, is sent


def test_the_audit_records_its_judge_design(world: World) -> None:
    calib = list(
        calibration_items(world.dataset, world.documents, world.hindsight_ids, world.evidence)
    )[:4]
    docs = {d.id: d for d in world.documents}
    v3 = audit_served(
        _served_from(calib),
        docs,
        world.dataset,
        Judge(ScriptedModel([_extraction()], cycle=True)),
        calib,
        run_log="r",
        calibration_name="w",
        prompt=GROUNDED,
    )
    v2 = audit_served(
        _served_from(calib),
        docs,
        world.dataset,
        Judge(ScriptedModel([json.dumps({"reveals_later": False, "reason": "x"})], cycle=True)),
        calib,
        run_log="r",
        calibration_name="w",
        prompt="audit_retrieval.v2",
    )
    assert (v3.prompt, v2.prompt) == (GROUNDED, "audit_retrieval.v2")
    assert v3.decision == "grounded" and v2.decision == "verdict"
    assert v3.errors == v2.errors == 0
    with pytest.raises(ValueError, match=r"audit_retrieval\.v1"):
        audit_served(
            _served_from(calib),
            docs,
            world.dataset,
            Judge(ScriptedModel([_extraction()])),
            calib,
            run_log="r",
            calibration_name="w",
            prompt="zero_shot.v1",
        )
