"""Figures of how forecasts move across an event's dates (Forecast-Dojo): Brier by thirds,
step-to-step change by new-evidence quartile, evidence capture against episode gain, cost per
forecast at each step, and what memory costs. Agents differ in all of these, so each is drawn
per agent (a panel, bar or point each), never as a mean over agents."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from matplotlib.axes import Axes

from pastcast.reports.figures._base import (
    MAX_PANELS,
    Drawn,
    ReportData,
    legend_beside,
    new_figure,
    panel_axes,
    wrapped,
)
from pastcast.scoring import ScoreTable
from pastcast.scoring.analyses import (
    Estimate,
    StepCost,
    capture_gain,
    changes_by_evidence,
    cost_by_step,
    memory_cost,
    thirds,
)

BRIER = "mean Brier (multiclass, 0 to 2)"


def _bars(ax: Axes, pos: np.ndarray, est: list[Estimate], width: float, label: str) -> None:
    mean = np.array([e.mean for e in est])
    err = np.array(
        [
            [e.mean - e.ci_low if np.isfinite(e.ci_low) else 0.0 for e in est],
            [e.ci_high - e.mean if np.isfinite(e.ci_high) else 0.0 for e in est],
        ]
    )
    ax.bar(pos, mean, width, yerr=err, capsize=2, label=label)


def _references(table: ScoreTable) -> set[str]:
    """Agents whose every forecast is a reference's (the market): no research to draw."""
    agent, agents = table.keys["agent"]
    role, roles = table.keys["role"]
    forecasting = {agents[a] for a, r in zip(agent.tolist(), role.tolist(), strict=True)
                   if roles[r] != "reference"}  # fmt: skip
    return set(agents) - forecasting


