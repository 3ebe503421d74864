"""`pastcast compare BASE.jsonl [TUNED.jsonl]`: two runs, or two agents of one run, on the same
steps, paired (Table 4)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Annotated

import typer

from pastcast.app import compare_runs
from pastcast.cli._common import (
    JsonFlag,
    call_with_params,
    fail_app,
    field_errors,
    print_json,
    table_console,
)
from pastcast.cli._score import BootstrapOpt, DatasetOpt, FallbackOpt, SeedOpt
from pastcast.reports import BOOTSTRAP_DRAWS, BOOTSTRAP_SEED, comparison_table, to_markdown, to_rich

OPTIONS = {"base": "BASE", "tuned": "TUNED"}


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
    with field_errors(OPTIONS, fail_app):
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
