"""`pastcast stats ...` commands."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

import typer
import yaml

from pastcast.cli._common import JsonFlag, fail, print_json
from pastcast.cli._score import (
    BootstrapOpt,
    ByOpt,
    FallbackOpt,
    RunLogsArg,
    SeedOpt,
    columns,
    read_steps,
)
from pastcast.reports import clean_json
from pastcast.scoring import (
    CoverageKind,
    Metric,
    capture_gain,
    changes_by_evidence,
    coverage_summary,
    episode_gain,
    evidence_index,
    memory_cost,
    power_n,
    power_rounds,
    step_changes,
    table_from_records,
    thirds,
)

app = typer.Typer(
    help="Statistics: power analysis, longitudinal and evidence analyses, memory cost, "
    "coverage bins.",
    no_args_is_help=True,
)


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
    try:
        n = power_n(alpha, q, boldness, significance, power_, z_alpha=z_alpha, z_power=z_power)
    except ValueError as err:
        fail(str(err))
    rounds = power_rounds(n, per_round)
    if as_json:
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


def _emit(payload: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(payload)
    else:  # compact YAML-like text for a terminal
        typer.echo(yaml.safe_dump(clean_json(payload), sort_keys=False, width=120).rstrip())


@app.command("longitudinal")
def longitudinal(
    run_logs: RunLogsArg,
    by: ByOpt = "agent,setting",
    metric: Annotated[Metric, typer.Option("--metric", help="Metric to follow.")] = "brier",
    fallback: FallbackOpt = "uniform",
    bootstrap: BootstrapOpt = 4000,
    seed: SeedOpt = 0,
    as_json: JsonFlag = False,
) -> None:
    """Thirds, step changes, episode gain; new-evidence quartiles and capture from notebooks."""
    groups = columns(by)
    steps = read_steps(run_logs)
    table = table_from_records(steps)
    kw: dict[str, Any] = {
        "metric": metric,
        "fallback": fallback,
        "bootstrap": bootstrap,
        "seed": seed,
    }
    index = evidence_index(steps)
    evidence: dict[str, Any] | None = None
    if any(r.available is not None for r in index):
        cuts, rows = changes_by_evidence(steps, index, **kw)
        capture = capture_gain(steps, index, metric, fallback)
        evidence = {
            "cut_points": list(cuts),
            "by_quartile": [asdict(r) for r in rows],
            "capture": asdict(capture),
        }
    _emit(
        {
            "run_logs": [str(p) for p in run_logs],
            "by": list(groups),
            "metric": metric,
            "thirds": [asdict(t) for t in thirds(table, groups, **kw)],
            "step_changes": [asdict(s) for s in step_changes(table, groups, **kw)],
            "episode_gain": [asdict(g) for g in episode_gain(table, groups, **kw)],
            "evidence": evidence,
        },
        as_json,
    )


@app.command("memory-cost")
def memory_cost_cmd(
    run_logs: RunLogsArg,
    pooled: Annotated[
        bool, typer.Option("--pooled", help="Pool all agents (default: per agent).")
    ] = False,
    by_evidence: Annotated[
        bool,
        typer.Option("--by-evidence", help="Also split later steps by new-evidence quartile."),
    ] = False,
    bootstrap: BootstrapOpt = 4000,
    seed: SeedOpt = 0,
    as_json: JsonFlag = False,
) -> None:
    """Memory-on / memory-free resource ratios over matched records, by step phase."""
    steps = read_steps(run_logs)
    index = evidence_index(steps) if by_evidence else None
    if index is not None and not any(r.available is not None for r in index):
        fail("--by-evidence: no memory-on notebook gives a new-evidence count")
    try:
        rows = memory_cost(
            steps, by=() if pooled else ("agent",), bootstrap=bootstrap, seed=seed, evidence=index
        )
    except ValueError as err:
        fail(str(err))
    _emit({"run_logs": [str(p) for p in run_logs], "ratios": [asdict(r) for r in rows]}, as_json)


@app.command("coverage")
def coverage_cmd(
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
    bootstrap: BootstrapOpt = 4000,
    seed: SeedOpt = 0,
    as_json: JsonFlag = False,
) -> None:
    """Scores by retrieval coverage bin (distinct documents the agent saw at the step)."""
    groups = columns(by)
    try:
        cuts = tuple(int(x) for x in edges.split(","))
    except ValueError:
        fail(f"--edges: expected comma-separated integers, not {edges!r}")
    if not cuts or list(cuts) != sorted(set(cuts)) or cuts[0] < 1:
        fail(f"--edges: expected increasing positive integers, not {edges!r}")
    steps = read_steps(run_logs)
    out = coverage_summary(steps, cuts, kind, groups, fallback, bootstrap=bootstrap, seed=seed)
    _emit(
        {
            "run_logs": [str(p) for p in run_logs],
            "kind": kind,
            "edges": list(cuts),
            "groups": [s.as_dict() for s in out],
        },
        as_json,
    )
