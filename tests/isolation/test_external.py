"""External agents: a plain script with no pastcast import completes episodes through
``pastcast run``, its run log scores like any other, and its process reaches nothing but the
tool server (no files of the run, no network); its model calls are in the transcript."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.agents import agent_spec
from pastcast.cli import app
from pastcast.runlog import header_path, read_run_log
from pastcast.runner import RunConfig, run_benchmark

PLAIN_AGENT = Path(__file__).resolve().parent / "plain_agent.py"
runner = CliRunner()


def _agent_copy(folder: Path) -> Path:
    script = folder / "plain_agent.py"
    shutil.copy(PLAIN_AGENT, script)
    script.chmod(0o644)
    return script


def test_an_external_script_runs_through_pastcast_run_and_scores(
    tmp_path: Path, open_dir: Path, sandbox: None
) -> None:
    script = _agent_copy(open_dir)
    out = tmp_path / "run.jsonl"
    # It tries to read its own run log and the world's index: neither exists in its sandbox.
    argv = json.dumps(["python3", str(script), str(out), str(tmp_path / "index")])
    agent = f"external:command={argv}"
    args = ["run", "--agent", agent, "--max-events", "1", "--out", str(out), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["written"] > 0 and summary["unusable"] == 0
    log = read_run_log(out)
    for step in log.steps:
        assert step.episode.error is None
        assert step.episode.termination == "forecast"
        assert [c.name for c in step.episode.tool_calls] == ["search", "read"]
        notes = step.forecast.rationale
        assert f"cannot read {out}: FileNotFoundError" in notes
        assert "index: FileNotFoundError" in notes
        assert "no socket: 1" in notes  # EPERM from the filter
    scored = runner.invoke(app, ["score", str(out), "--json", "--bootstrap", "50"])
    assert scored.exit_code == 0, scored.output
    groups = json.loads(scored.stdout)["groups"]
    assert len(groups) == 1 and groups[0]["n_recorded"] == len(log.steps)
    assert groups[0]["n_failures"] == 0 and 0 <= groups[0]["metrics"]["brier"]["mean"] <= 2
    assert json.loads(header_path(out).read_text())["agents"][0]["factory"] == "external"


def test_model_calls_of_an_external_agent_are_in_the_transcript(
    tmp_path: Path, open_dir: Path, sandbox: None
) -> None:
    script = _agent_copy(open_dir)
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(["I think Yes"]))
    spec = agent_spec(
        "external", command=["python3", str(script)], model=f"scripted:{outputs}", label="ext"
    )
    out = tmp_path / "run.jsonl"
    config = RunConfig(agents=(spec,), max_events=1)
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), config, out, progress=False)
    for step in read_run_log(out).steps:
        episode = step.episode
        assert len(episode.model_calls) == 1
        assert episode.model_calls[0].model == f"scripted:{outputs}"
        sent = episode.messages[episode.model_calls[0].messages[0]].content
        assert "Will the Zephyr rocket launch succeed" in sent
        assert episode.messages[episode.model_calls[0].reply].content == "I think Yes"
        assert "model: I think Yes" in step.forecast.rationale
        assert [type(e).__name__ for e in episode.events()] == ["ToolCall", "ToolCall", "ModelCall"]


def test_an_agent_that_dies_is_an_agent_error_with_its_last_words(
    tmp_path: Path, open_dir: Path, sandbox: None
) -> None:
    script = open_dir / "dies.py"
    script.write_text("import sys\nprint('about to fail', file=sys.stderr)\nraise SystemExit(7)\n")
    script.chmod(0o644)
    spec = agent_spec("external", command=f"python3 {script}", label="dies")
    out = tmp_path / "run.jsonl"
    config = RunConfig(agents=(spec,), max_events=1)
    result = run_benchmark(
        tiny_dataset(), ListBackend(tiny_documents()), config, out, progress=False
    )
    assert result.failures == result.written == 2
    step = read_run_log(out).steps[0]
    assert step.forecast.failure_reason == "agent_error"
    assert step.episode.error == (
        "AgentProcessError: the agent process exited with status 7 without a forecast: "
        "about to fail"
    )
