"""Text versions: a question republished in snapshots (ForecastBench's question sets) is shown at
each step as the latest snapshot published before the cutoff; steps with none are flagged."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from markets_factories import at, binary

from pastcast.audit import audit_construction
from pastcast.dataset import Dataset, load_dataset, save_dataset, with_content_id
from pastcast.env import ForecastEnv, check_env
from pastcast.markets import build_dataset, make_schedule
from pastcast.markets.sources import collected_at, read_forecastbench, read_text_versions
from pastcast.records import StepSpec, TextVersion


def _versions() -> tuple[TextVersion, ...]:
    return (
        TextVersion(
            event_id="q", published_at=at("2025-06-03T23:59:59"), title="Old title?",
            description="old background", origin="2025-06-03-llm.json",
        ),
        TextVersion(
            event_id="q", published_at=at("2025-06-07T23:59:59"), title="New title?",
            description="new background", origin="2025-06-07-llm.json",
        ),
    )  # fmt: skip


def _dataset() -> Dataset:
    h = binary("q", [0.3, 0.4, 0.5, 0.6, 0.5, 0.4, 0.5, 0.6, 0.7, 0.6], close="2025-06-12")
    steps = tuple(
        StepSpec(event_id="q", step_index=i, cutoff=at(day))
        for i, day in enumerate(["2025-06-03", "2025-06-05", "2025-06-08"])
    )
    return Dataset(
        "t", (h.event,), {"q": h.resolution}, {"q": h.beliefs}, steps, texts={"q": _versions()}
    )


def test_each_step_sees_the_latest_snapshot_before_its_cutoff() -> None:
    ds = _dataset()
    first, second, third = ds.steps
    # 06-03 00:00: the first snapshot (published at the end of 06-03) is not out yet
    assert ds.text_at("q", first.cutoff) is None
    assert ds.event_at("q", first.cutoff).title == "Old title?"  # the earliest, and flagged
    assert ds.event_at("q", second.cutoff).title == "Old title?"
    assert ds.event_at("q", third.cutoff).description == "new background"
    assert ds.unversioned_steps() == (first,)
    env = ForecastEnv(ds, None)
    assert env.reset(second).question.title == "Old title?"
    assert env.reset(third).question.title == "New title?"
    check_env(env, third)  # raises on a broken contract (the question is the snapshot)


def test_snapshots_round_trip_and_leave_other_datasets_unchanged(tmp_path: Path) -> None:
    ds = with_content_id(_dataset(), "t")
    save_dataset(ds, tmp_path / "ds")
    back = load_dataset(tmp_path / "ds")
    assert back.texts == ds.texts and back.id == ds.id
    plain = with_content_id(replace(_dataset(), texts={}), "t")
    assert plain.id != ds.id
    save_dataset(plain, tmp_path / "plain")
    assert not (tmp_path / "plain" / "texts.parquet").exists()
    assert load_dataset(tmp_path / "plain").texts == {}


def test_the_build_drops_steps_without_a_snapshot_unless_asked() -> None:
    h = binary("q", [0.3, 0.4, 0.5, 0.6, 0.5, 0.4, 0.5, 0.6, 0.7, 0.6], close="2025-06-12")
    lookback = make_schedule("causal-lookback")  # 06-03, 06-06, 06-09, 06-11
    texts = {"q": _versions()}
    ds, report = build_dataset([h], name="t", schedule=lookback, texts=texts)
    assert [s.cutoff.day for s in ds.steps] == [6, 9, 11]
    assert [s.step_index for s in ds.steps] == [0, 1, 2]
    stage = {s.stage: s for s in report.funnel}["text snapshots"]
    assert stage.removed == 0 and stage.note.startswith("1 of 4 steps dropped")
    kept, _ = build_dataset([h], name="t", schedule=lookback, texts=texts, keep_unversioned=True)
    assert [s.cutoff.day for s in kept.unversioned_steps()] == [3]
    other = {"elsewhere": (_versions()[0].model_copy(update={"event_id": "elsewhere"}),)}
    none, report = build_dataset([h], name="t", schedule=lookback, texts=other)
    assert none.events == () and {s.stage: s for s in report.funnel}["text snapshots"].removed
    plain, report = build_dataset([h], name="t", schedule=lookback, texts={})  # no snapshots
    assert len(plain.steps) == 4 and "text snapshots" not in {s.stage for s in report.funnel}


def test_a_snapshot_of_an_unknown_event_is_refused() -> None:
    with pytest.raises(ValueError, match="text version of unknown event 'x'"):
        replace(_dataset(), texts={"x": (_versions()[0].model_copy(update={"event_id": "x"}),)})


def test_the_construction_audit_flags_steps_without_a_snapshot() -> None:
    audit = audit_construction([_dataset()], [], draws=100)
    assert audit.unversioned_steps == ("q#0",)
    assert "step q#0: no snapshot of the question text published before its cutoff" in (
        audit.findings()
    )


def _question_set(root: Path, due: str, text: str) -> None:
    questions = [
        {
            "id": "m1", "source": "polymarket", "question": f"Will it happen? ({text})",
            "background": f"<p>{text} background</p>", "resolution_criteria": "criteria",
            "market_info_resolution_criteria": "N/A",
        },
        {"id": "x", "source": "acled", "question": "not a market"},
    ]  # fmt: skip
    folder = root / "question_sets"
    folder.mkdir(parents=True, exist_ok=True)
    payload = {"forecast_due_date": due, "question_set": f"{due}-llm.json", "questions": questions}
    (folder / f"{due}-llm.json").write_text(json.dumps(payload))


def test_question_sets_become_text_versions(tmp_path: Path) -> None:
    _question_set(tmp_path, "2025-01-05", "first")
    _question_set(tmp_path, "2025-02-02", "first")  # unchanged: no new version
    _question_set(tmp_path, "2025-03-02", "second")
    versions = read_text_versions(tmp_path)
    assert list(versions) == ["polymarket:m1"]
    first, second = versions["polymarket:m1"]
    assert first.published_at == datetime(2025, 1, 5, 23, 59, 59, 999999, tzinfo=UTC)
    assert first.title == "Will it happen? (first)" and first.description == "first background"
    assert first.resolution_criteria == "criteria" and first.origin == "2025-01-05-llm.json"
    assert second.published_at.date().isoformat() == "2025-03-02"


def test_collection_time_is_the_last_day_with_data(tmp_path: Path) -> None:
    assert collected_at(tmp_path) is None
    _question_set(tmp_path, "2025-01-05", "first")
    assert collected_at(tmp_path) == datetime(2025, 1, 5, 23, 59, 59, 999999, tzinfo=UTC)
    derived = tmp_path / "derived"
    derived.mkdir()
    rows = ["source,id,date,value", "polymarket,m1,2025-02-01,0.4", "polymarket,m1,2025-02-03,1.0"]
    (derived / "daily_values.csv").write_text("\n".join(rows) + "\n")
    assert collected_at(tmp_path) == datetime(2025, 2, 3, 23, 59, 59, 999999, tzinfo=UTC)


@pytest.mark.shared_data
def test_real_forecastbench_steps_see_their_snapshot(shared_data_dir: Path) -> None:
    root = shared_data_dir / "forecastbench"
    versions = read_text_versions(root)
    assert sum(len({v.description for v in vs}) > 1 for vs in versions.values()) > 10
    histories = read_forecastbench(root).histories
    schedule = make_schedule("causal-dojo", start_at_first_belief=True)
    ds, report = build_dataset(histories, name="fb", schedule=schedule, texts=versions)
    stage = next(s for s in report.funnel if s.stage == "text snapshots")
    assert int(stage.note.split()[0]) > 0 and "no snapshot of the question's text" in stage.note
    assert set(ds.texts) <= {e.id for e in ds.events} and ds.texts
    assert ds.unversioned_steps() == ()  # dropped at the build
    kept, _ = build_dataset(
        histories, name="fb", schedule=schedule, texts=versions, keep_unversioned=True
    )
    assert len(kept.unversioned_steps()) == int(stage.note.split()[0])
    env = ForecastEnv(ds, None)
    for step in ds.steps:
        view = env.reset(step).question
        snap = ds.text_at(step.event_id, step.cutoff)
        if snap is not None:
            assert snap.published_at < step.cutoff and view.title == snap.title


def test_a_rescheduled_dataset_keeps_its_snapshots() -> None:
    from pastcast.runner import reschedule

    again = reschedule(_dataset(), "causal-lookback")
    assert again.texts == _dataset().texts and again.steps != _dataset().steps
