"""`pastcast report RUN_LOG... --out DIR`: the HTML report (tables and figures) of run logs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from pastcast.cli._common import EXIT_FAILED, JsonFlag, fail, note, print_json
from pastcast.cli._score import (
    BinsOpt,
    BootstrapOpt,
    DatasetOpt,
    FallbackOpt,
    ReportByOpt,
    RunLogsArg,
    SeedOpt,
    columns,
    read_runs,
)
from pastcast.reports import GROUP_COLUMNS, main_table, to_rich

EXTRA_HINT = "pip install 'pastcast[reports]'"


def _fractions(text: str | None) -> tuple[float, ...] | None:
    if text is None:
        return None
    try:
        values = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        fail(f"--lookback: expected comma-separated fractions, not {text!r}")
    if not values or any(not 0 < v <= 1 for v in values) or list(values) != sorted(set(values)):
        fail(f"--lookback: expected increasing fractions in (0, 1], not {text!r}")
    return values


def report(
    run_logs: RunLogsArg,
    out: Annotated[Path, typer.Option("--out", help="Directory to write the report into.")],
    by: ReportByOpt = "agent,setting",
    fallback: FallbackOpt = "uniform",
    bootstrap: BootstrapOpt = 4000,
    seed: SeedOpt = 0,
    bins: BinsOpt = 10,
    dataset: DatasetOpt = None,
    event: Annotated[
        list[str] | None,
        typer.Option(
            "--event",
            help="Event of the market-against-forecasts figure (repeatable; default: the events "
            "with most forecast dates).",
        ),
    ] = None,
    figure: Annotated[
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
    as_json: JsonFlag = False,
) -> None:
    """Write a self-contained HTML report (report.html), its tables as Markdown and LaTeX, the
    scorecard as JSON and every figure as PNG and SVG. A figure is drawn only when the runs
    have what it needs."""
    groups = columns(by, allowed=GROUP_COLUMNS)
    fractions = _fractions(lookback)
    try:
        from pastcast.reports.figures import FIGURES
        from pastcast.reports.html import write_html_report
    except ImportError as exc:
        fail(f"pastcast report needs the reports extra ({exc.name} is missing): {EXTRA_HINT}")
    names = list(figure) if figure else None
    for name in names or ():
        if name not in FIGURES:
            fail(f"--figure {name!r}: unknown figure (known: {', '.join(FIGURES.names())})")
    runs = read_runs(run_logs, dataset, groups)
    known = {s.event_id for s in runs.steps}
    for e in event or ():
        if e not in known:
            fail(f"--event {e!r}: no forecast of the run logs is about this event")
    try:
        written = write_html_report(
            runs,
            out,
            by=groups,
            fallback=fallback,
            bootstrap=bootstrap,
            seed=seed,
            bins=bins,
            events=tuple(event or ()),
            lookback=fractions,
            figures=names,
        )
    except ValueError as err:
        fail(str(err))
    except FileExistsError as err:  # a folder pastcast did not make: nothing was written
        fail(f"--out {err}")
    except OSError as err:
        fail(f"--out {out}: cannot write the report ({err.strerror or err})", EXIT_FAILED)
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
    console = Console()
    if not console.is_terminal:
        console = Console(width=200)
    console.print(to_rich(main_table(written.card)))
    note(f"report: {written.html}", as_json)
    note(f"tables: {written.markdown}, {written.latex}; figures: {out / 'figures'}", as_json)
