"""Figures of calibration and alpha: reliability diagrams, Murphy bars, cumulative alpha.

Each is drawn per agent (and the other columns grouped by): a report grouped without the agent
column still draws one panel, bar group or line per agent, never a mean over agents."""

from __future__ import annotations

from datetime import date

import numpy as np

from pastcast.reports.figures._base import (
    MAX_PANELS,
    Drawn,
    ReportData,
    date_axis,
    legend_beside,
    new_figure,
    panel_axes,
    wrapped,
)
from pastcast.scoring.analyses import Calibration, calibration, group_rows


def _label(group: tuple[str, ...]) -> str:
    return " / ".join(group) or "all"


def _calibrations(data: ReportData) -> tuple[tuple[str, ...], list[Calibration]]:
    """The columns grouped by and each group's calibration, forecasting groups best first: the
    scorecard's groups when they name the agent, else the same grouping per agent."""
    card = data.card
    if "agent" in card.by:
        return card.by, [g.calibration for g in card.ranked()]
    by = ("agent", *card.by)
    cals = calibration(data.runs.table(), by, card.fallback, card.bins, card.bootstrap, card.seed)
    return by, list(cals)


def reliability(data: ReportData) -> Drawn | None:
    """Reliability diagrams of two-outcome forecasts with 95% event-bootstrap bands."""
    by, cals = _calibrations(data)
    groups = [c for c in cals if c.n > 0][:MAX_PANELS]
    if not groups:
        return None
    fig = new_figure(len(groups), 3.4, 3.4)
    for ax, c in zip(panel_axes(fig, len(groups)), groups, strict=True):
        bins = [b for b in c.bins if b.n > 0]
        x = np.array([b.forecast for b in bins])
        y = np.array([b.observed for b in bins])
        lo = np.array([b.low for b in bins])
        hi = np.array([b.high for b in bins])
        ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--")
        ok = np.isfinite(lo) & np.isfinite(hi)
        ax.vlines(x[ok], lo[ok], hi[ok], color="C0", alpha=0.4, lw=4)
        ax.plot(x, y, "o-", color="C0", ms=4)
        ax.set(xlim=(0, 1), ylim=(0, 1))
        ax.set_xlabel("mean forecast P(first outcome)", fontsize=8)
        ax.set_ylabel("observed frequency", fontsize=8)
        title = f"{_label(c.group)} (n={c.n}, ECE {c.ece:.3f})"
        ax.set_title(wrapped(title, 3.2, 8), fontsize=8)
    return Drawn(
        fig,
        f"Reliability of two-outcome forecasts, one panel per {' and '.join(by)}: in each of "
        f"{data.card.bins} equal-width bins of the forecast probability of the first offered "
        "outcome, the share of forecasts whose event resolved to it (dots) against the bin's "
        f"mean forecast, with its 95% event-bootstrap band ({data.card.bootstrap} draws). The "
        "dashed diagonal is perfect calibration; each title gives the number of two-outcome "
        "forecasts and the expected calibration error (ECE).",
    )


def murphy_bars(data: ReportData) -> Drawn | None:
    """Murphy decomposition of the [0, 1] Brier score."""
    by, cals = _calibrations(data)
    groups = [c for c in cals if c.murphy is not None][: MAX_PANELS * 2]
    if not groups:
        return None
    parts = ("reliability", "resolution", "uncertainty", "residual")
    values = np.array([[getattr(c.murphy, p) for p in parts] for c in groups])
    width_in = max(5.0, 0.9 * len(groups) + 2)
    fig = new_figure(1, width_in, 3.8)
    ax = fig.subplots()
    width = 0.8 / len(parts)
    pos = np.arange(len(groups))
    for j, part in enumerate(parts):
        ax.bar(pos + (j - 1.5) * width, values[:, j], width, label=part)
    names = [wrapped(_label(c.group), 1.2, 8) for c in groups]
    ax.set_xticks(pos, names, rotation=30, ha="right", fontsize=8)
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_ylabel("[0, 1] Brier components")
    legend_beside(ax, 8)
    return Drawn(
        fig,
        f"Murphy decomposition of the [0, 1] Brier score of two-outcome forecasts, one bar group "
        f"per {' and '.join(by)}: Brier = uncertainty + reliability - resolution + binning "
        f"residual, over {data.card.bins} equal-width bins of the forecast probability. Lower "
        "reliability and higher resolution are better; uncertainty depends on the outcomes "
        "alone.",
    )


def _alpha_lines(data: ReportData, running_mean: bool) -> Drawn | None:
    # per agent and setting: the forecast rounds (cutoff days) and the mean alpha of each
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
    if not lines:
        return None
    fig = new_figure(1, 7.0, 3.8)
    ax = fig.subplots()
    for names, uniq, per_round in lines[: MAX_PANELS * 2]:
        when = np.array([date.fromordinal(int(d)) for d in uniq], dtype="datetime64[D]")
        cum = np.cumsum(per_round)
        ax.plot(when, cum / np.arange(1, cum.size + 1) if running_mean else cum, marker=".",
                label=" / ".join(names))  # fmt: skip
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_ylabel(
        "cumulative mean alpha ([0, 1] Brier)" if running_mean else "sum of alpha ([0, 1] Brier)"
    )
    ax.set_xlabel("forecast round (cutoff date)")
    legend_beside(ax, 8)
    date_axis(ax, 8)
    what = (
        "Cumulative mean alpha against the market after R forecast rounds, as Foresight Arena's "
        "Figure 5 plots it: (1/R) times the sum of the first R rounds' alphas"
        if running_mean
        else "Running sum of the forecast rounds' alphas against the market"
    )
    return Drawn(
        fig,
        f"{what}, one line per agent and setting. A round is a cutoff date; its alpha is the "
        "mean over its forecasts of the market's [0, 1] Brier minus the agent's ([0, 1] Brier "
        "units: above zero the agent beat the market).",
    )


def cumulative_alpha(data: ReportData) -> Drawn | None:
    """Cumulative mean alpha against the market after R forecast rounds (Figure 5)."""
    return _alpha_lines(data, True)


def cumulative_alpha_sum(data: ReportData) -> Drawn | None:
    """Running sum of the rounds' mean alphas against the market."""
    return _alpha_lines(data, False)
