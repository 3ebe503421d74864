"""`pastcast stats ...` commands."""

from __future__ import annotations

import typer

from pastcast.cli._common import fail, print_json
from pastcast.scoring import power_n, power_rounds

app = typer.Typer(help="Statistics helpers (power analysis).", no_args_is_help=True)


@app.command("power")
def power(
    alpha: float = typer.Option(..., "--alpha", help="True edge alpha* to detect (> 0)."),
    q: float = typer.Option(0.5, "--q", help="Mean outcome probability q."),
    boldness: float = typer.Option(0.15, "--boldness", help="Mean |b - p| against the market."),
    significance: float = typer.Option(0.05, "--significance", help="One-sided test level."),
    power_: float = typer.Option(0.8, "--power", help="Power to reach."),
    z_alpha: float | None = typer.Option(None, "--z-alpha", help="Override z_(1-significance)."),
    z_power: float | None = typer.Option(None, "--z-power", help="Override z_power."),
    per_round: int = typer.Option(7, "--per-round", min=1, help="Markets per round."),
    json_: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Predictions (and rounds) needed to detect an edge alpha* over the market."""
    try:
        n = power_n(alpha, q, boldness, significance, power_, z_alpha=z_alpha, z_power=z_power)
    except ValueError as err:
        fail(str(err))
    rounds = power_rounds(n, per_round)
    if json_:
        print_json(
            {
                "alpha": alpha,
                "q": q,
                "boldness": boldness,
                "significance": significance,
                "power": power_,
                "z_alpha": z_alpha,
                "z_power": z_power,
                "n": n,
                "per_round": per_round,
                "rounds": rounds,
            }
        )
    else:
        typer.echo(f"n = {n} predictions ({rounds} rounds of {per_round})")
