"""The commands that read run logs without re-running any agent: `pastcast score` (re-score),
`report` (the HTML report), `compare` (two runs, or two agents of one run, paired: Table 4) and
`view` (a local, read-only web dashboard); their shared options (``stats`` and ``export`` take
them too)."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import Annotated

import typer

from pastcast.app import (
    DATASET_SPEC_HELP,
    MARKET_AGE_WARNING,
    REPORTS_EXTRA_HINT,
    Dashboard,
    RunsRead,
    compare_runs,
    dashboard,
    report_runs,
    score_runs,
)
from pastcast.app import TABLE_COLUMNS as TABLE_COLUMNS
from pastcast.cli._common import (
    EXIT_FAILED,
    JsonFlag,
    call_with_params,
    fail,
    fail_app,
    field_errors,
    note,
    print_json,
    table_console,
)
from pastcast.errors import FieldError
from pastcast.reports import (
    BOOTSTRAP_DRAWS,
    BOOTSTRAP_SEED,
    GROUP_COLUMNS,
    calibration_table,
    comparison_table,
    cost_table,
    leaderboard,
    main_table,
    market_age_text,
    paired_table,
    to_markdown,
    to_rich,
)
from pastcast.scoring import Convention
from pastcast.serving import listen, serve_app

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


def report(
    ctx: typer.Context,
    run_logs: RunLogsArg,
    out: Annotated[Path, typer.Option("--out", help="Directory to write the report into.")],
    by: ReportByOpt = "agent,setting",
    fallback: FallbackOpt = "uniform",
    bootstrap: BootstrapOpt = BOOTSTRAP_DRAWS,
    seed: SeedOpt = BOOTSTRAP_SEED,
    bins: BinsOpt = 10,
    dataset: DatasetOpt = None,
    events: Annotated[
        list[str] | None,
        typer.Option(
            "--event",
            help="Event of the market-against-forecasts figure (repeatable; default: the events "
            "with most forecast dates).",
        ),
    ] = None,
    figures: Annotated[
        list[str] | None,
        typer.Option("--figure", help="Draw only this figure (repeatable; default: all)."),
    ] = None,
    lookback: Annotated[
        str | None,
        typer.Option(
            "--lookback",
            help="The lookback schedule's fractions (e.g. 0.25,0.5,0.75,1): draws the sweep.",
        ),
    ] = None,
    arena: Annotated[
        Path | None,
        typer.Option(
            "--arena",
            help="An arena replay's folder (rounds.jsonl, ledger.jsonl) whose rounds the report "
            "shows, for the arena's report-section plugin (the pastcast-arena distribution); "
            "found by itself beside a run log an arena replay wrote.",
        ),
    ] = None,
    max_market_age: MaxMarketAgeOpt = None,
    market_age_warning: MarketAgeWarningOpt = MARKET_AGE_WARNING,
    as_json: JsonFlag = False,
) -> None:
    """Write a self-contained HTML report (report.html), its tables as Markdown and LaTeX, the
    scorecard as JSON and every figure as PNG and SVG. A figure is drawn only when the runs
    have what it needs."""
    try:
        sections = None if arena is None else {"arena": arena}
        made = call_with_params(ctx, report_runs, omit=("arena",), sections=sections)
    except FieldError as exc:
        if not exc.field:  # the reports extra is missing
            fail(f"pastcast report needs {exc.reason.removeprefix('reports need ')}")
        fail_app(exc, OPTIONS)
    except FileExistsError as err:  # a folder pastcast did not make: nothing was written
        fail(f"--out {err}")
    except OSError as err:
        fail(f"--out {out}: cannot write the report ({err.strerror or err})", EXIT_FAILED)
    print_notes(made.read, made.market_note)
    written = made.written
    if as_json:
        print_json(
            {
                "run_logs": [str(p) for p in run_logs],
                "report": str(written.html),
                "markdown": str(written.markdown),
                "latex": str(written.latex),
                "json": str(written.json),
                "figures": [str(p) for p in written.figures],
                **written.card.as_dict(),
            }
        )
        return
    console = table_console()
    console.print(to_rich(main_table(written.card), console.width))
    note(f"report: {written.html}", as_json)
    note(f"tables: {written.markdown}, {written.latex}; figures: {out / 'figures'}", as_json)


COMPARE_OPTIONS = {"base": "BASE", "tuned": "TUNED"}


def compare(
    ctx: typer.Context,
    base: Annotated[Path, typer.Argument(help="The base run log (JSONL).")],
    tuned: Annotated[
        Path | None,
        typer.Argument(
            help="The run log compared with it (JSONL); default BASE: two agents of one log, "
            "named by --base-agent and --tuned-agent.",
            show_default=False,
        ),
    ] = None,
    base_agent: Annotated[
        str | None,
        typer.Option(
            "--base-agent", help="AGENT or AGENT@SETTING of BASE (needed when it holds several)."
        ),
    ] = None,
    tuned_agent: Annotated[
        str | None,
        typer.Option(
            "--tuned-agent", help="AGENT or AGENT@SETTING of TUNED (needed when it holds several)."
        ),
    ] = None,
    fallback: FallbackOpt = "uniform",
    bootstrap: BootstrapOpt = BOOTSTRAP_DRAWS,
    seed: SeedOpt = BOOTSTRAP_SEED,
    dataset: DatasetOpt = None,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print the table as Markdown.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Compare two run logs, or two agents of one (TUNED left out), on the steps both recorded:
    Brier (overall, binary, multi-choice), accuracy, log loss, tool calls per forecast and
    parser acceptance, with the paired differences (TUNED - BASE) and their 95%
    event-resampled intervals."""
    with field_errors(COMPARE_OPTIONS, fail_app):
        made = call_with_params(ctx, compare_runs, omit=("markdown",))
    for line in made.notes:
        typer.echo(f"note: {line}", err=True)
    if as_json:
        print_json(made.as_dict())
        return
    table = comparison_table(made.comparison, made.title())
    if markdown:
        typer.echo(to_markdown(table))
        return
    console = table_console()
    console.print(to_rich(table, console.width))
    typer.echo(textwrap.fill(table.note, console.width))


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def view(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(help="Run directories (every run log under them) or run log files."),
    ],
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port to serve on.")] = 8000,
    host: Annotated[
        str,
        typer.Option("--host", help="Address to bind (default: this machine only)."),
    ] = "127.0.0.1",
    dataset: DatasetOpt = None,
    arena: Annotated[
        Path | None,
        typer.Option(
            "--arena",
            help="An arena replay's folder whose rounds get a page, for the arena's "
            "report-section plugin (the pastcast-arena distribution; found by itself beside a "
            "run log an arena replay wrote).",
        ),
    ] = None,
) -> None:
    """Serve the dashboard: leaderboard with filters, event pages (market curve, every forecast,
    the outcome) and trajectories (messages, tool calls, documents with their dates against the
    cutoff, notebook diffs, cost and latency per call). Read-only; Ctrl-C stops it."""
    try:
        sock = listen(host, port)  # before the indexing: a busy port is known at once
    except ValueError as exc:
        fail(f"--host/--port: {exc}")
    started = time.perf_counter()
    try:
        import uvicorn  # noqa: F401  (serve_app's)

        board = dashboard(run_dirs, dataset, None if arena is None else {"arena": arena})
    except ImportError as exc:
        sock.close()
        fail(f"pastcast view needs the reports extra ({exc.name} is missing): {REPORTS_EXTRA_HINT}")
    except FieldError as exc:
        sock.close()
        if not exc.field:  # the reports extra is missing
            fail(f"pastcast view needs {exc.reason.removeprefix('the dashboard needs ')}")
        fail_app(exc, OPTIONS)
    print_notes(board)
    note(
        f"indexed {len(board.index)} forecast steps from {len(board.read.logs)} run log(s) in "
        f"{time.perf_counter() - started:.1f} s",
        False,
    )
    if host not in LOOPBACK:
        note(
            f"warning: serving on {host} shows the run logs to every machine that reaches it", False
        )
    shown = f"[{host}]" if ":" in host else host
    note(f"dashboard: http://{shown}:{port}/ (Ctrl-C to stop)", False)
    serve_app(board.app, sock)
