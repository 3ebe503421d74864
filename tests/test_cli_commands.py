"""The CLI: every command documented; bad arguments give one-line errors and exit 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from pastcast.cli import app

runner = CliRunner()


def _walk(cmd: Any, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    out: list[tuple[tuple[str, ...], Any]] = []
    for name, sub in sorted(getattr(cmd, "commands", {}).items()):
        out.append(((*prefix, name), sub))
        out.extend(_walk(sub, (*prefix, name)))
    return out


def test_every_command_has_help_text() -> None:
    commands = _walk(typer.main.get_command(app))
    names = {path for path, _ in commands}
    assert {("demo",), ("run",), ("score",), ("corpus", "search"), ("data", "info")} <= names
    for path, cmd in commands:
        assert (cmd.help or "").strip(), f"undocumented: {' '.join(path)}"
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "nope"], "unknown agent 'nope'"),
        (["--agent", "heuristic@sleepy"], "unknown setting 'sleepy'"),
        (["--agent", "heuristic:max_reads"], "expected key=value"),
        (["--agent", "uniform", "--dataset", "/no/such/dir"], "not a dataset directory"),
        (["--agent", "uniform", "--dataset", "world:x"], "seed must be an integer"),
        (["--agent", "uniform", "--agent", "uniform"], "given twice"),
    ],
)
def test_run_rejects_bad_arguments(tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["run", *args, "--out", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2
    assert message in result.output
    assert not (tmp_path / "r.jsonl").exists()


def test_demo_runs_end_to_end_and_resumes(tmp_path: Path) -> None:
    result = runner.invoke(app, ["demo", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "market (reference)" in result.output
    report = (tmp_path / "report.md").read_text()
    assert "## Leaderboard" in report and "heuristic" in report
    again = runner.invoke(app, ["demo", "--out", str(tmp_path)])
    assert again.exit_code == 0 and "(0 new steps" in again.output


def test_run_then_score_from_the_log(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    result = runner.invoke(
        app,
        [
            "run",
            "--agent",
            "uniform",
            "--agent",
            "heuristic@memory_on",
            "--max-events",
            "3",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    scored = runner.invoke(app, ["score", str(out), "--json", "--bootstrap", "50"])
    assert scored.exit_code == 0, scored.output
    assert '"memory_on"' in scored.output
