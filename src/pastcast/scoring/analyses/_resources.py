"""What memory saves: resource use of memory-on against memory-free runs (Forecast-Dojo B.5,
Figure 3; docs/scoring.md, "Memory cost"). Both settings are compared on the same forecasts,
matched on (agent, event, step, rollout); step indices are 0-based (the paper's t = 1 is 0).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pastcast.runlog import StepRecord
from pastcast.scoring._aggregate import _select, group_rows
from pastcast.scoring._bootstrap import ratio_bootstrap
from pastcast.scoring._table import ScoreTable
from pastcast.scoring.analyses._evidence import EvidenceRow, evidence_quartiles
from pastcast.scoring.analyses._longitudinal import Estimate

RESOURCES = ("cost_usd", "input_tokens", "output_tokens", "model_calls", "tool_calls")
PHASES: Mapping[str, tuple[int, int | None]] = {
    "first": (0, 0),
    "later": (1, None),
    "all": (0, None),
}
"""Phase name -> (first step, last step or None), 0-based step indices."""

MatchKey = tuple[str, str, int, int]
Floats = NDArray[np.float64]


@dataclass(frozen=True)
class ResourceRatio:
    group: tuple[str, ...]
    phase: str
    resource: str
    n_matched: int
    n_events: int
    on_total: float
    free_total: float
    ratio: Estimate
    """sum(memory-on) / sum(memory-free) with a 95% event-bootstrap interval."""
    change: Estimate
    """ratio - 1: the relative change (negative is a saving)."""


def resource_rows(records: Iterable[StepRecord]) -> Floats:
    """Per record, the resources of ``RESOURCES`` it used, one row each: what ``memory_cost`` and
    ``cost_by_step`` read beside a score table."""
    use = [
        (u.cost_usd, u.input_tokens, u.output_tokens, u.model_calls, len(r.episode.tool_calls))
        for r in records
        for u in (r.episode.usage,)
    ]
    return np.array(use, dtype=np.float64).reshape(len(use), len(RESOURCES))


def _check_usage(table: ScoreTable, usage: Floats, name: str) -> None:
    """``usage`` must hold one row of ``RESOURCES`` per row of ``table``."""
    if usage.shape != (len(table), len(RESOURCES)):
        raise ValueError(
            f"{name}: usage is {usage.shape}, not one row of {len(RESOURCES)} per table row"
        )


def _index(table: ScoreTable, setting: str) -> dict[MatchKey, int]:
    """The agents' rows of ``setting`` by (agent, event, step, rollout)."""
    rows = np.flatnonzero(_select(table, {"setting": setting, "role": "agent"})).tolist()
    agent, agents = table.keys["agent"]
    event, events = table.keys["event"]
    run, runs = table.keys["run_id"]
    out: dict[MatchKey, int] = {}
    for i, a, e, s, r in zip(
        rows,
        agent[rows].tolist(),
        event[rows].tolist(),
        table.step[rows].tolist(),
        table.rollout[rows].tolist(),
        strict=True,
    ):
        key = (agents[a], events[e], s, r)
        if key in out:
            raise ValueError(
                f"memory_cost: two {setting} records for agent {agents[a]!r}, event "
                f"{events[e]!r}, step {s}, rollout {r} (runs "
                f"{runs[run[out[key]]]!r} and {runs[run[i]]!r}); give each run its own agent name"
            )
        out[key] = i
    return out


