"""Foresight Arena's figures from an arena report (a simulation or replayed rounds): Figure 2b,
the Brier score of each agent with its Murphy components, and Figure 5, the cumulative mean
alpha after R rounds per agent. Drawn with matplotlib (the ``reports`` extra), imported when a
figure is drawn."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from pastcast_arena._stats import ArenaReport

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["arena_figures", "write_arena_figures"]


def _murphy(report: ArenaReport) -> Figure:
    from pastcast.reports.figures import new_figure

    rows = sorted(report.murphy, key=lambda m: m.brier)
    names = [m.agent for m in rows]
    fig = new_figure(1, max(6.0, 0.95 * len(rows) + 2.5), 3.8)
    ax = fig.subplots()
    pos = np.arange(len(rows))
    width = 0.2
    parts = [
        ("Brier", [m.brier for m in rows]),
        ("UNC", [m.uncertainty for m in rows]),
        ("REL", [m.reliability for m in rows]),
        ("RES", [m.resolution for m in rows]),
    ]
    for j, (label, values) in enumerate(parts):
        ax.bar(pos + (j - 1.5) * width, values, width, label=label)
    ax.set_xticks(pos, names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("[0, 1] Brier and its components")
    ax.set_title("Brier = UNC + REL - RES per agent (Figure 2b)", fontsize=10)
    ax.legend(fontsize=8, ncols=4)
    return fig


def _cumulative(report: ArenaReport) -> Figure:
    from pastcast.reports.figures import new_figure

    fig = new_figure(1, 7.0, 4.0)
    ax = fig.subplots()
    roles = {r.agent: r.role for r in report.leaderboard}
    for agent, series in sorted(report.cumulative_alpha.items()):
        if roles.get(agent) == "reference":
            continue  # the market consensus is 0 throughout
        values = np.asarray(series)
        rounds = np.arange(1, values.size + 1)
        ax.plot(rounds, values, label=f"{agent} ({values[-1]:+.4f})", lw=1.2)
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_xlabel("round R")
    ax.set_ylabel("cumulative mean alpha ([0, 1] Brier)")
    ax.set_title("Cumulative alpha after R rounds (Figure 5)", fontsize=10)
    ax.legend(fontsize=7)
    return fig


def arena_figures(report: ArenaReport) -> dict[str, Figure]:
    """Figures 2b and 5 of ``report``, by name."""
    return {"arena-murphy": _murphy(report), "arena-cumulative-alpha": _cumulative(report)}


def write_arena_figures(report: ArenaReport, out: Path) -> tuple[Path, ...]:
    """Write each figure of ``report`` as PNG and SVG into the folder ``out``, rendered as the
    report's own are."""
    from pastcast.reports.figures import render_figure

    written: list[Path] = []
    for name, fig in arena_figures(report).items():
        shown = render_figure(name, name, fig)
        (out / f"{name}.png").write_bytes(shown.png)
        (out / f"{name}.svg").write_text(shown.svg, encoding="utf-8")
        written += [out / f"{name}.png", out / f"{name}.svg"]
    return tuple(written)
