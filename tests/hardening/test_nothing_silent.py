"""Nothing silent: what cannot work is refused before the work starts (exit 2, one line, nothing
written), never recorded as a run of unusable forecasts or an empty result with exit 0."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.cli import app

runner = CliRunner()
FB = Path(__file__).parents[1] / "markets" / "fixtures" / "fb"


def _fb(tmp_path: Path) -> Path:
    """The small ForecastBench fixture under the upstream file names (as its own tests do)."""
    root = tmp_path / "fb"
    shutil.copytree(FB, root)
    derived = root / "derived"
    (derived / "questions.fixture.jsonl").rename(derived / "markets_resolved.jsonl")
    (derived / "values.fixture.csv").rename(derived / "daily_values.csv")
    return root


def _refused(args: list[str], *names: str) -> str:
    """Exit 2 with one ``error:`` line (the last on stderr; progress may come before it)."""
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("error: "), result.stderr
    assert sum(line.startswith("error") for line in lines) == 1, result.stderr
    for name in names:
        assert name in lines[-1], result.stderr
    return lines[-1]


def test_a_split_with_no_events_is_refused_before_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    _refused(["run", "-a", "uniform", "--split", "nosuch", "--out", str(out)], "--split", "nosuch")
    assert not out.exists() and not out.with_suffix(".header.json").exists()


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ("scripted:/nonexistent/outputs.json", "/nonexistent/outputs.json"),
        ("local:/nonexistent/model.gguf", "/nonexistent/model.gguf"),
        ("local:/nonexistent/model.bin", "GGUF"),
    ],
)
def test_a_model_that_cannot_be_loaded_is_refused_before_the_run(
    tmp_path: Path, model: str, says: str
) -> None:
    out = tmp_path / "run.jsonl"
    _refused(["run", "-a", f"no-tools:model={model}", "--out", str(out)], model, says)
    assert not out.exists() and not out.with_suffix(".header.json").exists()


def test_a_replayed_model_needs_no_provider(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    spec = f"no-tools:model=local:/nonexistent/model.gguf,cache_dir={tmp_path},cache_mode=replay"
    result = runner.invoke(app, ["run", "-a", spec, "--max-events", "1", "--out", str(out)])
    assert "cannot be loaded" not in result.output  # replay builds no provider: it may run


def test_agent_arguments_the_agent_refuses_are_refused_before_the_run(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    _refused(["run", "-a", "uniform:foo=1", "--out", str(out)], "foo")
    _refused(["run", "-a", "tool-agent:model=scripted:x.json,action_mode=yaml", "--out", str(out)])
    assert not out.exists()


def test_an_unknown_source_is_refused(tmp_path: Path) -> None:
    root = _fb(tmp_path)
    out = tmp_path / "d"
    _refused(
        ["data", "import", "forecastbench", str(root), "--out", str(out), "--source", "nosuch"],
        "source filter 'nosuch'",
        "polymarket",
    )
    assert not out.exists()


def test_an_import_that_keeps_no_event_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "d"
    stderr = _refused(
        [
            "data",
            "import",
            "forecastbench",
            str(_fb(tmp_path)),
            "--out",
            str(out),
            "--split",
            "2030-01-01,2031-01-01,2032-01-01",
        ],
        "no events",
    )
    assert "temporal split" in stderr  # the stage that removed the last ones
    assert not out.exists()


def test_a_source_without_documents_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    _refused(["corpus", "build", f"jsonl:{empty}", "--out", str(tmp_path / "i")], "no documents")
    junk = tmp_path / "junk.jsonl"
    junk.write_text("{}\n[]\n")
    stderr = _refused(
        ["corpus", "build", f"jsonl:{junk}", "--out", str(tmp_path / "j"), "--lenient"],
        "no documents",
    )
    assert "2 malformed" in stderr
    assert not (tmp_path / "i").exists() and not (tmp_path / "j").exists()


def test_stats_power_refuses_what_is_not_a_finite_edge() -> None:
    for alpha in ("inf", "nan", "1e-300", "-0.1"):
        _refused(["stats", "power", "--alpha", alpha], "alpha")
    _refused(["stats", "power", "--alpha", "0.01", "--boldness", "1e308"], "alpha")


def test_json_output_of_a_refusal_is_nothing_on_stdout(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["run", "-a", "uniform", "--split", "x", "--json", "--out", str(tmp_path / "r.jsonl")]
    )
    assert result.exit_code == 2 and result.stdout == ""
    json.dumps(result.stderr)


def test_a_judge_naming_no_provider_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    # the dataset and the corpus do not exist: the judge is refused before either is opened
    out = tmp_path / "curated"
    args = ["data", "curate", str(tmp_path / "nosuch"), "--corpus", str(tmp_path / "none")]
    _refused([*args, "--judge", "bogus:x", "--out", str(out)], "--judge", "bogus")
    assert not out.exists()


@pytest.mark.parametrize("arg", ["max_reads=-5", "top_k=0", "half_life_days=0"])
def test_a_negative_budget_of_an_agent_is_refused_before_the_run(tmp_path: Path, arg: str) -> None:
    out = tmp_path / "run.jsonl"
    _refused(["run", "-a", f"heuristic:{arg}", "--out", str(out)], arg.split("=")[0])
    assert not out.exists()
