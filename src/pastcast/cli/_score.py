"""`pastcast score RUN_LOG...`: re-score saved run logs without re-running any agent."""

from __future__ import annotations

from pathlib import Path

import typer

from pastcast.cli._common import fail


def score(
    run_logs: list[Path] = typer.Argument(..., help="Run log files (JSONL) to score."),
) -> None:
    """Re-score saved run logs and print a leaderboard."""
    fail("scoring of saved logs is not available in this build")
