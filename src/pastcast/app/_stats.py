"""The statistics of run logs (``pastcast stats``): the longitudinal and evidence analyses, the
memory cost and retrieval coverage bins, each over the runs read once, as JSON-ready dicts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from pastcast.app._errors import AppError
from pastcast.app._reading import RunsRead, read_runs
from pastcast.app._reports import TABLE_COLUMNS, group_columns
from pastcast.scoring import (
    Convention,
    CoverageKind,
    Metric,
    capture_gain,
    changes_by_evidence,
    coverage_summary,
    episode_gain,
    evidence_index,
    memory_cost,
    step_changes,
    table_from_records,
    thirds,
)

__all__ = ["Statistics", "coverage_bins", "longitudinal", "memory_costs"]


@dataclass(frozen=True)
class Statistics:
    """An analysis as JSON-ready values, and the runs it read."""

    values: dict[str, Any]
    read: RunsRead


def longitudinal(
    run_logs: Sequence[str | Path],
    *,
    by: str | Sequence[str] = ("agent", "setting"),
    metric: Metric = "brier",
    fallback: Convention = "uniform",
    bootstrap: int = 4000,
    seed: int = 0,
) -> Statistics:
    """Thirds, step changes and episode gain per group; with memory-on notebooks, the changes by
    new-evidence quartile and the capture gain."""
    groups = group_columns(by, TABLE_COLUMNS)
    read = read_runs(run_logs)
    steps = list(read.steps)
    table = table_from_records(steps)
    kw: dict[str, Any] = {"metric": metric, "fallback": fallback, "bootstrap": bootstrap}
    kw["seed"] = seed
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
    values = {
        "run_logs": [str(p) for p in run_logs],
        "by": list(groups),
        "metric": metric,
        "thirds": [asdict(t) for t in thirds(table, groups, **kw)],
        "step_changes": [asdict(s) for s in step_changes(table, groups, **kw)],
        "episode_gain": [asdict(g) for g in episode_gain(table, groups, **kw)],
        "evidence": evidence,
    }
    return Statistics(values, read)


def memory_costs(
    run_logs: Sequence[str | Path],
    *,
    pooled: bool = False,
    by_evidence: bool = False,
    bootstrap: int = 4000,
    seed: int = 0,
) -> Statistics:
    """Memory-on / memory-free resource ratios over matched records by step phase, per agent
    (or ``pooled``), and with ``by_evidence`` split by new-evidence quartile."""
    read = read_runs(run_logs)
    steps = list(read.steps)
    index = evidence_index(steps) if by_evidence else None
    if index is not None and not any(r.available is not None for r in index):
        raise AppError("by_evidence", "no memory-on notebook gives a new-evidence count")
    try:
        rows = memory_cost(
            steps, by=() if pooled else ("agent",), bootstrap=bootstrap, seed=seed, evidence=index
        )
    except ValueError as exc:
        raise AppError("run_logs", str(exc)) from None
    values = {"run_logs": [str(p) for p in run_logs], "ratios": [asdict(r) for r in rows]}
    return Statistics(values, read)


def _edges(edges: str | Sequence[int]) -> tuple[int, ...]:
    try:
        cuts = tuple(int(x) for x in (edges.split(",") if isinstance(edges, str) else edges))
    except ValueError:
        raise AppError("edges", f"expected comma-separated integers, not {edges!r}") from None
    if not cuts or list(cuts) != sorted(set(cuts)) or cuts[0] < 1:
        raise AppError("edges", f"expected increasing positive integers, not {edges!r}")
    return cuts


def coverage_bins(
    run_logs: Sequence[str | Path],
    *,
    edges: str | Sequence[int] = (1, 5, 20),
    kind: CoverageKind = "shown",
    by: str | Sequence[str] = ("run_id", "agent", "setting"),
    fallback: Convention = "uniform",
    bootstrap: int = 4000,
    seed: int = 0,
) -> Statistics:
    """Scores by retrieval coverage bin: the distinct documents the agent saw at the step
    (``shown`` by any tool result, or ``read`` in full), binned at ``edges``."""
    groups = group_columns(by, TABLE_COLUMNS)
    cuts = _edges(edges)
    read = read_runs(run_logs)
    out = coverage_summary(
        list(read.steps), cuts, kind, groups, fallback, bootstrap=bootstrap, seed=seed
    )
    values = {
        "run_logs": [str(p) for p in run_logs],
        "kind": kind,
        "edges": list(cuts),
        "groups": [s.as_dict() for s in out],
    }
    return Statistics(values, read)
