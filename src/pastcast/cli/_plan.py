"""`pastcast plan FILE`: what an experiment plan will run and cost, before running it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from pastcast.app import plan_estimate, read_plan
from pastcast.cli._common import JsonFlag, fail, print_json
from pastcast.errors import FieldError
from pastcast.runner import PlanEstimate

__all__ = ["plan"]


def _money(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:,.2f}"


def _table(est: PlanEstimate) -> Table:
    table = Table(title=f"{est.episodes:,} episodes of {est.agents} agents on {est.dataset_id}")
    for col in ("agent", "setting", "model", "episodes", "calls", "calls max", "tokens in",
                "tokens out", "cost", "cost max"):  # fmt: skip
        table.add_column(col, justify="left" if col in ("agent", "setting", "model") else "right")
    for r in est.rows:
        table.add_row(
            r.agent,
            r.setting,
            r.model or "-",
            f"{r.episodes:,}",
            f"{r.model_calls:,}",
            f"{r.model_calls_max:,}",
            f"{r.input_tokens:,}",
            f"{r.output_tokens:,}",
            _money(r.cost_usd),
            _money(r.cost_max_usd),
        )
    return table


def plan(
    file: Annotated[Path, typer.Argument(help="Experiment plan (TOML, or YAML for .yaml/.yml).")],
    as_json: JsonFlag = False,
) -> None:
    """Show what a plan runs before running it: the work, the model calls, an estimated token
    count and cost from the price table, and events a model may remember (resolved before its
    knowledge cutoff). Run it with `pastcast run --config FILE`."""
    try:
        checked = read_plan(file)
    except FieldError as exc:
        fail(exc.reason)
    try:
        est = plan_estimate(checked)
    except FieldError as exc:  # a dataset that cannot be read, a price file
        fail(f"{file}: {exc}")
    if as_json:
        print_json(est.model_dump(mode="json"))
        return
    console = Console()
    if not console.is_terminal:
        console = Console(width=160)  # keep the table readable in logs and pipes
    console.print(_table(est))
    typer.echo(
        f"{est.events} events, {est.steps} forecast steps, {est.agents} agents x "
        f"{est.rollouts} rollouts = {est.episodes:,} episodes"
    )
    typer.echo(
        f"model calls: ~{est.model_calls:,} (at most {est.model_calls_max:,}); tokens: "
        f"~{est.input_tokens:,} in, ~{est.output_tokens:,} out"
    )
    typer.echo(
        f"estimated cost: ${est.cost_usd:,.2f} (at most ${est.cost_max_usd:,.2f})"
        + (f"; unpriced: {', '.join(est.unpriced)}" if est.unpriced else "")
    )
    for warning in est.warnings:
        typer.echo(f"warning: {warning}")
