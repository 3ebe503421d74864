"""`pastcast report RUN_LOG... --out DIR`: the HTML report (tables and figures) of run logs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pastcast.app import MARKET_AGE_WARNING, report_runs
from pastcast.cli._common import (
    EXIT_FAILED,
    JsonFlag,
    call_with_params,
    fail,
    fail_app,
    note,
    print_json,
    table_console,
)
from pastcast.cli._score import (
    OPTIONS,
    BinsOpt,
    BootstrapOpt,
    DatasetOpt,
    FallbackOpt,
    MarketAgeWarningOpt,
    MaxMarketAgeOpt,
    ReportByOpt,
    RunLogsArg,
    SeedOpt,
    print_notes,
)
from pastcast.errors import FieldError
from pastcast.reports import BOOTSTRAP_DRAWS, BOOTSTRAP_SEED, main_table, to_rich


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
