"""Reward records and the Parquet table of forecasts, through the API and the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import jsonschema
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from pastcast.cli import app
from pastcast.records import Forecast
from pastcast.runlog import Grading, RunLog
from pastcast.scoring import score_step
from pastcast.train import (
    RewardRecord,
    export_rewards,
    export_table,
    manifest_path,
    read_manifest,
    reward_schema,
    step_rewards,
    table_schema,
)

runner = CliRunner()


def test_step_rewards_are_the_scores_turned_and_penalise_unusable_forecasts() -> None:
    grading = Grading(truth="Yes", labels=("Yes", "No"), market_probs={"Yes": 0.5, "No": 0.5})
    good = step_rewards(Forecast(probs={"Yes": 0.8, "No": 0.2}), grading)
    assert good.neg_brier == pytest.approx(-(0.2**2 + 0.2**2))
    assert good.log_score == pytest.approx(math.log(0.8))
    assert good.accuracy == 1.0 and good.format_penalty == 0.0
    assert good.info_alpha == pytest.approx(math.log(0.8) - math.log(0.5))
    bad = step_rewards(
        Forecast(usable=False, failure_reason="invalid_json"), grading, format_penalty=0.5
    )
    assert bad.fallback_used and bad.format_penalty == -0.5
    assert bad.reward("neg_brier") == pytest.approx(-0.5 - 0.5)  # uniform fallback, penalised
    no_market = step_rewards(
        Forecast(probs={"Yes": 1.0}), grading.model_copy(update={"market_probs": None})
    )
    assert no_market.reward("info_alpha") is None


def test_reward_export_has_one_record_per_training_step(split_log: RunLog, tmp_path: Path) -> None:
    from datasets import load_dataset

    out = tmp_path / "rewards.jsonl"
    manifest = export_rewards([split_log.path], out, metric="log_score", format_penalty=0.25)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    train = [s for s in split_log.steps if s.split == "train"]
    assert len(lines) == manifest.rows == len(train)
    schema = reward_schema()
    by_key = {(s.agent, s.event_id, s.step_index, s.rollout): s for s in train}
    for line in lines:
        jsonschema.validate(line, schema)
        r = RewardRecord.model_validate(line)
        step = by_key[(r.agent, r.event_id, r.step_index, r.rollout)]
        scores = score_step(step)
        assert r.neg_brier == pytest.approx(-scores.brier)
        assert r.log_score == pytest.approx(-scores.log_loss)
        assert r.reward == pytest.approx(r.log_score + r.format_penalty)
        if step.episode.model_calls:
            assert r.prompt[0].role == "system" and r.completion[0].role == "assistant"
            assert "probabilities" in r.completion[-1].content
        else:
            assert r.prompt == () and r.completion == ()
    loaded = load_dataset("json", data_files=str(out), split="train")
    assert loaded.num_rows == len(lines)
    assert manifest.options == {
        "metric": "log_score",
        "format_penalty": 0.25,
        "fallback": "uniform",
    }
    assert manifest.left_out == {"eval": len(split_log.steps) - len(train)}


def test_table_is_read_by_pandas_polars_duckdb_and_datasets(
    split_log: RunLog, world_log: RunLog, tmp_path: Path
) -> None:
    import duckdb
    import pandas as pd
    import polars as pl
    from datasets import load_dataset

    out = tmp_path / "forecasts.parquet"
    manifest = export_table([split_log.path, world_log.path], out)
    n = len(split_log.steps) + len(world_log.steps)
    assert manifest.rows == n and not manifest.guarded
    assert set(manifest.splits) == {"train", "eval", "unsplit"}  # analysis reads every split
    assert pq.read_schema(out).remove_metadata() == table_schema()
    frame = pd.read_parquet(out)
    assert len(frame) == n
    expected = [score_step(s).brier for s in (*split_log.steps, *world_log.steps)]
    assert frame["brier"].tolist() == pytest.approx(expected)
    assert pl.read_parquet(out).height == n
    by_agent = duckdb.sql(f"SELECT agent, count(*) FROM read_parquet('{out}') GROUP BY agent")
    assert sum(c for _, c in by_agent.fetchall()) == n
    loaded = load_dataset("parquet", data_files=str(out), split="train")
    assert loaded.num_rows == n and "info_alpha" in loaded.column_names
    row = frame[frame["agent"] == "native-agent"].iloc[0]
    assert row["model_calls"] > 0 and row["tool_calls"] > 0 and row["input_tokens"] > 0
    assert read_manifest(out).sha256 == manifest.sha256


def test_cli_exports_and_refuses_evaluation_data(split_log: RunLog, tmp_path: Path) -> None:
    log = str(split_log.path)
    sft = tmp_path / "sft.jsonl"
    res = runner.invoke(app, ["export", "sft", log, "--out", str(sft), "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["rows"] > 0 and report["splits"] == ["train"] and sft.is_file()
    assert manifest_path(sft).is_file()

    refused = tmp_path / "eval.jsonl"
    res = runner.invoke(app, ["export", "sft", log, "--out", str(refused), "--split", "eval"])
    assert res.exit_code == 2
    assert res.stderr.count("\n") == 1 and "--force-eval" in res.stderr
    assert not refused.exists()
    res = runner.invoke(
        app, ["export", "sft", log, "--out", str(refused), "--split", "eval", "--force-eval"]
    )
    assert res.exit_code == 0, res.output

    res = runner.invoke(
        app, ["export", "rewards", log, "--out", str(tmp_path / "r.jsonl"), "--metric", "accuracy"]
    )
    assert res.exit_code == 0, res.output
    assert "wrote" in res.stdout
    res = runner.invoke(app, ["export", "table", log, "--out", str(tmp_path / "t.parquet")])
    assert res.exit_code == 0, res.output
    assert "not at hand" in res.stdout  # the split world was not given: no content hash


def test_cli_errors_are_one_line(world_log: RunLog, tmp_path: Path) -> None:
    res = runner.invoke(
        app, ["export", "sft", str(world_log.path), "--out", str(tmp_path / "x.jsonl")]
    )
    assert res.exit_code == 2 and res.stderr.count("\n") == 1
    assert "unsplit" in res.stderr
    res = runner.invoke(
        app, ["export", "table", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "t")]
    )
    assert res.exit_code == 2 and "no such run log" in res.stderr
    res = runner.invoke(
        app,
        ["export", "rewards", str(world_log.path), "--out", str(tmp_path / "r"), "--dataset", "x"],
    )
    assert res.exit_code == 2 and "--dataset 'x'" in res.stderr
