"""`pastcast stats ...` commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
import yaml

from pastcast.app import Statistics, coverage_bins, memory_costs, recoveries
from pastcast.app import longitudinal as longitudinal_stats
from pastcast.cli._common import JsonFlag, call_with_params, fail, field_errors, print_json
from pastcast.cli._score import BootstrapOpt, ByOpt, FallbackOpt, RunLogsArg, SeedOpt, print_notes
from pastcast.reports import BOOTSTRAP_DRAWS, BOOTSTRAP_SEED
from pastcast.safejson import clean_json
from pastcast.scoring.analyses import CoverageKind, power_n, power_rounds

app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)


@app.command("power")
def power(
    alpha: Annotated[float, typer.Option("--alpha", help="True edge alpha* to detect (> 0).")],
    q: Annotated[float, typer.Option("--q", help="Mean outcome probability q.")] = 0.5,
    boldness: Annotated[
        float, typer.Option("--boldness", help="Mean |b - p| against the market.")
    ] = 0.15,
    significance: Annotated[
        float, typer.Option("--significance", help="One-sided test level.")
    ] = 0.05,
    power_: Annotated[float, typer.Option("--power", help="Power to reach.")] = 0.8,
    z_alpha: Annotated[
        float | None, typer.Option("--z-alpha", help="Override z_(1-significance).")
    ] = None,
    z_power: Annotated[float | None, typer.Option("--z-power", help="Override z_power.")] = None,
    per_round: Annotated[int, typer.Option("--per-round", min=1, help="Markets per round.")] = 7,
    as_json: JsonFlag = False,
) -> None:
    """Predictions (and rounds) needed to detect an edge alpha* over the market."""
    asked: dict[str, Any] = dict(
        alpha=alpha, q=q, boldness=boldness, significance=significance, power=power_
    )
    asked |= {"z_alpha": z_alpha, "z_power": z_power}
    try:
        n = power_n(**asked)
    except ValueError as err:
        fail(str(err))
    rounds = power_rounds(n, per_round)
    if as_json:
        print_json({**asked, "n": n, "per_round": per_round, "rounds": rounds})
    else:
        typer.echo(f"n = {n} predictions ({rounds} rounds of {per_round})")


def _stats(
    ctx: typer.Context,
    analysis: Callable[..., Statistics],
    as_json: bool,
    options: dict[str, str] | None = None,
) -> None:
    """Run ``analysis`` over the run logs with the command's parameters, print its notes and its
    values; ``options``: the command's own option names of fields (beside ``run_logs``, the
    argument)."""
    with field_errors({"run_logs": "", **(options or {})}):
        done = call_with_params(ctx, analysis)
    print_notes(done.read)
    if as_json:
        print_json(done.values)
    else:  # compact YAML-like text for a terminal
        typer.echo(yaml.safe_dump(clean_json(done.values), sort_keys=False, width=120).rstrip())


@app.command("longitudinal")
def longitudinal(
    ctx: typer.Context,
    run_logs: RunLogsArg,
    by: ByOpt = "agent,setting",
    metric: Annotated[
        str, typer.Option("--metric", help="Metric to follow (any registered one).")
    ] = "brier",
    fallback: FallbackOpt = "uniform",
    bootstrap: BootstrapOpt = BOOTSTRAP_DRAWS,
    seed: SeedOpt = BOOTSTRAP_SEED,
    market_only: Annotated[
        bool,
        typer.Option(
            "--market-only",
            help="Thirds over the dates with a market probability (Forecast-Dojo B.6).",
        ),
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Thirds, step changes, episode gain; new-evidence quartiles and capture from notebooks."""
    _stats(ctx, longitudinal_stats, as_json, {"metric": "--metric"})


@app.command("memory-cost")
def memory_cost_cmd(
    ctx: typer.Context,
    run_logs: RunLogsArg,
    pooled: Annotated[
        bool, typer.Option("--pooled", help="Pool all agents (default: per agent).")
    ] = False,
    by_evidence: Annotated[
        bool,
        typer.Option("--by-evidence", help="Also split later steps by new-evidence quartile."),
    ] = False,
    bootstrap: BootstrapOpt = BOOTSTRAP_DRAWS,
    seed: SeedOpt = BOOTSTRAP_SEED,
    as_json: JsonFlag = False,
) -> None:
    """Memory-on / memory-free resource ratios over matched records, by step phase."""
    _stats(ctx, memory_costs, as_json)


@app.command("coverage")
def coverage_cmd(
    ctx: typer.Context,
    run_logs: RunLogsArg,
    edges: Annotated[
        str, typer.Option("--edges", help="Bin edges of the document count (increasing).")
    ] = "1,5,20",
    kind: Annotated[
        CoverageKind,
        typer.Option("--kind", help="Documents shown (any tool result) or read in full."),
    ] = "shown",
    by: ByOpt = "run_id,agent,setting",
    fallback: FallbackOpt = "uniform",
    bootstrap: BootstrapOpt = BOOTSTRAP_DRAWS,
    seed: SeedOpt = BOOTSTRAP_SEED,
    bins: Annotated[
        Literal["count", "label"],
        typer.Option(
            "--bins",
            help="Bin by the count of documents seen, or by the agent's own evidence label "
            "from its tally (strong, weak, none: Hindcast Table 1).",
        ),
    ] = "count",
    as_json: JsonFlag = False,
) -> None:
    """Scores by retrieval coverage bin (distinct documents the agent saw at the step, or the
    agent's own S/W/N label)."""
    _stats(ctx, coverage_bins, as_json)


@app.command("recoveries")
def recoveries_cmd(
    ctx: typer.Context,
    run_logs: RunLogsArg,
    a: Annotated[
        str, typer.Option("--a", help="Pipeline A (the retrieval agent): COLUMN=VALUE,...")
    ],
    b: Annotated[
        str, typer.Option("--b", help="Pipeline B (the zero-shot baseline): COLUMN=VALUE,...")
    ],
    dataset: Annotated[
        Path | None,
        typer.Option("--dataset", help="The runs' dataset: topics and market durations."),
    ] = None,
    pair_by: Annotated[
        str, typer.Option("--pair-by", help="Columns pairs share besides event, step, rollout.")
    ] = "",
    min_markets: Annotated[
        int, typer.Option("--min-markets", min=0, help="Topics with at least N markets.")
    ] = 4,
    models: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            help="A model's pair of pipelines, NAME:A_SELECTION;B_SELECTION (repeatable).",
        ),
    ] = None,
    fallback: FallbackOpt = "uniform",
    as_json: JsonFlag = False,
) -> None:
    """Recoveries and regressions of A against B (Hindcast section 7): per topic, market
    duration, A's stop reason and model; every step's stop reason counted."""
    _stats(ctx, recoveries, as_json, {"models": "--model"})
