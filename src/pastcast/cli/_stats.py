"""`pastcast stats ...` commands."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any, cast

import typer
import yaml

from pastcast.cli._common import fail, print_json
from pastcast.cli._score import CONVENTIONS, GROUP_COLUMNS
from pastcast.reports import clean_json
from pastcast.runlog import RunLogError, StepRecord, read_run_log
from pastcast.scoring import (
    METRICS,
    Convention,
    CoverageKind,
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


def _steps(run_logs: list[Path]) -> list[StepRecord]:
    steps: list[StepRecord] = []
    for path in run_logs:
        try:
            steps.extend(read_run_log(path).steps)
        except RunLogError as err:
            fail(str(err))
    if not steps:
        fail("no forecast steps in " + ", ".join(str(p) for p in run_logs))
    return steps


def _columns(text: str, allowed: tuple[str, ...], option: str) -> tuple[str, ...]:
    cols = tuple(c.strip() for c in text.split(",") if c.strip())
    bad = [c for c in cols if c not in allowed]
    if bad:
        fail(f"{option}: unknown column {bad[0]!r} (expected some of {', '.join(allowed)})")
    return cols


def _convention(fallback: str) -> Convention:
    if fallback not in CONVENTIONS:
        fail(f"--fallback: expected one of {', '.join(CONVENTIONS)}, not {fallback!r}")
    return cast(Convention, fallback)


def _emit(payload: dict[str, Any], json_: bool) -> None:
    payload = clean_json(payload)
    if json_:
        print_json(payload)
    else:  # compact YAML-like text for a terminal
        typer.echo(yaml.safe_dump(payload, sort_keys=False, width=120).rstrip())


RUN_LOGS = typer.Argument(..., help="Run log files (JSONL).")
BOOTSTRAP = typer.Option(4000, "--bootstrap", min=0, help="Event-bootstrap draws for CIs.")
SEED = typer.Option(0, "--seed", help="Seed of the bootstrap.")
FALLBACK = typer.Option("uniform", "--fallback", help="Unusable forecasts: uniform|worst|exclude.")
JSON = typer.Option(False, "--json", help="Print JSON (default: readable text).")


@app.command("longitudinal")
def longitudinal(
    run_logs: list[Path] = RUN_LOGS,
    by: str = typer.Option("agent,setting", "--by", help="Grouping columns."),
    metric: str = typer.Option("brier", "--metric", help=f"One of {', '.join(METRICS)}."),
    fallback: str = FALLBACK,
    bootstrap: int = BOOTSTRAP,
    seed: int = SEED,
    json_: bool = JSON,
) -> None:
    """Thirds, step changes, episode gain; new-evidence quartiles and capture from notebooks."""
    steps = _steps(run_logs)
    groups = _columns(by, GROUP_COLUMNS, "--by")
    conv = _convention(fallback)
    if metric not in METRICS:
        fail(f"--metric: expected one of {', '.join(METRICS)}, not {metric!r}")
    table = table_from_records(steps)
    kw: dict[str, Any] = {"metric": metric, "fallback": conv, "bootstrap": bootstrap, "seed": seed}
    index = evidence_index(steps)
    evidence: dict[str, Any] | None = None
    if any(r.available is not None for r in index):
        cuts, rows = changes_by_evidence(steps, index, **kw)
        capture = capture_gain(steps, index, metric, conv)
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
        json_,
    )


@app.command("memory-cost")
def memory_cost_cmd(
    run_logs: list[Path] = RUN_LOGS,
    pooled: bool = typer.Option(False, "--pooled", help="Pool all agents (default: per agent)."),
    by_evidence: bool = typer.Option(
        False, "--by-evidence", help="Also split later steps by new-evidence quartile."
    ),
    bootstrap: int = BOOTSTRAP,
    seed: int = SEED,
    json_: bool = JSON,
) -> None:
    """Memory-on / memory-free resource ratios over matched records, by step phase."""
    steps = _steps(run_logs)
    index = evidence_index(steps) if by_evidence else None
    if index is not None and not any(r.available is not None for r in index):
        fail("--by-evidence: no memory-on notebook gives a new-evidence count")
    try:
        rows = memory_cost(
            steps, by=() if pooled else ("agent",), bootstrap=bootstrap, seed=seed, evidence=index
        )
    except ValueError as err:
        fail(str(err))
    _emit({"run_logs": [str(p) for p in run_logs], "ratios": [asdict(r) for r in rows]}, json_)


@app.command("coverage")
def coverage_cmd(
    run_logs: list[Path] = RUN_LOGS,
    edges: str = typer.Option("1,5,20", "--edges", help="Bin edges of the document count."),
    kind: str = typer.Option("shown", "--kind", help="shown (any tool result) or read (full)."),
    by: str = typer.Option("run_id,agent,setting", "--by", help="Grouping columns."),
    fallback: str = FALLBACK,
    bootstrap: int = BOOTSTRAP,
    seed: int = SEED,
    json_: bool = JSON,
) -> None:
    """Scores by retrieval coverage bin (distinct documents the agent saw at the step)."""
    steps = _steps(run_logs)
    groups = _columns(by, GROUP_COLUMNS, "--by")
    conv = _convention(fallback)
    if kind not in ("shown", "read"):
        fail(f"--kind: expected shown or read, not {kind!r}")
    try:
        cuts = tuple(int(x) for x in edges.split(","))
    except ValueError:
        fail(f"--edges: expected comma-separated integers, not {edges!r}")
    if not cuts or list(cuts) != sorted(set(cuts)) or cuts[0] < 1:
        fail(f"--edges: expected increasing positive integers, not {edges!r}")
    out = coverage_summary(
        steps, cuts, cast(CoverageKind, kind), groups, conv, bootstrap=bootstrap, seed=seed
    )
    _emit(
        {
            "run_logs": [str(p) for p in run_logs],
            "kind": kind,
            "edges": list(cuts),
            "groups": [s.as_dict() for s in out],
        },
        json_,
    )
