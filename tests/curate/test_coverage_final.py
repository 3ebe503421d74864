"""The coverage probe as Hindcast runs it: a final judge step reads both sides' tallies and
gives each side's support and the evidence quality, never seeing the outcome; the contrastive
score c in [-1, 1] and the label come from its reply and the outcome afterwards; probed at the
close date (never after the last forecast date). The arithmetic rule stays the default."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from curate_judges import world_judge
from typer.testing import CliRunner

from pastcast.app import CurationPlan, with_preset
from pastcast.app import curate_dataset as curate_plan
from pastcast.cli import app
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.curate import CurationConfig, Judge, Retriever, curate_dataset
from pastcast.curate._coverage import CoverageProbe
from pastcast.dataset import Dataset, read_metadata
from pastcast.models import ChatRequest, ScriptedModel
from pastcast.records import Document, Event, Resolution
from pastcast.world import World

T0 = datetime(2025, 3, 1, tzinfo=UTC)
EVENT = Event(
    id="e1",
    title="Will the harbour bridge reopen by June",
    kind="binary",
    labels=("Yes", "No"),
    open_time=T0,
    close_time=T0 + timedelta(days=60),
)
DOCS = tuple(
    Document(id=f"d{i}", timestamp=T0 + timedelta(days=i), title="Harbour bridge", text=t)
    for i, t in enumerate(
        ["The harbour bridge repairs are ahead of schedule.", "Bridge reopening set for May."]
    )
)


def _probe_judge(request: ChatRequest) -> str:
    kind = (request.response_schema or {})["title"]
    if kind == "curate_coverage_queries":
        return json.dumps({s: [f"harbour bridge {s} {i}" for i in range(2)] for s in ("Yes", "No")})
    if kind == "curate_coverage_labels":
        side = "Yes" if "The outcome being probed: Yes" in request.messages[-1].content else "No"
        return json.dumps({"labels": ["strong", "weak"] if side == "Yes" else ["irrelevant"] * 2})
    assert kind == "curate_coverage_final"
    return json.dumps({"support": {"Yes": 0.8, "No": 0.1}, "evidence_quality": "strong"})


def _probe(final: str) -> tuple[CoverageProbe, ScriptedModel]:
    model = ScriptedModel(responder=_probe_judge)
    retriever = Retriever([EmbeddedIndex.in_memory(DOCS)])
    return CoverageProbe(Judge(model), retriever, n_queries=2, final=final), model  # type: ignore[arg-type]


def test_the_final_judge_gives_c_and_the_label_by_hand() -> None:
    at = T0 + timedelta(days=30)
    results = {}
    sent = {}
    for realised in ("Yes", "No"):
        probe, model = _probe("judge")
        result, error = probe.probe(EVENT, realised, at)
        assert result is not None, error
        results[realised] = result
        sent[realised] = [r.model_dump_json() for r in model.requests]
    # c = support of what happened minus the best other side's.
    assert results["Yes"].score == pytest.approx(0.7) and results["Yes"].label == "strong"
    assert results["No"].score == pytest.approx(-0.7) and results["No"].label == "none"
    assert results["Yes"].support == (("Yes", 0.8), ("No", 0.1))
    assert results["Yes"].final == "judge" and results["Yes"].quality == "strong"
    # The outcome never reached a request: the same calls whatever happened.
    assert sent["Yes"] == sent["No"] and len(sent["Yes"]) == 4
    final = json.loads(sent["Yes"][-1])["messages"][-1]["content"]
    assert "Outcome Yes: 1 strong, 1 weak, 0 irrelevant, 0 contra; tally 3" in final
    assert "Outcome No: 0 strong, 0 weak, 2 irrelevant, 0 contra; tally 0" in final


def test_the_arithmetic_rule_stays_the_default_with_no_final_call() -> None:
    probe, model = _probe("arithmetic")
    result, _ = probe.probe(EVENT, "Yes", T0 + timedelta(days=30))
    assert result is not None and result.final == "arithmetic" and result.support == ()
    # sides: (2 + 1 + 2) / 6 and (0 + 2) / 6
    assert result.score == pytest.approx(5 / 6 - 2 / 6) and result.label == "strong"
    assert len(model.requests) == 3
    assert CurationConfig().coverage_final == "arithmetic"


def test_an_unusable_final_reply_is_a_recorded_error() -> None:
    def bad(request: ChatRequest) -> str:
        if (request.response_schema or {})["title"] == "curate_coverage_final":
            return json.dumps({"support": {"Yes": 2.0, "No": 0.1}, "evidence_quality": "strong"})
        return _probe_judge(request)

    probe = CoverageProbe(
        Judge(ScriptedModel(responder=bad)),
        Retriever([EmbeddedIndex.in_memory(DOCS)]),
        n_queries=2,
        final="judge",
    )
    result, error = probe.probe(EVENT, "Yes", T0 + timedelta(days=30))
    assert result is None and "support.Yes" in error


def _counterfactual(ds: Dataset) -> Dataset:
    resolutions = {}
    for e in ds.events:
        res = ds.resolutions[e.id]
        other = next(label for label in reversed(e.labels) if label != res.label)
        resolutions[e.id] = Resolution(event_id=e.id, label=other, resolved_at=res.resolved_at)
    return replace(ds, resolutions=resolutions, beliefs={})


def test_the_final_step_never_sees_the_outcome(world: World) -> None:
    """Two datasets that differ only in outcomes get byte-identical requests, the final step's
    included, probed at the close date."""
    index = EmbeddedIndex.in_memory(world.documents)
    config = CurationConfig(
        topics="source", coverage_final="judge", coverage_at="close", balance=False
    )
    sent = []
    probed = []
    for ds in (world.dataset, _counterfactual(world.dataset)):
        model = ScriptedModel(responder=world_judge)
        result = curate_dataset(ds, Retriever([index]), Judge(model), config)
        sent.append([r.model_dump_json() for r in model.requests])
        probed.append({e.event_id: e.coverage for e in result.events if e.coverage is not None})
    finals = [r for r in sent[0] if "curate_coverage_final" in r]
    assert finals and sent[0] == sent[1]
    assert "resolved to" not in "\n".join(finals)
    # The same support read against the other outcome: c changes sign with it.
    for eid, cov in probed[0].items():
        other = probed[1][eid]
        assert cov.support == other.support and cov.final == "judge"
        if cov.score > 0:
            assert other.score < 0 and other.label == "none"
    # At the close date, never after the event's last forecast date.
    last = {}
    for s in world.dataset.steps:
        last[s.event_id] = max(last.get(s.event_id, s.cutoff), s.cutoff)
    for eid, cov in probed[0].items():
        event = world.dataset.event(eid)
        assert cov.probed_at == min(event.close_time, last[eid])


def test_data_curate_with_the_hindcast_preset(
    world_index_dir: Path, tmp_path: Path, judge_provider: list[ScriptedModel]
) -> None:
    """``--preset hindcast`` sets the paper's curation (the judge step at the close date over
    the whole archive); an option given is set over it."""
    out = tmp_path / "curated"
    args = ["data", "curate", "world:0", "--corpus", str(world_index_dir)]
    args += ["--judge", "curate-test:world", "--out", str(out), "--retrieval", "bm25"]
    args += ["--preset", "hindcast", "--keep-coverage", "weak", "--no-balance", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    plan = read_metadata(out)["curation"]["plan"]  # the plan as merged with the preset
    config = plan["config"]
    assert (config["coverage_final"], config["coverage_at"]) == ("judge", "close")
    assert config["coverage_queries"] == 5 and config["keep_coverage"] == "weak"
    assert plan["window_days"] is None and plan["preset"] == "hindcast"
    finals = [r for r in judge_provider[0].requests if "curate_coverage_final" in str(r)]
    assert finals
    # Python's record under the same preset is the one the command line recorded.
    mine = CurationPlan(
        dataset="world:0",
        corpus=world_index_dir,
        judge="curate-test:world",
        out=tmp_path / "py",
        retrieval="bm25",
        config=CurationConfig(keep_coverage="weak", balance=False),
    )
    curate_plan(with_preset(mine, "hindcast"))
    python = read_metadata(tmp_path / "py")["curation"]["plan"]
    assert {**python, "out": str(out)} == plan
    bad = CliRunner().invoke(app, [*args[:-1], "--preset", "nope"])
    assert bad.exit_code == 2 and "unknown 'nope'" in bad.output