def brier_thirds(data: ReportData) -> Drawn | None:
    """Mean Brier in the early, middle and late thirds of each event's forecast dates."""
    rows = [
        t
        for t in thirds(
            data.table, ("agent", "setting"), "brier", data.fallback, data.card.bootstrap
        )
        if t.n_events > 0
    ][: MAX_PANELS * 2]
    if not rows:
        return None
    fig = new_figure(1, max(5.0, 1.1 * len(rows) + 2), 3.8)
    ax = fig.subplots()
    pos = np.arange(len(rows))
    width = 0.27
    for j, name in enumerate(("early", "middle", "late")):
        _bars(ax, pos + (j - 1) * width, [getattr(t, name) for t in rows], width, name)
    names = [wrapped(" / ".join(t.group), 1.3, 8) for t in rows]
    ax.set_xticks(pos, names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel(BRIER)
    legend_beside(ax, 8)
    return Drawn(
        fig,
        "Mean Brier score (multiclass, 0 to 2; lower is better) of each agent and setting in "
        "the early, middle and late thirds of each event's forecast dates, over events with at "
        f"least three dates, with 95% event-bootstrap intervals ({data.card.bootstrap} draws).",
    )


def change_by_evidence(data: ReportData) -> Drawn | None:
    """Step-to-step Brier change by quartile of newly dated evidence available."""
    index = data.evidence
    if not any(r.available is not None for r in index):
        return None
    table = data.runs.base_table
    cuts, rows = changes_by_evidence(
        table,
        index,
        ("agent", "setting"),
        "brier",
        data.fallback,
        data.card.bootstrap,
        data.card.seed,
    )
    skip = _references(table)
    drawn = sorted({r.group for r in rows if r.n_transitions > 0 and r.group[0] not in skip})
    agents = sorted({g[0] for g in drawn})[:MAX_PANELS]
    if not agents:
        return None
    fig = new_figure(len(agents), 4.2, 3.4)
    pos = np.arange(4)
    for ax, agent in zip(panel_axes(fig, len(agents)), agents, strict=True):
        settings = [g for g in drawn if g[0] == agent]
        width = 0.8 / len(settings)
        for j, group in enumerate(settings):
            est = [r.change for r in rows if r.group == group]
            _bars(ax, pos + (j - (len(settings) - 1) / 2) * width, est, width, group[1])
        ax.set_xticks(pos, ["Q1", "Q2", "Q3", "Q4"])
        ax.set_xlabel("new-evidence quartile", fontsize=8)
        ax.set_ylabel("B(t) - B(t-1) (multiclass Brier)", fontsize=8)
        ax.axhline(0, color="0.3", lw=0.8)
        ax.set_title(wrapped(agent, 4.0, 9), fontsize=9)
        legend_beside(ax, 7)
    return Drawn(
        fig,
        "Change of the Brier score from one forecast date of an event to the next, "
        "B(t) - B(t-1) (multiclass Brier, 0 to 2; below zero the forecast improved), by "
        "quartile of the newly dated evidence available at the later date (counted from other "
        "models' memory-on notebooks; quartile cut points "
        + ", ".join(f"{c:.2g}" for c in cuts)
        + "), one panel per agent and one bar per setting, with 95% event-bootstrap intervals.",
    )


_RESOURCE_NAMES = {
    "cost_usd": "cost (USD)",
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
    "model_calls": "model calls",
    "tool_calls": "tool calls",
}


def memory_on_cost(data: ReportData) -> Drawn | None:
    """Memory-on against memory-free resource use of each agent on matched forecasts."""
    table = data.runs.base_table
    if not {"memory_on", "memory_free"} <= set(table.keys["setting"][1]):
        return None
    costs = memory_cost(
        table,
        by=("agent",),
        bootstrap=data.card.bootstrap,
        seed=data.card.seed,
        usage=data.resources,
    )
    ratios = [r for r in costs if r.n_matched > 0 and r.free_total > 0]
    agents = sorted({r.group for r in ratios})[:MAX_PANELS]
    if not agents:
        return None
    phases = sorted({r.phase for r in ratios}, key=[r.phase for r in ratios].index)
    fig = new_figure(len(agents), 4.4, 3.6)
    nan = Estimate(np.nan, np.nan, np.nan)
    for ax, agent in zip(panel_axes(fig, len(agents)), agents, strict=True):
        mine = [r for r in ratios if r.group == agent]
        resources = sorted({r.resource for r in mine}, key=[r.resource for r in mine].index)
        pos = np.arange(len(resources))
        width = 0.8 / len(phases)
        for j, phase in enumerate(phases):
            by_res = {r.resource: r.change for r in mine if r.phase == phase}
            est = [by_res.get(res, nan) for res in resources]
            _bars(ax, pos + (j - (len(phases) - 1) / 2) * width, est, width, phase)
        names = [_RESOURCE_NAMES.get(r, r) for r in resources]
        ax.set_xticks(pos, names, rotation=20, ha="right", fontsize=8)
        ax.set_ylabel("memory-on / memory-free - 1 (ratio of sums)", fontsize=8)
        ax.axhline(0, color="0.3", lw=0.8)
        ax.set_title(wrapped(" / ".join(agent), 4.2, 9), fontsize=9)
        legend_beside(ax, 7)
    return Drawn(
        fig,
        "What memory costs, one panel per agent run both with and without memory: for each "
        "resource it used, the sum over memory-on forecasts divided by the sum over the "
        "memory-free forecasts of the same event, date and rollout, minus 1 (ratio of sums; "
        "0 is no change, 1 is twice as much), at the first date, at later dates and over all "
        f"dates, with 95% event-bootstrap intervals ({data.card.bootstrap} draws).",
    )


def capture_against_gain(data: ReportData) -> Drawn | None:
    """Evidence capture kappa against the memory-on first-to-last Brier improvement, with the
    gain's correlation with the search and read counts (B.7)."""
    corr = capture_gain(
        data.runs.base_table,
        data.evidence,
        fallback=data.fallback,
        tool_counts=data.runs.tool_counts(),
    )
    points = [m for m in corr.models if np.isfinite(m.kappa) and np.isfinite(m.gain)]
    if not points:
        return None
    fig = new_figure(1, 5.0, 3.8)
    ax = fig.subplots()
    ax.scatter([m.kappa for m in points], [m.gain for m in points])
    for m in points:
        ax.annotate(
            m.agent, (m.kappa, m.gain), fontsize=7, xytext=(3, 3), textcoords="offset points"
        )
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_xlabel("evidence capture κ")
    ax.set_ylabel("first minus last Brier (multiclass, 0 to 2)", fontsize=8)
    rho = (
        f"Spearman ρ = {corr.spearman_rho:.2f} (p = {corr.p_value:.2g}, {corr.n_models} models)"
        if np.isfinite(corr.spearman_rho)
        else f"{corr.n_models} models: too few for a correlation"
    )
    counts = [
        f"{name} {value:.2f}"
        for name, value in (("searches", corr.search_rho), ("reads", corr.read_rho))
        if np.isfinite(value)
    ]
    if counts:
        rho += "\nρ of the gain with " + ", ".join(counts)
    ax.set_title(rho, fontsize=9)
    return Drawn(
        fig,
        "Evidence capture κ (the slope of an agent's own new notebook entries on the evidence "
        "its peers' notebooks show available) against its memory-on gain, the first minus the "
        "last Brier score of an episode (multiclass, 0 to 2; above zero it improved), one point "
        "per agent, with the Spearman correlation across agents in the title (Forecast-Dojo "
        "Figure 2c) and, below it, the gain's correlation with the agents' mean search and read "
        "calls per memory-on forecast (B.7).",
    )


_COST_UNITS = (
    ("cost_usd", "cost per forecast (USD)", "US dollars (USD) for {} (from the price table)"),
    (
        "input_tokens",
        "input tokens per forecast (tokens)",
        "input tokens (tokens) for {} (no call priced)",
    ),
    (
        "tool_calls",
        "tool calls per forecast (calls)",
        "tool calls (calls) for {} (no model called)",
    ),
)
"""The resource each agent's panel shows: the first it spent anything of."""


def cost_per_step(data: ReportData) -> Drawn | None:
    """Mean cost per forecast at each forecast step, per agent and setting (Figure 3a)."""
    table = data.runs.base_table
    by = ("agent", "setting")
    shown: dict[str, tuple[int, list[StepCost]]] = {}
    for k, (resource, _, _) in enumerate(_COST_UNITS):
        rows = cost_by_step(table, by, resource, usage=data.resources)
        spent: dict[str, list[StepCost]] = defaultdict(list)
        for r in rows:
            spent[r.group[0]].append(r)
        for agent, mine in spent.items():
            if agent not in shown and any(r.mean > 0 for r in mine):
                shown[agent] = (k, mine)
    agents = sorted(shown)[:MAX_PANELS]
    if not agents:
        return None
    fig = new_figure(len(agents), 4.2, 3.4)
    for ax, agent in zip(panel_axes(fig, len(agents)), agents, strict=True):
        k, mine = shown[agent]
        for setting in sorted({r.group[1] for r in mine}):
            line = [r for r in mine if r.group[1] == setting]
            ax.plot([r.step for r in line], [r.mean for r in line], marker="o", label=setting)
        ax.set_xticks(sorted({r.step for r in mine}))
        ax.set_ylim(bottom=0)  # from zero: a flat cost is not drawn as a steep one
        ax.set_xlabel("forecast step t", fontsize=8)
        ax.set_ylabel(_COST_UNITS[k][1], fontsize=8)
        ax.set_title(wrapped(agent, 4.0, 9), fontsize=9)
        legend_beside(ax, 7)
    units = "; ".join(
        _COST_UNITS[k][2].format(", ".join(a for a in agents if shown[a][0] == k))
        for k in range(len(_COST_UNITS))
        if any(shown[a][0] == k for a in agents)
    )
    return Drawn(
        fig,
        "Mean cost per forecast at each forecast step t of an event, one panel per agent and "
        "one line per setting (Forecast-Dojo Figure 3a), each panel in the first resource the "
        f"agent spent: {units}. Later steps average over fewer events; the y axes start at 0.",
    )
