"""Figures of how forecasts move across an event's dates (Forecast-Dojo): Brier by thirds,
step-to-step change by new-evidence quartile, evidence capture against episode gain, cost per
forecast at each step, and what memory costs."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from pastcast.reports.figures._base import MAX_PANELS, ReportData, new_figure
from pastcast.scoring import (
    Estimate,
    capture_gain,
    changes_by_evidence,
    cost_by_step,
    memory_cost,
    thirds,
)


def _bars(ax: Axes, pos: np.ndarray, est: list[Estimate], width: float, label: str) -> None:
    mean = np.array([e.mean for e in est])
    err = np.array(
        [
            [e.mean - e.ci_low if np.isfinite(e.ci_low) else 0.0 for e in est],
            [e.ci_high - e.mean if np.isfinite(e.ci_high) else 0.0 for e in est],
        ]
    )
    ax.bar(pos, mean, width, yerr=err, capsize=2, label=label)


def brier_thirds(data: ReportData) -> Figure | None:
    """Mean Brier in the early, middle and late thirds of each event's forecast dates, with 95%
    event-bootstrap intervals (events with at least three dates)."""
    rows = [
        t
        for t in thirds(
            data.table, ("agent", "setting"), "brier", data.fallback, data.card.bootstrap
        )
        if t.n_events > 0
    ][: MAX_PANELS * 2]
    if not rows:
        return None
    fig = new_figure(1, max(5.0, 1.1 * len(rows) + 2), 3.6)
    ax = fig.subplots()
    pos = np.arange(len(rows))
    width = 0.27
    for j, (name, attr) in enumerate((("early", "early"), ("middle", "middle"), ("late", "late"))):
        _bars(ax, pos + (j - 1) * width, [getattr(t, attr) for t in rows], width, name)
    ax.set_xticks(pos, [" / ".join(t.group) for t in rows], rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("mean Brier [0, 2]")
    ax.legend(fontsize=8)
    return fig


def change_by_evidence(data: ReportData) -> Figure | None:
    """Step-to-step Brier change B(t) - B(t-1) by quartile of newly dated evidence available
    (from other models' memory-on notebooks), per setting, with 95% intervals."""
    index = data.evidence
    if not any(r.available is not None for r in index):
        return None
    table = data.runs.base_table
    cuts, rows = changes_by_evidence(
        table, index, ("setting",), "brier", data.fallback, data.card.bootstrap, data.card.seed
    )
    settings = sorted({r.group for r in rows if r.n_transitions > 0})
    if not settings:
        return None
    fig = new_figure(1, 6.0, 3.6)
    ax = fig.subplots()
    width = 0.8 / max(len(settings), 1)
    pos = np.arange(4)
    for j, setting in enumerate(settings):
        est = [r.change for r in rows if r.group == setting]
        _bars(ax, pos + (j - (len(settings) - 1) / 2) * width, est, width, " / ".join(setting))
    ax.set_xticks(pos, ["Q1", "Q2", "Q3", "Q4"])
    ax.set_xlabel("new-evidence quartile (cut points " + ", ".join(f"{c:.2g}" for c in cuts) + ")")
    ax.set_ylabel("B(t) - B(t-1)")
    ax.axhline(0, color="0.3", lw=0.8)
    ax.legend(fontsize=8)
    return fig


def memory_on_cost(data: ReportData) -> Figure | None:
    """Memory-on against memory-free resource use (ratio of sums minus 1) on matched forecasts,
    at the first step, later steps and all steps, with 95% event-bootstrap intervals."""
    table = data.runs.base_table
    if not {"memory_on", "memory_free"} <= set(table.keys["setting"][1]):
        return None
    costs = memory_cost(
        table, by=(), bootstrap=data.card.bootstrap, seed=data.card.seed, usage=data.resources
    )
    ratios = [r for r in costs if r.n_matched > 0 and r.free_total > 0]
    if not ratios:
        return None
    resources = sorted({r.resource for r in ratios}, key=[r.resource for r in ratios].index)
    phases = sorted({r.phase for r in ratios}, key=[r.phase for r in ratios].index)
    fig = new_figure(1, max(5.0, 1.3 * len(resources) + 2), 3.6)
    ax = fig.subplots()
    pos = np.arange(len(resources))
    width = 0.8 / len(phases)
    for j, phase in enumerate(phases):
        by_res = {r.resource: r.change for r in ratios if r.phase == phase}
        nan = Estimate(np.nan, np.nan, np.nan)
        est = [by_res.get(res, nan) for res in resources]
        _bars(ax, pos + (j - (len(phases) - 1) / 2) * width, est, width, phase)
    ax.set_xticks(pos, resources, rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("memory-on / memory-free - 1")
    ax.axhline(0, color="0.3", lw=0.8)
    ax.legend(fontsize=8)
    return fig


def capture_against_gain(data: ReportData) -> Figure | None:
    """Evidence capture kappa against the memory-on first-to-last Brier improvement, one point per
    model, with the Spearman correlation across models (Figure 2c) and, beside it, the gain's
    correlation with the search and read counts (B.7)."""
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
    ax.set_ylabel("memory-on gain: first minus last Brier")
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
    return fig


def cost_per_step(data: ReportData) -> Figure | None:
    """Mean cost per forecast at each forecast step, per setting (Figure 3a): USD from the price
    table, else input tokens where no call was priced, else tool calls (agents without a model);
    later steps average over fewer events."""
    table = data.runs.base_table
    labels = {
        "cost_usd": "mean cost per forecast (USD)",
        "input_tokens": "mean input tokens per forecast",
        "tool_calls": "mean tool calls per forecast",
    }
    for resource in labels:
        rows = cost_by_step(table, ("setting",), resource, usage=data.resources)
        if any(r.mean > 0 for r in rows):
            break
    else:
        return None
    fig = new_figure(1, 5.5, 3.6)
    ax = fig.subplots()
    for group in sorted({r.group for r in rows}):
        mine = [r for r in rows if r.group == group]
        ax.plot([r.step for r in mine], [r.mean for r in mine], marker="o", label=" / ".join(group))
    ax.set_xticks(sorted({r.step for r in rows}))
    ax.set_xlabel("forecast step t (later steps: fewer events)")
    ax.set_ylabel(labels[resource])
    ax.legend(fontsize=8)
    return fig