def memory_cost(
    table: ScoreTable,
    by: Sequence[str] = ("agent",),
    resources: Sequence[str] = RESOURCES,
    bootstrap: int = 4000,
    seed: int = 0,
    evidence: Sequence[EvidenceRow] | None = None,
    *,
    usage: Floats,
) -> tuple[ResourceRatio, ...]:
    """Memory-on / memory-free ratios of summed resources per group (``by``: "agent" or
    nothing for all agents pooled), phase and resource; with an ``evidence`` index also per
    new-evidence quartile of the later steps. ``usage``: each row's ``RESOURCES``."""
    if set(by) - {"agent"}:
        raise ValueError(f"memory_cost: can group by agent only, not {list(by)}")
    unknown = set(resources) - set(RESOURCES)
    if unknown:
        raise ValueError(f"memory_cost: unknown resources {sorted(unknown)} (know {RESOURCES})")
    _check_usage(table, usage, "memory_cost")
    use = usage[:, [RESOURCES.index(r) for r in resources]]
    a, b = _index(table, "memory_on"), _index(table, "memory_free")
    keys = sorted(a.keys() & b.keys())
    rng = np.random.default_rng(seed)
    groups = sorted({(k[0],) for k in keys}) if by else [()]
    quartile: dict[tuple[str, str, int], int] = {}
    spans = [(name, lo, hi, 0) for name, (lo, hi) in PHASES.items()]
    if evidence is not None:
        cuts = evidence_quartiles(evidence)
        for row in evidence:
            if row.available is not None and row.step >= 1:
                q = int(np.searchsorted(cuts, row.available, side="left")) + 1
                quartile[(row.agent, row.event, row.step)] = q
        spans += [(f"later Q{q}", 1, None, q) for q in (1, 2, 3, 4)]
    out = []
    for group in groups:
        for phase, lo, hi, q in spans:
            sel = [
                k
                for k in keys
                if (not group or k[0] == group[0])
                and k[2] >= lo
                and (hi is None or k[2] <= hi)
                and (q == 0 or quartile.get((k[0], k[1], k[2])) == q)
            ]
            use_on = use[np.array([a[k] for k in sel], dtype=np.int64)]
            use_free = use[np.array([b[k] for k in sel], dtype=np.int64)]
            _, event = np.unique(np.array([k[1] for k in sel], dtype=object), return_inverse=True)
            event = event.reshape(-1).astype(np.int64)
            low, high = ratio_bootstrap(event, use_on, use_free, bootstrap, rng)
            for j, res in enumerate(resources):
                on_t, free_t = float(use_on[:, j].sum()), float(use_free[:, j].sum())
                ratio = on_t / free_t if free_t > 0 else math.nan
                out.append(
                    ResourceRatio(
                        group=group,
                        phase=phase,
                        resource=res,
                        n_matched=len(sel),
                        n_events=int(np.unique(event).size),
                        on_total=on_t,
                        free_total=free_t,
                        ratio=Estimate(ratio, float(low[j]), float(high[j])),
                        change=Estimate(ratio - 1, float(low[j]) - 1, float(high[j]) - 1),
                    )
                )
    return tuple(out)


@dataclass(frozen=True)
class StepCost:
    """Mean use of one resource per forecast at one forecast step (Figure 3a)."""

    group: tuple[str, ...]
    step: int
    """The paper's 1-based step t (``step_index + 1``)."""
    resource: str
    mean: float
    n_forecasts: int
    n_events: int
    """Events with a forecast at this step: later steps average over fewer."""


def cost_by_step(
    table: ScoreTable,
    by: Sequence[str] = ("setting",),
    resource: str = "cost_usd",
    *,
    usage: Floats,
) -> tuple[StepCost, ...]:
    """Mean ``resource`` per forecast at each forecast step, per group of ``by`` (key columns)
    (Forecast-Dojo Figure 3a: cost per forecast at each step, by setting). Agents only; the
    market and baselines are references without a research cost. ``usage`` as ``memory_cost``'s."""
    if resource not in RESOURCES:
        raise ValueError(f"cost_by_step: unknown resource {resource!r} (know {RESOURCES})")
    _check_usage(table, usage, "cost_by_step")
    value = usage[:, RESOURCES.index(resource)]
    agents = _select(table, {"role": "agent"})
    event = table.codes("event")
    out = []
    for group, rows in group_rows(table, by):
        rows = rows[agents[rows]]
        steps = table.step[rows]
        for step in np.unique(steps).tolist():
            at = rows[steps == step]
            n_events = int(np.unique(event[at]).size)
            mean = float(np.mean(value[at]))
            out.append(StepCost(group, step + 1, resource, mean, int(at.size), n_events))
    return tuple(out)
