"""The market reference's age: every step records when the market belief it is graded against
was public and how old it was at the cutoff; the reference is never a price dated at or after
the cutoff; scores, exports and reports carry the age and can restrict or group by it."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from _tiny import ListBackend
from pastcast.agents import agent_spec
from pastcast.cli._app import app
from pastcast.cutoff import end_of_day
from pastcast.dataset import Dataset
from pastcast.records import DailyBelief, Event, Forecast, Resolution, StepSpec
from pastcast.runlog import StepRecord, read_run_log, read_step_columns
from pastcast.runner import RunConfig, grade_step, run_benchmark

runner = CliRunner()
T0 = datetime(2024, 3, 1, tzinfo=UTC)


def _event(eid: str) -> Event:
    return Event(
        id=eid,
        title=f"Will {eid} happen",
        kind="binary",
        labels=("Yes", "No"),
        open_time=T0,
        close_time=T0 + timedelta(days=40),
    )


def _belief(eid: str, day: date, p: float) -> DailyBelief:
    return DailyBelief(event_id=eid, day=day, probs={"Yes": p, "No": 1.0 - p})


def aged_dataset() -> Dataset:
    """``ev-stale``: one price, on 2024-03-01 (a published set's freeze value); ``ev-daily``:
    a price every day. Steps at midnight and at noon."""
    events = (_event("ev-stale"), _event("ev-daily"))
    res = {
        e.id: Resolution(event_id=e.id, label="Yes", resolved_at=T0 + timedelta(days=40))
        for e in events
    }
    beliefs = {
        "ev-stale": (_belief("ev-stale", date(2024, 3, 1), 0.3),),
        "ev-daily": tuple(
            _belief("ev-daily", date(2024, 3, 1) + timedelta(days=d), 0.2 + 0.01 * d)
            for d in range(39)
        ),
    }
    steps = (
        StepSpec(event_id="ev-stale", step_index=0, cutoff=T0 + timedelta(days=4)),
        StepSpec(event_id="ev-stale", step_index=1, cutoff=T0 + timedelta(days=15)),
        StepSpec(event_id="ev-daily", step_index=0, cutoff=T0 + timedelta(days=4)),
        StepSpec(event_id="ev-daily", step_index=1, cutoff=T0 + timedelta(days=15, hours=12)),
    )
    return Dataset("aged-v1", events, res, beliefs, steps)


def test_the_grading_records_when_the_market_belief_was_public_and_its_age() -> None:
    ds = aged_dataset()
    got = {(s.event_id, s.step_index): grade_step(ds, s) for s in ds.steps}
    stale = got[("ev-stale", 1)]
    assert stale.market_at == end_of_day(date(2024, 3, 1))
    assert stale.market_age_days == pytest.approx(14.0)
    assert got[("ev-stale", 0)].market_age_days == pytest.approx(3.0)
    fresh = got[("ev-daily", 0)]  # the day before a midnight cutoff: as fresh as a day can be
    assert fresh.market_at == end_of_day(date(2024, 3, 4))
    assert fresh.market_age_days == pytest.approx(0.0)
    noon = got[("ev-daily", 1)]  # the cutoff's own day has not ended: the day before
    assert noon.market_at == end_of_day(date(2024, 3, 15))
    assert noon.market_age_days == pytest.approx(0.5)
    assert noon.market_probs == pytest.approx({"Yes": 0.2 + 0.01 * 14, "No": 0.8 - 0.01 * 14})


def test_a_price_dated_at_or_after_the_cutoff_is_never_the_reference() -> None:
    ds = aged_dataset()
    eid = "ev-daily"
    for hours in range(0, 24 * 20, 5):
        cutoff = T0 + timedelta(days=1, hours=hours)
        g = grade_step(ds, StepSpec(event_id=eid, step_index=0, cutoff=cutoff))
        assert g.market_at is not None and g.market_at < cutoff, cutoff
        assert g.market_age_days is not None and g.market_age_days >= 0.0
        used = next(b for b in ds.beliefs[eid] if end_of_day(b.day) == g.market_at)
        assert g.market_probs == used.probs
        # the belief used is the latest whose whole day ended by the cutoff
        later = [b for b in ds.beliefs[eid] if b.day > used.day]
        assert all(end_of_day(b.day) >= cutoff for b in later)
    # a step record whose reference is not before its cutoff is refused
    step = ds.steps[2]
    g = grade_step(ds, step)
    record = _record(step, g)
    for at in (step.cutoff, step.cutoff + timedelta(days=1)):
        bad = g.model_copy(update={"market_at": at, "market_age_days": 0.0})
        with pytest.raises(ValidationError, match="market"):
            StepRecord.model_validate({**record.model_dump(), "grading": bad.model_dump()})
    wrong_age = g.model_copy(update={"market_age_days": 5.0})
    with pytest.raises(ValidationError, match="market"):
        StepRecord.model_validate({**record.model_dump(), "grading": wrong_age.model_dump()})


def _record(step: StepSpec, grading: object) -> StepRecord:
    return StepRecord.model_validate(
        {
            "run_id": "r",
            "agent": "uniform",
            "event_id": step.event_id,
            "step_index": step.step_index,
            "cutoff": step.cutoff,
            "forecast": Forecast(probs={"Yes": 0.5, "No": 0.5}),
            "episode": {},
            "grading": grading,
            "scores": {"brier": 0.5, "accuracy": 0.5, "log_loss": 0.69},
        }
    )


@pytest.fixture(scope="module")
def aged_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("aged") / "run.jsonl"
    config = RunConfig(agents=(agent_spec("uniform"), agent_spec("market")))
    run_benchmark(aged_dataset(), ListBackend(()), config, out, progress=False)
    return out


def _json(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_the_log_and_its_columns_carry_each_steps_market_age(aged_log: Path) -> None:
    steps = read_run_log(aged_log).steps
    ages = {(s.event_id, s.step_index): s.grading.market_age_days for s in steps}
    assert ages[("ev-stale", 1)] == pytest.approx(14.0)
    assert ages[("ev-daily", 1)] == pytest.approx(0.5)
    cols = read_step_columns(aged_log, ("event_id", "step_index", "market_age_days", "market_at"))
    table = cols.table.to_pydict()
    logged = zip(table["event_id"], table["step_index"], table["market_age_days"], strict=True)
    assert sorted(logged) == sorted(
        (s.event_id, s.step_index, s.grading.market_age_days) for s in steps
    )
    assert set(table["market_at"]) == {s.grading.market_at for s in steps}


def test_score_json_carries_the_market_age_of_the_forecasts(aged_log: Path) -> None:
    got = _json("score", str(aged_log), "--by", "agent", "--bootstrap", "50")
    (uniform,) = [d for d in got["details"] if d["agent"] == "uniform"]
    age = uniform["references"]["market_age_days"]
    assert age["n"] == 4
    assert age["median"] == pytest.approx((0.5 + 3.0) / 2)
    assert age["max"] == pytest.approx(14.0)
    assert sorted(age["forecasts"]) == pytest.approx([0.0, 0.5, 3.0, 14.0])


def test_score_groups_and_restricts_by_market_age(aged_log: Path) -> None:
    got = _json("score", str(aged_log), "--by", "agent,market_age", "--bootstrap", "50")
    groups = {(g["agent"], g["market_age"]): g for g in got["groups"]}
    assert {k[1] for k in groups} == {"<1d", "1-7d", "7-30d"}
    assert groups[("uniform", "<1d")]["n_recorded"] == 2
    assert groups[("uniform", "7-30d")]["n_recorded"] == 1
    fresh = _json(
        "score", str(aged_log), "--by", "agent", "--max-market-age", "1", "--bootstrap", "50"
    )
    assert {g["agent"]: g["n_recorded"] for g in fresh["groups"]} == {"uniform": 2, "market": 2}


def test_score_notes_a_stale_market_reference(aged_log: Path) -> None:
    # median age 1.75 days: under the default threshold (7 days), over one of 1 day
    quiet = runner.invoke(app, ["score", str(aged_log), "--bootstrap", "50"])
    assert quiet.exit_code == 0, quiet.output
    assert "days old" not in quiet.stderr
    noted = runner.invoke(
        app, ["score", str(aged_log), "--bootstrap", "50", "--market-age-warning", "1"]
    )
    assert noted.exit_code == 0, noted.output
    lines = [ln for ln in noted.stderr.splitlines() if "days old" in ln]
    assert len(lines) == 1, noted.stderr
    assert lines[0].startswith("note: ") and "median" in lines[0] and "1.8 days old" in lines[0]


def test_the_table_export_carries_each_forecasts_market_age(aged_log: Path, tmp_path: Path) -> None:
    out = tmp_path / "forecasts.parquet"
    res = runner.invoke(app, ["export", "table", str(aged_log), "--out", str(out)])
    assert res.exit_code == 0, res.output
    table = pq.read_table(out).to_pydict()
    got = {
        (e, s, a): (age, at)
        for e, s, a, age, at in zip(
            table["event_id"],
            table["step_index"],
            table["agent"],
            table["market_age_days"],
            table["market_at"],
            strict=True,
        )
    }
    assert got[("ev-stale", 1, "uniform")][0] == pytest.approx(14.0)
    assert got[("ev-stale", 1, "uniform")][1] == end_of_day(date(2024, 3, 1))
    assert got[("ev-daily", 0, "market")][0] == pytest.approx(0.0)


def test_the_dashboard_says_how_old_the_market_at_cutoff_was(aged_log: Path) -> None:
    from fastapi.testclient import TestClient

    from pastcast.app import dashboard

    client = TestClient(dashboard([aged_log]).app)
    board = client.get("/")
    assert board.status_code == 200
    assert "median 1.8 days old, up to 14 days" in board.text
    event = client.get("/event/ev-stale")
    assert (
        event.status_code == 200 and "(14 days old)" in event.text and "(3 days old)" in event.text
    )
    steps = read_run_log(aged_log).steps
    i = next(k for k, s in enumerate(steps) if (s.event_id, s.step_index) == ("ev-daily", 1))
    step = client.get(f"/step/{i}")
    assert step.status_code == 200 and "(0.5 days old)" in step.text


def test_the_report_tables_say_which_market_alpha_is_measured_against(aged_log: Path) -> None:
    from pastcast.app import score_runs
    from pastcast.reports import calibration_table, main_table, to_markdown

    card = score_runs([aged_log], bootstrap=50, max_market_age=5).card
    main, cal = to_markdown(main_table(card)), to_markdown(calibration_table(card))
    assert "market age (d)" in main
    # the 14-day-old references left out by the restriction
    assert "median 0.5 days old, up to 3 days" in main
    assert "median 0.5 days old, up to 3 days" in cal
