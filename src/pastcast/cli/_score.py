"""`pastcast score RUN_LOG...`: re-score saved run logs without re-running any agent."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pastcast.app import (
    DATASET_SPEC_HELP,
    MARKET_AGE_WARNING,
    Dashboard,
    RunsRead,
    score_runs,
)
from pastcast.app import TABLE_COLUMNS as TABLE_COLUMNS
from pastcast.cli._common import (
    JsonFlag,
    call_with_params,
    fail_app,
    print_json,
    table_console,
)
from pastcast.errors import FieldError
from pastcast.reports import (
    BOOTSTRAP_DRAWS,
    BOOTSTRAP_SEED,
    GROUP_COLUMNS,
    calibration_table,
    cost_table,
    leaderboard,
    market_age_text,
    paired_table,
    to_rich,
)
from pastcast.scoring import Convention

OPTIONS = {
    "run_logs": "",
    "figures": "--figure",
    "events": "--event",
}
"""The options of the reading commands' fields whose names are not theirs (a run log's error
names its own file)."""


def print_notes(read: RunsRead | Dashboard, market_note: str | None = None) -> None:
    """What reading left out or merged, and how old the market reference is, on stderr."""
    for line in (*read.notes, *([market_note] if market_note else [])):
        typer.echo(f"note: {line}", err=True)


RunLogsArg = Annotated[list[Path], typer.Argument(help="Run log files (JSONL).")]
ByOpt = Annotated[
    str, typer.Option("--by", help=f"Comma-separated grouping columns: {', '.join(TABLE_COLUMNS)}.")
]
ReportByOpt = Annotated[
    str,
    typer.Option(
        "--by",
        help=f"Comma-separated grouping columns: {', '.join(GROUP_COLUMNS)} (kind: binary or "
        "multi-option; horizon: days from the cutoff to the resolution, needs --dataset; "
        "market_age: how old the market belief was at the cutoff, <1d, 1-7d, 7-30d, >=30d, "
        "none).",
    ),
]
MaxMarketAgeOpt = Annotated[
    float | None,
    typer.Option(
        "--max-market-age",
        min=0,
        metavar="DAYS",
        help="Keep only the forecasts whose market belief was at most DAYS old at the cutoff "
        "(forecasts without one are left out).",
    ),
]
MarketAgeWarningOpt = Annotated[
    float,
    typer.Option(
        "--market-age-warning",
        min=0,
        metavar="DAYS",
        help="Note when the market belief is over DAYS old at the median cutoff: "
        "information-alpha is then measured against a stale price.",
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
        help=f"The dataset the runs used ({DATASET_SPEC_HELP}): horizons and "
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


PairedOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--paired",
        help="BASE:OTHER (repeatable): OTHER - BASE on the steps both recorded, with 95% "
        "event-resampled CIs; each side a run id, AGENT@SETTING or AGENT.",
    ),
]


def score(
    ctx: typer.Context,
    run_logs: RunLogsArg,
    by: ReportByOpt = "agent,setting",
    fallback: FallbackOpt = "uniform",
    bootstrap: BootstrapOpt = BOOTSTRAP_DRAWS,
    seed: SeedOpt = BOOTSTRAP_SEED,
    bins: BinsOpt = 10,
    dataset: DatasetOpt = None,
    after_knowledge_cutoff: AfterKnowledgeCutoffOpt = False,
    normalize_labels: NormalizeLabelsOpt = False,
    paired: PairedOpt = None,
    max_market_age: MaxMarketAgeOpt = None,
    market_age_warning: MarketAgeWarningOpt = MARKET_AGE_WARNING,
    as_json: JsonFlag = False,
) -> None:
    """Re-score saved run logs from forecasts and gradings: the leaderboard, calibration of
    two-outcome forecasts (ECE, Murphy, anatomy of alpha), cost and failures per group."""
    try:
        scored = call_with_params(ctx, score_runs, paired=tuple(paired or ()))
    except FieldError as exc:
        fail_app(exc, OPTIONS)
    print_notes(scored.read, scored.market_note)
    if scored.cutoff_note is not None:
        typer.echo(f"--after-knowledge-cutoff: {scored.cutoff_note}", err=True)
    for gap in scored.knowledge_gaps:  # what remembering was worth, before it was left out
        interval = "-" if gap.low is None else f"[{gap.low:+.3f}, {gap.high:+.3f}]"
        typer.echo(
            f"--after-knowledge-cutoff: {gap.model} (cutoff {gap.knowledge_cutoff}): Brier "
            f"{gap.before_brier:.3f} on {gap.before_events} events resolved by it, "
            f"{gap.after_brier:.3f} on {gap.after_events} after; gap {gap.gap:+.3f} "
            f"{interval} (95% event bootstrap)",
            err=True,
        )
    card, matching = scored.card, scored.labels
    groups = card.by
    if as_json:
        print_json(
            {
                "run_logs": [str(p) for p in run_logs],
                "dataset": dataset,
                "labels": matching,
                **card.as_dict(),
                "paired": [p.as_dict() for p in scored.pairs],
                "knowledge_gaps": [
                    {**vars(g), "knowledge_cutoff": g.knowledge_cutoff.isoformat()}
                    for g in scored.knowledge_gaps
                ],
            }
        )
        return
    title = (
        f"{card.n_forecasts} forecasts from {len(scored.read.logs)} run log(s); "
        f"fallback={fallback}; labels={matching}; "
        f"95% event-clustered bootstrap CIs ({bootstrap} draws); information-alpha against "
        f"the market at the cutoff, {market_age_text(card.market_ages)}"
    )
    console = table_console()
    if "event" in groups and dataset is None:
        typer.echo("note: pass --dataset to see each event's question next to its id", err=True)
    tables = [
        leaderboard([g.summary for g in card.groups], groups, title, card.titles),
        calibration_table(card),
        cost_table(card),
        *([paired_table(scored.pairs)] if scored.pairs else []),
    ]
    for table in tables:
        console.print(to_rich(table, console.width))
