"""Every forecast a run log holds is finite, in [0, 1] once normalised, or unusable with its
reason: whoever made it (an in-process plugin, an agent behind the tool server) and however old
the log it is read from."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pyarrow.json as paj
import pytest

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.agents import agent_spec, register_agent
from pastcast.env import Episode
from pastcast.records import Forecast
from pastcast.runlog import read_run_log, step_schema
from pastcast.runner import RunConfig, run_benchmark
from pastcast.scoring import normalize, score_step

HUGE = {"Yes": 1e308, "No": 1e308}


def test_huge_finite_probabilities_are_scaled_without_overflow() -> None:
    forecast = Forecast(probs=HUGE)
    assert forecast.usable and forecast.probs == {"Yes": 0.5, "No": 0.5}
    assert normalize(HUGE) == {"Yes": 0.5, "No": 0.5}
    assert normalize({"a": 1e308, "b": 1e308, "c": 0.0}) == {"a": 0.5, "b": 0.5, "c": 0.0}


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity", "nan", math.nan, math.inf, -0.5])
def test_a_non_finite_or_negative_probability_makes_the_forecast_unusable(bad: object) -> None:
    forecast = Forecast.model_validate({"probs": {"Yes": bad, "No": 0.5}})
    assert not forecast.usable and forecast.failure_reason == "invalid_probability"
    assert forecast.probs == {} and "Yes=" in forecast.raw_text


def test_an_unusable_forecast_keeps_its_reason_and_holds_no_nan() -> None:
    forecast = Forecast(probs={"Yes": math.nan}, usable=False, failure_reason="unknown_labels")
    assert forecast.failure_reason == "unknown_labels" and forecast.probs == {}


def test_a_usable_forecast_without_mass_is_unusable() -> None:
    forecast = Forecast(probs={"Yes": 0.0, "No": 0.0})
    assert not forecast.usable and forecast.failure_reason == "no_positive_mass"


def test_probabilities_in_range_are_kept_exactly() -> None:
    probs = {"Yes": 0.1 + 0.2, "No": 0.35}
    assert Forecast(probs=probs).probs == probs
    assert Forecast.model_validate_json(Forecast(probs=probs).model_dump_json()).probs == probs


@register_agent("test-huge-probabilities")
def _huge() -> object:
    class Huge:
        def forecast(self, episode: Episode) -> Forecast:
            return Forecast(probs=dict.fromkeys(episode.question.labels, 1e308))

    return Huge()


@register_agent("test-nan-probabilities")
def _nan() -> object:
    class NotANumber:
        def forecast(self, episode: Episode) -> Forecast:
            first, *rest = episode.question.labels
            return Forecast(probs={first: math.nan, **dict.fromkeys(rest, 0.5)})

    return NotANumber()


@register_agent("test-partial-probabilities")
def _partial() -> object:
    class Partial:
        def forecast(self, episode: Episode) -> Forecast:
            return Forecast(probs={episode.question.labels[0]: 0.25})

    return Partial()


def _run(tmp_path: Path, agent: str) -> Path:
    out = tmp_path / "run.jsonl"
    cfg = RunConfig(agents=(agent_spec(agent),))
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), cfg, out, progress=False)
    return out


def _loads_as_one_table(path: Path) -> None:
    import polars as pl

    options = paj.ParseOptions(explicit_schema=step_schema(), unexpected_field_behavior="error")
    assert paj.read_json(path, parse_options=options).num_rows > 0
    schema = pl.from_arrow(step_schema().empty_table()).schema  # type: ignore[union-attr]
    assert pl.read_ndjson(path, schema=schema).height > 0


def test_a_run_of_huge_probabilities_is_written_and_scored(tmp_path: Path) -> None:
    log = read_run_log(_run(tmp_path, "test-huge-probabilities"))
    assert log.steps
    for rec in log.steps:
        assert rec.forecast.usable and not rec.scores.fallback_used
        assert math.fsum(rec.forecast.probs.values()) == pytest.approx(1.0)
        assert score_step(rec) == rec.scores


def test_a_run_of_nan_probabilities_records_them_unusable(tmp_path: Path) -> None:
    path = _run(tmp_path, "test-nan-probabilities")
    assert "NaN" not in path.read_text()
    for rec in read_run_log(path).steps:
        assert not rec.forecast.usable and rec.forecast.failure_reason == "invalid_probability"
        assert rec.scores.fallback_used
    _loads_as_one_table(path)


def test_an_old_log_with_nan_or_huge_probabilities_is_read_and_rescored(tmp_path: Path) -> None:
    path = _run(tmp_path, "uniform")
    lines = path.read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    for row, p in zip(rows, ["NaN", 1e308], strict=False):
        row["forecast"]["probs"] = [{"label": lb, "p": p} for lb in row["grading"]["labels"]]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    steps = read_run_log(path).steps
    assert not steps[0].forecast.usable and score_step(steps[0]).fallback_used
    assert steps[1].forecast.usable and not score_step(steps[1]).fallback_used
    assert score_step(steps[1]).brier == pytest.approx(rows[1]["scores"]["brier"])


def test_an_in_process_partial_forecast_is_completed_not_made_certain(tmp_path: Path) -> None:
    for rec in read_run_log(_run(tmp_path, "test-partial-probabilities")).steps:
        first, *rest = rec.grading.labels
        assert rec.forecast.probs[first] == 0.25
        assert rec.forecast.probs == pytest.approx(
            {first: 0.25} | dict.fromkeys(rest, 0.75 / len(rest))
        )


def test_score_report_and_export_read_a_log_with_huge_probabilities(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from pastcast.cli import app

    path = _run(tmp_path, "uniform")
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        row["forecast"]["probs"] = [{"label": lb, "p": 1e308} for lb in row["grading"]["labels"]]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    runner = CliRunner()
    for args in (
        ["score", str(path), "--json"],
        ["report", str(path), "--out", str(tmp_path / "report")],
        ["export", "table", str(path), "--out", str(tmp_path / "table.parquet")],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args[0], result.output[-500:])
