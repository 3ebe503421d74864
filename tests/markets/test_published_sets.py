"""ForecastBench's published question and resolution sets import as they are: sets without daily
price history get the filters that can be measured on them, an import that keeps nothing prints
its funnel (also under --json) and names what would keep events, and the importer and the
construction audit apply one rule for late closes."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.audit import audit_construction
from pastcast.cli import app
from pastcast.dataset import load_dataset
from pastcast.markets import (
    MarketHistory,
    build_and_save,
    late_closes,
    make_schedule,
)
from pastcast.records import DailyBelief, Event, Resolution

runner = CliRunner()
FIXTURES = Path(__file__).parent / "fixtures"
ROUND = "2025-10-26"


def _round(shared: Path, tmp: Path) -> Path:
    """One round of the published sets (its question set and its resolution set), as a folder
    of the upstream layout."""
    src = shared / "forecastbench"
    question = src / "question_sets" / f"{ROUND}-llm.json"
    resolution = src / "resolution_sets" / f"{ROUND}_resolution_set.json"
    if not question.is_file() or not resolution.is_file():
        pytest.skip(f"the published sets of round {ROUND} are not in {src}")
    root = tmp / "round"
    (root / "question_sets").mkdir(parents=True)
    (root / "resolution_sets").mkdir()
    (root / "question_sets" / question.name).symlink_to(question)
    (root / "resolution_sets" / resolution.name).symlink_to(resolution)
    return root


@pytest.mark.shared_data
def test_a_published_round_imports_with_the_documented_command(
    shared_data_dir: Path, tmp_path: Path
) -> None:
    root = _round(shared_data_dir, tmp_path)
    out = tmp_path / "fb"
    res = runner.invoke(
        app, ["data", "import", "forecastbench", str(root), "--out", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["events"] > 10 and got["steps"] > got["events"]
    stages = {s["stage"]: s for s in got["funnel"]}
    # single published prices: the history and movement filters cannot be measured, and say so
    assert stages["price history"]["removed"] == 0
    assert "no daily price history" in stages["price history"]["note"]
    # the importer and the audit agree on late closes
    ds = load_dataset(out)
    assert ds.collected_at is not None
    audit = audit_construction([ds], [], permutations=20, draws=100)
    assert audit.late_closes == ()
    assert not any("closes after" in f for f in audit.findings())


def test_a_failed_import_prints_its_funnel_and_what_would_keep_events(tmp_path: Path) -> None:
    src = FIXTURES / "fb_upstream"
    args = ["data", "import", "forecastbench", str(src), "--out", str(tmp_path / "d")]
    args += ["--filter", "min_lifetime_days=100000"]
    res = runner.invoke(app, [*args, "--json"])
    assert res.exit_code == 2
    got = json.loads(res.stdout)
    assert got["events"] == 0 and "no events are left" in got["error"]
    stages = {s["stage"]: s for s in got["funnel"]}
    assert stages["lifetime"]["remaining"] == 0 and stages["lifetime"]["removed"] > 0
    assert any("min_lifetime_days" in r for r in got["relax"])
    assert res.stderr.count("\n") == 1 and "min_lifetime_days" in res.stderr
    assert not (tmp_path / "d").exists()
    text = runner.invoke(app, args)
    assert text.exit_code == 2
    assert "lifetime" in text.stdout and "min_lifetime_days" in text.stderr


def _history(eid: str, close_day: int, resolve_day: int) -> MarketHistory:
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    event = Event(
        id=eid,
        title=f"Will {eid} happen",
        kind="binary",
        labels=("Yes", "No"),
        open_time=t0,
        close_time=t0 + timedelta(days=close_day),
    )
    resolution = Resolution(event_id=eid, label="Yes", resolved_at=t0 + timedelta(days=resolve_day))
    beliefs = tuple(
        DailyBelief(
            event_id=eid,
            day=(t0 + timedelta(days=d)).date(),
            probs={"Yes": 0.3 + 0.01 * d, "No": 0.7 - 0.01 * d},
        )
        for d in range(resolve_day)
    )
    return MarketHistory(event, resolution, beliefs)


def test_the_importer_and_the_audit_apply_one_late_close_rule(tmp_path: Path) -> None:
    # collected on day 60: "late" closes after it (resolved early), "kept" closes on day 50,
    # after the last resolution (day 40) of the events kept but before the collection
    collected = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(days=60)
    histories = [_history("kept", 50, 40), _history("late", 90, 30), _history("plain", 30, 30)]
    assert late_closes([h.event for h in histories], collected) == ("late",)
    ds, report = build_and_save(
        histories,
        tmp_path / "d",
        name="t",
        schedule=make_schedule("dojo", start_at_first_belief=True),
        collected_at=collected,
    )
    stage = next(s for s in report.funnel if s.stage == "closes before collection")
    assert stage.removed == 1 and {e.id for e in ds.events} == {"kept", "plain"}
    loaded = load_dataset(tmp_path / "d")
    assert loaded.collected_at == collected
    audit = audit_construction([loaded], [], permutations=20, draws=100)
    assert audit.late_closes == ()  # the rule the importer applied, with the same collection
    # without a recorded collection the audit takes the last resolution as the earliest it
    # could have been, with the same rule
    unrecorded = audit_construction(
        [replace(loaded, collected_at=None)], [], permutations=20, draws=100
    )
    assert unrecorded.late_closes == ("kept",)
