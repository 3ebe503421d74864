"""`pastcast score RUN_LOG...`: re-score saved run logs without re-running any agent."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from pastcast.agents import normalize_step_labels
from pastcast.cli._common import JsonFlag, fail, load_dataset_option, print_json
from pastcast.dataset import Dataset
from pastcast.reports import (
    GROUP_COLUMNS,
    RunSet,
    calibration_table,
    cost_table,
    leaderboard_table,
    scorecard,
    to_rich,
)
from pastcast.runlog import RunLog, RunLogError, StepRecord, read_run_log
from pastcast.scoring import Convention

TABLE_COLUMNS = tuple(c for c in GROUP_COLUMNS if c not in ("model", "horizon"))
"""What the statistics commands group by: the score table's own columns (the agents' models
come from the run headers and the horizon from the dataset: score and report)."""


def columns(
    text: str, option: str = "--by", allowed: Sequence[str] = TABLE_COLUMNS
) -> tuple[str, ...]:
    """Comma-separated grouping columns, each one of ``allowed``."""
    cols = tuple(c.strip() for c in text.split(",") if c.strip())
    bad = [c for c in cols if c not in allowed]
    if bad:
        fail(f"{option}: unknown column {bad[0]!r} (expected some of {', '.join(allowed)})")
    return cols


def read_logs(run_logs: Sequence[Path]) -> list[RunLog]:
    """Every run log (exit 2 on a bad log, or when none holds a forecast step)."""
    logs: list[RunLog] = []
    for path in run_logs:
        try:
            log = read_run_log(path)
        except RunLogError as err:
            fail(str(err))
        if log.truncated_tail:  # a crash mid-write: scored without it, but never silently
            typer.echo(
                f"note: {path}: the last line is incomplete (cut off mid-write); left out", err=True
            )
        logs.append(log)
    if not any(log.steps for log in logs):
        fail("no forecast steps in " + ", ".join(str(p) for p in run_logs))
    return logs


def read_steps(run_logs: Sequence[Path]) -> list[StepRecord]:
    """The forecast steps of every run log (exit 2 on a bad or empty log)."""
    return [s for log in read_logs(run_logs) for s in log.steps]


def read_runs(
    run_logs: Sequence[Path],
    dataset: str | None,
    by: Sequence[str] = (),
    normalize_labels: bool = False,
) -> RunSet:
    """The run logs with the dataset they ran on (``--dataset``), checked to be that dataset;
    with ``normalize_labels`` every forecast is read again with normalized labels."""
    logs = read_logs(run_logs)
    if normalize_labels:
        logs = [replace(log, steps=normalize_step_labels(log.steps)) for log in logs]
    data: Dataset | None = None
    if dataset is not None:
        data = load_dataset_option(dataset)
        for log in logs:
            if log.header.dataset_id != data.id:
                fail(
                    f"--dataset {dataset!r} is dataset {data.id!r}, but {log.path} ran on "
                    f"{log.header.dataset_id!r}"
                )
    elif "horizon" in by:
        fail("--by horizon needs --dataset: run logs do not record when an event resolved")
    return RunSet(tuple(logs), data)


RunLogsArg = Annotated[list[Path], typer.Argument(help="Run log files (JSONL).")]
ByOpt = Annotated[
    str, typer.Option("--by", help=f"Comma-separated grouping columns: {', '.join(TABLE_COLUMNS)}.")
]
ReportByOpt = Annotated[
    str,
    typer.Option(
        "--by",
        help=f"Comma-separated grouping columns: {', '.join(GROUP_COLUMNS)} (kind: binary or "
        "multi-option; horizon: days from the cutoff to the resolution, needs --dataset).",
    ),
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
NormalizeLabelsOpt = Annotated[
    bool,
    typer.Option(
        "--normalize-labels",
        help="Read every forecast again from the raw text in the log with typographic label "
        "normalization (case, curly quotes, whitespace) before scoring: the sensitivity check "
        "to exact label matching. Nothing is re-run.",
    ),
]
# Bounded: more bins than forecasts leave every bin empty (and each costs a pass).
BinsOpt = Annotated[
    int,
    typer.Option("--bins", min=1, max=1000, help="Equal-width probability bins (ECE, Murphy)."),
]
DatasetOpt = Annotated[
    str | None,
    typer.Option(
        "--dataset",
        help="The dataset the runs used ('world[:SEED]' or a dataset directory): horizons and "
        "the full schedule of each event.",
    ),
]
AfterKnowledgeCutoffOpt = Annotated[
    bool,
    typer.Option(
        "--after-knowledge-cutoff",
        help="Keep only events that resolved after the knowledge cutoff of every model in the "
        "logs (a model may remember earlier outcomes).",
    ),
]


def after_knowledge_cutoff_only(runs: RunSet) -> RunSet:
    """``runs`` with only the steps of events no model of the logs may remember (exit 2 when
    that is unknown)."""
    from pastcast.runner import after_knowledge_cutoff

    try:
        kept = after_knowledge_cutoff(runs.logs)
    except ValueError as err:
        fail(f"--after-knowledge-cutoff: {err}")
    if kept.knowledge_cutoff is not None:
        typer.echo(
            f"--after-knowledge-cutoff: left out {kept.dropped_events} events "
            f"({kept.dropped_steps} steps) resolved by {kept.knowledge_cutoff.isoformat()} "
            f"(knowledge cutoff of {kept.model})",
            err=True,
        )
    if not kept.steps:
        fail("--after-knowledge-cutoff: no event resolved after the models' knowledge cutoffs")
    keep = {id(s) for s in kept.steps}
    logs = tuple(
        replace(log, steps=tuple(s for s in log.steps if id(s) in keep)) for log in runs.logs
    )
    return RunSet(logs, runs.dataset)


def score(
    run_logs: RunLogsArg,
    by: ReportByOpt = "agent,setting",
    fallback: FallbackOpt = "uniform",
    bootstrap: BootstrapOpt = 4000,
    seed: SeedOpt = 0,
    bins: BinsOpt = 10,
    dataset: DatasetOpt = None,
    after_knowledge_cutoff: AfterKnowledgeCutoffOpt = False,
    normalize_labels: NormalizeLabelsOpt = False,
    as_json: JsonFlag = False,
) -> None:
    """Re-score saved run logs from forecasts and gradings: the leaderboard, calibration of
    two-outcome forecasts (ECE, Murphy, anatomy of alpha), cost and failures per group."""
    groups = columns(by, allowed=GROUP_COLUMNS)
    runs = read_runs(run_logs, dataset, groups, normalize_labels)
    matching = "normalized" if normalize_labels else "exact"
    if after_knowledge_cutoff:
        runs = after_knowledge_cutoff_only(runs)
    try:
        card = scorecard(runs, groups, fallback, bootstrap=bootstrap, seed=seed, bins=bins)
    except ValueError as err:
        fail(str(err))
    if as_json:
        print_json(
            {
                "run_logs": [str(p) for p in run_logs],
                "dataset": dataset,
                "labels": matching,
                **card.as_dict(),
            }
        )
        return
    title = (
        f"{card.n_forecasts} forecasts from {len(run_logs)} run log(s); fallback={fallback}; "
        f"labels={matching}; "
        f"95% event-clustered bootstrap CIs ({bootstrap} draws)"
    )
    console = Console()
    if not console.is_terminal:
        console = Console(width=200)  # keep the tables readable in logs and pipes
    if "event" in groups and dataset is None:
        typer.echo("note: pass --dataset to see each event's question next to its id", err=True)
    console.print(leaderboard_table([g.summary for g in card.groups], groups, title, card.titles))
    console.print(to_rich(calibration_table(card)))
    console.print(to_rich(cost_table(card)))
