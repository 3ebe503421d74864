"""What memory saves: resource use of memory-on against memory-free runs (Forecast-Dojo B.5,
Figure 3).

Ratios are of summed resources over records matched on (agent, event, step, rollout), so both
settings are compared on exactly the same forecasts; intervals resample events. Step indices
are 0-based here: the paper's first step t = 1 is step 0, and its later steps t >= 2 (those
that carry a notebook) are steps >= 1.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from pastcast.runlog import StepRecord
from pastcast.scoring._bootstrap import ratio_bootstrap
from pastcast.scoring.analyses._evidence import EvidenceRow, evidence_quartiles
from pastcast.scoring.analyses._longitudinal import Estimate

__all__ = [
    "PHASES",
    "RESOURCES",
    "ResourceRatio",
    "StepCost",
    "cost_by_step",
    "memory_cost",
    "resource_use",
]

RESOURCES = ("cost_usd", "input_tokens", "output_tokens", "model_calls", "tool_calls")
PHASES: Mapping[str, tuple[int, int | None]] = {
    "first": (0, 0),
    "later": (1, None),
    "all": (0, None),
}
"""Phase name -> (first step, last step or None), 0-based step indices."""

MatchKey = tuple[str, str, int, int]


def resource_use(record: StepRecord) -> dict[str, float]:
    """The resources one logged forecast used."""
    u = record.episode.usage
    return {
        "cost_usd": u.cost_usd,
        "input_tokens": float(u.input_tokens),
        "output_tokens": float(u.output_tokens),
        "model_calls": float(u.model_calls),
        "tool_calls": float(len(record.episode.tool_calls)),
    }


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


def _index(records: Iterable[StepRecord], setting: str) -> dict[MatchKey, StepRecord]:
    out: dict[MatchKey, StepRecord] = {}
    for r in records:
        if r.setting != setting or r.role != "agent":
            continue
        key = (r.agent, r.event_id, r.step_index, r.rollout)
        if key in out:
            raise ValueError(
                f"memory_cost: two {setting} records for agent {r.agent!r}, event "
                f"{r.event_id!r}, step {r.step_index}, rollout {r.rollout} (runs "
                f"{out[key].run_id!r} and {r.run_id!r}); give each run its own agent name"
            )
        out[key] = r
    return out


def memory_cost(
    records: Iterable[StepRecord],
    by: Sequence[str] = ("agent",),
    phases: Mapping[str, tuple[int, int | None]] = PHASES,
    resources: Sequence[str] = RESOURCES,
    bootstrap: int = 4000,
    seed: int = 0,
    on: str = "memory_on",
    free: str = "memory_free",
    evidence: Sequence[EvidenceRow] | None = None,
) -> tuple[ResourceRatio, ...]:
    """Memory-on / memory-free ratios of summed resources per group (``by``: "agent" or
    nothing for all agents pooled), phase and resource.

    With an ``evidence`` index, later steps are also split by the quartile of the agent's
    new-evidence index at the step (phases "later Q1" .. "later Q4", Figure 3b).
    """
    if set(by) - {"agent"}:
        raise ValueError(f"memory_cost: can group by agent only, not {list(by)}")
    unknown = set(resources) - set(RESOURCES)
    if unknown:
        raise ValueError(f"memory_cost: unknown resources {sorted(unknown)} (know {RESOURCES})")
    recs = list(records)
    a, b = _index(recs, on), _index(recs, free)
    keys = sorted(a.keys() & b.keys())
    rng = np.random.default_rng(seed)
    groups = sorted({(k[0],) for k in keys}) if by else [()]
    quartile: dict[tuple[str, str, int], int] = {}
    if evidence is not None:
        cuts = evidence_quartiles(evidence)
        for row in evidence:
            if row.available is not None and row.step >= 1:
                q = int(np.searchsorted(cuts, row.available, side="left")) + 1
                quartile[(row.agent, row.event, row.step)] = q
    spans = [(name, lo, hi, 0) for name, (lo, hi) in phases.items()]
    if evidence is not None:
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
            use_on = np.array([[resource_use(a[k])[r] for r in resources] for k in sel])
            use_free = np.array([[resource_use(b[k])[r] for r in resources] for k in sel])
            use_on = use_on.reshape(len(sel), len(resources))
            use_free = use_free.reshape(len(sel), len(resources))
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
    records: Iterable[StepRecord],
    by: Sequence[str] = ("setting",),
    resource: str = "cost_usd",
) -> tuple[StepCost, ...]:
    """Mean ``resource`` per forecast at each forecast step, per group of record fields
    (Forecast-Dojo Figure 3a: cost per forecast at each step, by setting). Agents only; the
    market and baselines are references without a research cost."""
    if resource not in RESOURCES:
        raise ValueError(f"cost_by_step: unknown resource {resource!r} (know {RESOURCES})")
    sums: dict[tuple[tuple[str, ...], int], list[float]] = {}
    events: dict[tuple[tuple[str, ...], int], set[str]] = {}
    for r in records:
        if r.role != "agent":
            continue
        group = tuple(str(getattr(r, f)) for f in by)
        key = (group, r.step_index + 1)
        sums.setdefault(key, []).append(resource_use(r)[resource])
        events.setdefault(key, set()).add(r.event_id)
    return tuple(
        StepCost(group, step, resource, float(np.mean(v)), len(v), len(events[(group, step)]))
        for (group, step), v in sorted(sums.items())
    )
