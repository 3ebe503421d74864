"""Long runs as a user sees them without a terminal: `pastcast run` with stderr in a file reports
every completed step with its rate and ETA, and `--max-steps` stops a run early with a log that
the same command resumes and completes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pastcast.progress import INTERVAL_ENV, ProgressReporter
from pastcast.runlog import read_run_log

WORLD = "world:0,n_events=2,n_documents=60"
STEP_LINE = re.compile(
    r"^forecast steps: (\d+)/(\d+) steps · [\d.,]+ steps/s · elapsed \d+:\d\d:\d\d · "
    r"ETA \d+:\d\d:\d\d · "
)


def _pastcast(*args: str, interval: str = "0") -> subprocess.CompletedProcess[str]:
    """A fresh `pastcast` process whose stderr is a pipe, not a terminal."""
    return subprocess.run(
        [sys.executable, "-c", "from pastcast.cli import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ | {INTERVAL_ENV: interval, "PASTCAST_DEBUG": ""},
        check=False,
    )


def _run(out: Path, *more: str) -> subprocess.CompletedProcess[str]:
    return _pastcast("run", "--dataset", WORLD, "--agent", "uniform", "--out", str(out), *more)


def test_a_run_without_a_terminal_prints_a_line_per_completed_step(tmp_path: Path) -> None:
    done = _run(tmp_path / "run.jsonl", "--workers", "1")
    assert done.returncode == 0, done.stderr
    steps = len(read_run_log(tmp_path / "run.jsonl").steps)
    counts = [
        (int(m.group(1)), int(m.group(2)))
        for m in map(STEP_LINE.match, done.stderr.splitlines())
        if m is not None
    ]
    assert counts == [(n, steps) for n in range(1, steps + 1)], done.stderr


def test_progress_lines_come_at_most_once_an_interval(capsys: pytest.CaptureFixture[str]) -> None:
    with ProgressReporter("docs", terminal=False, interval_s=3600) as bar:
        task = bar.add_task("[bold]indexing", total=10)
        for _ in range(10):
            bar.advance(task)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2, lines  # when it starts and when it ends
    assert lines[0].startswith("indexing: 0/10 docs · elapsed ")
    assert lines[1].startswith("indexing: 10/10 docs · ") and " docs/s · " in lines[1]


def test_max_steps_stops_early_and_the_same_command_completes(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    first = _run(out, "--max-steps", "2", "--json")
    assert first.returncode == 0, first.stderr
    summary = json.loads(first.stdout)
    assert summary["written"] == 2 and summary["left"] > 0
    assert "--max-steps" in first.stderr  # says how to go on
    log = read_run_log(out)
    assert len(log.steps) == 2 and not log.truncated_tail
    total = 2 + summary["left"]
    again = _run(out, "--max-steps", "2", "--json")  # the same command: two more
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["resumed"] == 2
    rest = _run(out, "--json")  # without the cap: to the end
    assert rest.returncode == 0, rest.stderr
    assert json.loads(rest.stdout)["left"] == 0
    keys = [(s.agent, s.event_id, s.step_index) for s in read_run_log(out).steps]
    assert len(keys) == len(set(keys)) == total


def test_max_steps_is_documented_in_the_help() -> None:
    shown = _pastcast("run", "--help")
    assert "--max-steps" in shown.stdout


_LINES_ONLY = """
import sys
from pastcast.progress import ProgressReporter
with ProgressReporter("steps") as bar:
    task = bar.add_task("forecast steps", total=2, status="0 failed")
    bar.advance(task, 2)
print("rich" in sys.modules, bar._bar is not None)
"""


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, "False False"),  # lines: the terminal library is not even loaded
        ({"FORCE_COLOR": "1"}, "True True"),  # rich's own overrides still make a bar
        ({"TTY_COMPATIBLE": "1"}, "True True"),
        ({"TTY_COMPATIBLE": "0"}, "True False"),
    ],
)
def test_without_a_terminal_progress_is_lines_and_rich_decides_only_when_asked(
    env: dict[str, str], expected: str
) -> None:
    plain = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    done = subprocess.run(
        [sys.executable, "-c", _LINES_ONLY],
        capture_output=True,
        text=True,
        timeout=60,
        env=plain | env,
        check=True,
    )
    assert done.stdout.split("\n")[-2] == expected, done.stdout + done.stderr


def test_markup_in_a_progress_line_is_shown_as_text(capsys: pytest.CaptureFixture[str]) -> None:
    with ProgressReporter("steps", terminal=False, interval_s=0) as bar:
        task = bar.add_task("run [3]", total=1, status="[red]paused: openai[/red]")
        bar.advance(task)
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].startswith("run [3]: 1/1 steps · ")
    assert lines[-1].endswith(" · paused: openai")
