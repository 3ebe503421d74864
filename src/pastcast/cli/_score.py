"""`pastcast score RUN_LOG...`: re-score saved run logs without re-running any agent."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import typer
from rich.console import Console

from pastcast.cli._common import fail, print_json
from pastcast.reports import clean_json, leaderboard_table
from pastcast.runlog import RunLogError, StepRecord, read_run_log
from pastcast.scoring import Convention, summarize, table_from_records

GROUP_COLUMNS = (
    "agent",
    "setting",
    "role",
    "run_id",
    "event",
    "split",
    "category",
    "step",
    "rollout",
)
CONVENTIONS = ("uniform", "worst", "exclude")


def score(
    run_logs: list[Path] = typer.Argument(..., help="Run log files (JSONL) to score."),
    by: str = typer.Option(
        "agent,setting",
        "--by",
        help=f"Comma-separated grouping columns: {', '.join(GROUP_COLUMNS)}.",
    ),
    fallback: str = typer.Option(
        "uniform",
        "--fallback",
        help="How unusable forecasts count: uniform (default), worst, or exclude. "
        "Failures are always reported.",
    ),
    bootstrap: int = typer.Option(4000, "--bootstrap", min=0, help="Bootstrap draws for CIs."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap."),
    json_: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Re-score saved run logs from forecasts and gradings and print a leaderboard."""
    groups = tuple(c.strip() for c in by.split(",") if c.strip())
    unknown = [c for c in groups if c not in GROUP_COLUMNS]
    if unknown:
        fail(f"--by: unknown column {unknown[0]!r} (expected some of {', '.join(GROUP_COLUMNS)})")
    if fallback not in CONVENTIONS:
        fail(f"--fallback: expected one of {', '.join(CONVENTIONS)}, not {fallback!r}")
    steps: list[StepRecord] = []
    for path in run_logs:
        try:
            steps.extend(read_run_log(path).steps)
        except RunLogError as err:
            fail(str(err))
    if not steps:
        fail("no forecast steps in " + ", ".join(str(p) for p in run_logs))
    table = table_from_records(steps)
    conv = cast(Convention, fallback)
    summaries = summarize(table, by=groups, fallback=conv, bootstrap=bootstrap, seed=seed)
    if json_:
        print_json(
            clean_json(
                {
                    "run_logs": [str(p) for p in run_logs],
                    "by": list(groups),
                    "fallback": fallback,
                    "bootstrap": bootstrap,
                    "seed": seed,
                    "groups": [s.as_dict() for s in summaries],
                }
            )
        )
        return
    title = (
        f"{len(steps)} forecasts from {len(run_logs)} run log(s); fallback={fallback}; "
        f"95% event-clustered bootstrap CIs ({bootstrap} draws)"
    )
    console = Console()
    if not console.is_terminal:
        console = Console(width=180)  # keep the table readable in logs and pipes
    console.print(leaderboard_table(summaries, groups, title))
