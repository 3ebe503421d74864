"""`pastcast score RUN_LOG...`: re-score saved run logs without re-running any agent."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, cast

import typer
from rich.console import Console
from rich.table import Table

from pastcast.cli._common import fail, print_json
from pastcast.runlog import RunLogError, StepRecord, read_run_log
from pastcast.scoring import (
    Convention,
    GroupSummary,
    MetricSummary,
    summarize,
    table_from_records,
)

GROUP_COLUMNS = ("agent", "setting", "role", "run_id", "event", "step", "rollout")
CONVENTIONS = ("uniform", "worst", "exclude")


def _clean(obj: Any) -> Any:
    """NaN is not JSON: write it as null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    return obj


def _fmt(m: MetricSummary, digits: int = 3) -> str:
    if m.n == 0 or not math.isfinite(m.mean):
        return "-"
    text = f"{m.mean:.{digits}f}"
    if math.isfinite(m.ci_low):
        text += f" [{m.ci_low:.{digits}f}, {m.ci_high:.{digits}f}]"
    return text


def _leaderboard(summaries: tuple[GroupSummary, ...], by: tuple[str, ...], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for col in by:
        table.add_column(col)
    for col in ("n", "fail", "Brier", "accuracy", "log loss", "info-alpha", "alpha (shrunk)"):
        table.add_column(col, justify="right")
    agents = sorted(
        (s for s in summaries if s.role != "reference"), key=lambda s: s.metrics["brier"].mean
    )
    refs = [s for s in summaries if s.role == "reference"]
    for i, s in enumerate([*agents, *refs]):
        if refs and i == len(agents):
            table.add_section()
        names = list(s.group)
        if s.role == "reference" and names:
            names[0] += " (reference)"
        at = s.alpha_tests["alpha"]
        shrunk = (
            "-" if at.n == 0 else f"{at.shrunk:+.4f}" + (" provisional" if at.provisional else "")
        )
        table.add_row(
            *names,
            str(s.n_recorded),
            f"{s.failure_rate:.1%}",
            _fmt(s.metrics["brier"]),
            _fmt(s.metrics["accuracy"]),
            _fmt(s.metrics["log_loss"]),
            _fmt(s.metrics["info_alpha"]),
            shrunk,
        )
    return table


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
            _clean(
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
    Console().print(_leaderboard(summaries, groups, title))
