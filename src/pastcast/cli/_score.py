"""`pastcast score RUN_LOG...`: re-score saved run logs without re-running any agent."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from pastcast.cli._common import JsonFlag, fail, print_json
from pastcast.reports import leaderboard_table
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


def columns(text: str, option: str = "--by") -> tuple[str, ...]:
    """Comma-separated grouping columns, each one of ``GROUP_COLUMNS``."""
    cols = tuple(c.strip() for c in text.split(",") if c.strip())
    bad = [c for c in cols if c not in GROUP_COLUMNS]
    if bad:
        fail(f"{option}: unknown column {bad[0]!r} (expected some of {', '.join(GROUP_COLUMNS)})")
    return cols


def read_steps(run_logs: Sequence[Path]) -> list[StepRecord]:
    """The forecast steps of every run log (exit 2 on a bad or empty log)."""
    steps: list[StepRecord] = []
    for path in run_logs:
        try:
            log = read_run_log(path)
        except RunLogError as err:
            fail(str(err))
        if log.truncated_tail:  # a crash mid-write: scored without it, but never silently
            typer.echo(
                f"note: {path}: the last line is incomplete (cut off mid-write); left out", err=True
            )
        steps.extend(log.steps)
    if not steps:
        fail("no forecast steps in " + ", ".join(str(p) for p in run_logs))
    return steps


RunLogsArg = Annotated[list[Path], typer.Argument(help="Run log files (JSONL).")]
ByOpt = Annotated[
    str, typer.Option("--by", help=f"Comma-separated grouping columns: {', '.join(GROUP_COLUMNS)}.")
]
FallbackOpt = Annotated[
    Convention,
    typer.Option(
        "--fallback",
        help="How unusable forecasts count: as a uniform forecast, as the worst one, or "
        "excluded. Failures are always reported.",
    ),
]
# Bounded: each draw costs a pass over the events, so an absurd count would never finish.
BootstrapOpt = Annotated[
    int,
    typer.Option(
        "--bootstrap", min=0, max=100_000, help="Event-clustered bootstrap draws for CIs."
    ),
]
SeedOpt = Annotated[int, typer.Option("--seed", min=0, help="Seed of the bootstrap.")]


def score(
    run_logs: RunLogsArg,
    by: ByOpt = "agent,setting",
    fallback: FallbackOpt = "uniform",
    bootstrap: BootstrapOpt = 4000,
    seed: SeedOpt = 0,
    as_json: JsonFlag = False,
) -> None:
    """Re-score saved run logs from forecasts and gradings and print a leaderboard."""
    groups = columns(by)
    steps = read_steps(run_logs)
    summaries = summarize(
        table_from_records(steps), by=groups, fallback=fallback, bootstrap=bootstrap, seed=seed
    )
    if as_json:
        print_json(
            {
                "run_logs": [str(p) for p in run_logs],
                "by": list(groups),
                "fallback": fallback,
                "bootstrap": bootstrap,
                "seed": seed,
                "groups": [s.as_dict() for s in summaries],
            }
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
