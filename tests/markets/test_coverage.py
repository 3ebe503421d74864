"""Corpus coverage of forecast steps: per split, in `data info --corpus` and `run` (a warning,
and `--covered-only` to play only the covered steps)."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import pytest
from markets_factories import at
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.dataset import Dataset, save_dataset, with_content_id
from pastcast.markets import step_coverage
from pastcast.markets._coverage import corpus_days
from pastcast.records import Document, Event, Resolution, StepSpec
from pastcast.runlog import read_run_log

runner = CliRunner()


def _event(eid: str) -> Event:
    return Event(
        id=eid,
        title=f"Will {eid} happen?",
        kind="binary",
        labels=("Yes", "No"),
        open_time=at("2025-05-01"),
        close_time=at("2025-09-01"),
    )


def _dataset() -> Dataset:
    """Train steps inside the corpus (June), eval steps after it ends (June 30)."""
    events = (_event("a"), _event("b"), _event("c"))
    steps = (
        StepSpec(event_id="a", step_index=0, cutoff=at("2025-06-10")),
        StepSpec(event_id="a", step_index=1, cutoff=at("2025-06-20")),
        StepSpec(event_id="b", step_index=0, cutoff=at("2025-07-05")),  # 5 days after: covered
        StepSpec(event_id="b", step_index=1, cutoff=at("2025-07-20")),
        StepSpec(event_id="c", step_index=0, cutoff=at("2025-08-01")),
    )
    ds = Dataset(
        "cov",
        events,
        {e.id: Resolution(event_id=e.id, label="No", resolved_at=at("2025-09-01")) for e in events},
        {},
        steps,
        {"a": "train", "b": "eval", "c": "eval"},
    )
    return with_content_id(ds, "cov")


def _docs() -> list[Document]:
    day0 = date(2025, 6, 1)
    return [
        Document(
            id=f"d{i}",
            timestamp=at((day0 + timedelta(days=i)).isoformat()) + timedelta(hours=12),
            title=f"News {i}",
            text=f"Something happened on day {i}.",
        )
        for i in range(30)
    ]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cov") / "index"
    EmbeddedIndex.build(_docs(), out)
    return out


def test_steps_after_the_corpus_ends_are_uncovered(corpus: Path) -> None:
    backend = EmbeddedIndex.open(corpus)
    assert corpus_days(backend) == (30, date(2025, 6, 1), date(2025, 6, 30))
    report = step_coverage(_dataset(), backend)
    by_split = {s.split: (s.steps, s.covered) for s in report.splits}
    assert by_split == {"train": (2, 2), "eval": (3, 1)}
    assert report.uncovered == {("b", 1), ("c", 0)}
    (warning,) = report.warnings()
    assert warning.startswith("corpus coverage: eval: 2 of 3 steps (67%)")
    assert "2025-06-01 .. 2025-06-30" in warning
    wide = step_coverage(_dataset(), backend, window_days=21)
    assert wide.uncovered == {("c", 0)}


def test_an_empty_corpus_covers_nothing(tmp_path: Path) -> None:
    backend = EmbeddedIndex.build([], tmp_path / "empty")
    report = step_coverage(_dataset(), backend)
    assert len(report.uncovered) == 5 and report.last_day is None
    assert "the corpus is empty" in report.warnings()[0]


def test_cli_info_reports_coverage_per_split(corpus: Path, tmp_path: Path) -> None:
    save_dataset(_dataset(), tmp_path / "ds")
    res = runner.invoke(
        app, ["data", "info", str(tmp_path / "ds"), "--corpus", str(corpus), "--json"]
    )
    assert res.exit_code == 0, res.output
    cov = json.loads(res.stdout)["coverage"]
    assert cov["by_split"]["eval"] == {"steps": 3, "covered": 1, "uncovered": 2}
    assert cov["last_day"] == "2025-06-30" and cov["window_days"] == 7
    assert "warning: corpus coverage: eval: 2 of 3" in res.stderr
    plain = runner.invoke(app, ["data", "info", str(tmp_path / "ds"), "--corpus", str(corpus)])
    assert "eval" in plain.stdout and "1 of 3" in plain.stdout
    bad = runner.invoke(
        app, ["data", "info", str(tmp_path / "ds"), "--corpus", str(tmp_path / "nope")]
    )
    assert bad.exit_code == 2 and bad.stderr.startswith("error: --corpus")


def test_cli_run_warns_and_can_play_only_covered_steps(corpus: Path, tmp_path: Path) -> None:
    save_dataset(_dataset(), tmp_path / "ds")
    base = ["run", "--agent", "uniform", "--dataset", str(tmp_path / "ds"), "--corpus", str(corpus)]
    all_steps = runner.invoke(app, [*base, "--out", str(tmp_path / "all.jsonl")])
    assert all_steps.exit_code == 0, all_steps.output
    assert "warning: corpus coverage: eval: 2 of 3 steps" in all_steps.stderr
    assert len(read_run_log(tmp_path / "all.jsonl").steps) == 5
    covered = runner.invoke(app, [*base, "--covered-only", "--out", str(tmp_path / "c.jsonl")])
    assert covered.exit_code == 0, covered.output
    steps = read_run_log(tmp_path / "c.jsonl").steps
    assert {(s.event_id, s.step_index) for s in steps} == {("a", 0), ("a", 1), ("b", 0)}
    no_corpus = runner.invoke(
        app,
        ["run", "--agent", "uniform", "--dataset", str(tmp_path / "ds"), "--covered-only"]
        + ["--out", str(tmp_path / "n.jsonl")],
    )
    assert no_corpus.exit_code == 2 and "--covered-only needs a corpus" in no_corpus.stderr
    assert not (tmp_path / "n.jsonl").exists()


def test_a_plan_run_warns_about_coverage_too(corpus: Path, tmp_path: Path) -> None:
    save_dataset(_dataset(), tmp_path / "ds")
    plan = tmp_path / "plan.toml"
    plan.write_text(
        f'dataset = "{tmp_path / "ds"}"\nout = "{tmp_path / "p.jsonl"}"\n'
        f'[corpus]\nspec = "{corpus}"\n[[agents]]\nname = "uniform"\n'
    )
    res = runner.invoke(app, ["run", "--config", str(plan)])
    assert res.exit_code == 0, res.output
    assert "warning: corpus coverage: eval: 2 of 3 steps" in res.stderr
