"""Figures of calibration and alpha: reliability diagrams, Murphy bars, cumulative alpha."""

from __future__ import annotations

from datetime import date

import numpy as np
from matplotlib.figure import Figure

from pastcast.reports.figures._base import (
    MAX_PANELS,
    ReportData,
    date_axis,
    new_figure,
)
from pastcast.scoring import group_rows


def _label(group: tuple[str, ...]) -> str:
    return " / ".join(group) or "all"


def reliability(data: ReportData) -> Figure | None:
    """Reliability diagrams of two-outcome forecasts (P(first label)) with 95% event-bootstrap
    bands."""
    groups = [g for g in data.card.ranked() if g.calibration.n > 0][:MAX_PANELS]
    if not groups:
        return None
    fig = new_figure(len(groups), 3.4, 3.4)
    axes = fig.subplots(-(-len(groups) // min(len(groups), 4)), min(len(groups), 4), squeeze=False)
    for ax, g in zip(axes.flat, groups, strict=False):
        bins = [b for b in g.calibration.bins if b.n > 0]
        x = np.array([b.forecast for b in bins])
        y = np.array([b.observed for b in bins])
        lo = np.array([b.low for b in bins])
        hi = np.array([b.high for b in bins])
        ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--")
        ok = np.isfinite(lo) & np.isfinite(hi)
        ax.vlines(x[ok], lo[ok], hi[ok], color="C0", alpha=0.4, lw=4)
        ax.plot(x, y, "o-", color="C0", ms=4)
        ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="forecast", ylabel="observed frequency")
        ax.set_title(
            f"{_label(g.group)} (n={g.calibration.n}, ECE {g.calibration.ece:.3f})", fontsize=9
        )
    for ax in list(axes.flat)[len(groups) :]:
        ax.set_visible(False)
    return fig


def murphy_bars(data: ReportData) -> Figure | None:
    """Murphy decomposition of the [0, 1] Brier score per group: reliability, resolution,
    uncertainty and binning residual."""
    groups = [g for g in data.card.ranked() if g.calibration.murphy is not None][: MAX_PANELS * 2]
    if not groups:
        return None
    parts = ("reliability", "resolution", "uncertainty", "residual")
    values = np.array([[getattr(g.calibration.murphy, p) for p in parts] for g in groups])
    fig = new_figure(1, max(5.0, 0.9 * len(groups) + 2), 3.6)
    ax = fig.subplots()
    width = 0.8 / len(parts)
    pos = np.arange(len(groups))
    for j, part in enumerate(parts):
        ax.bar(pos + (j - 1.5) * width, values[:, j], width, label=part)
    ax.set_xticks(pos, [_label(g.group) for g in groups], rotation=30, ha="right", fontsize=8)
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_ylabel("[0, 1] Brier components")
    ax.legend(fontsize=8)
    return fig


def _alpha_by_round(data: ReportData) -> list[tuple[tuple[str, ...], np.ndarray, np.ndarray]]:
    """Per agent and setting: the forecast rounds (cutoff days) and the mean alpha of each."""
    table = data.table
    alpha = table.metrics(data.fallback)["alpha"]
    cutoff_days = data.cutoff_days
    role = table.codes("role")
    roles = table.keys["role"][1]
    lines = []
    for names, rows in group_rows(table, ("agent", "setting")):
        rows = rows[np.isfinite(alpha[rows])]
        if rows.size == 0 or all(roles[role[i]] == "reference" for i in rows):
            continue
        days = cutoff_days[rows]
        uniq, inv = np.unique(days, return_inverse=True)
        per_round = np.bincount(inv, alpha[rows]) / np.bincount(inv)
        lines.append((names, uniq, per_round))
    return lines


def _alpha_lines(data: ReportData, running_mean: bool, ylabel: str) -> Figure | None:
    lines = _alpha_by_round(data)
    if not lines:
        return None
    fig = new_figure(1, 7.0, 3.8)
    ax = fig.subplots()
    for names, uniq, per_round in lines[: MAX_PANELS * 2]:
        when = np.array([date.fromordinal(int(d)) for d in uniq], dtype="datetime64[D]")
        cum = np.cumsum(per_round)
        ax.plot(when, cum / np.arange(1, cum.size + 1) if running_mean else cum, marker=".",
                label=_label(names))  # fmt: skip
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_ylabel(ylabel)
    ax.set_xlabel("forecast round (cutoff date)")
    ax.legend(fontsize=8)
    date_axis(ax, 8)
    return fig


def cumulative_alpha(data: ReportData) -> Figure | None:
    """Cumulative mean alpha against the market after R forecast rounds (cutoff dates), per
    agent and setting, as Foresight Arena's Figure 5 plots it: (1/R) times the sum of the
    rounds' alphas, a round's alpha the mean over its forecasts of the [0, 1] Brier of the
    market minus the agent's."""
    return _alpha_lines(data, True, "cumulative mean alpha")


def cumulative_alpha_sum(data: ReportData) -> Figure | None:
    """Running sum of the rounds' mean alphas against the market, per agent and setting."""
    return _alpha_lines(data, False, "running sum of alpha")
