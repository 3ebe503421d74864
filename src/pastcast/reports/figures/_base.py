"""The figure registry (``FIGURES``; docs/reports.md), what every figure is drawn from, and
rendering to PNG and SVG. A figure returns ``None`` when the runs lack what it needs (no
two-outcome forecasts, no memory-on notebooks, one setting only...), and writes its caption from
what it drew. Figures are drawn on ``matplotlib.figure.Figure`` directly, never through pyplot,
so no global backend or state is touched.
"""

from __future__ import annotations

import io
import textwrap
from base64 import b64encode
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from matplotlib.axes import Axes
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from numpy.typing import NDArray

from pastcast.registry import Registry
from pastcast.reports._runs import Runs
from pastcast.reports._scorecard import Scorecard
from pastcast.scoring import Convention, ScoreTable
from pastcast.scoring.analyses import EvidenceRow


@dataclass(frozen=True)
class Drawn:
    """A figure as drawn, with its caption: whole sentences saying what each panel, axis and
    mark shows, in the units written on the axes."""

    figure: Figure
    caption: str


FIGURES: Registry[Drawn | None] = Registry("figure")
register_figure = FIGURES.register
# The papers' figures, by reference: a figure's module loads when it is first drawn.
FIGURES.add("reliability", "pastcast.reports.figures._calibration:reliability")
FIGURES.add("murphy", "pastcast.reports.figures._calibration:murphy_bars")
FIGURES.add("cumulative-alpha", "pastcast.reports.figures._calibration:cumulative_alpha")
FIGURES.add("cumulative-alpha-sum", "pastcast.reports.figures._calibration:cumulative_alpha_sum")
FIGURES.add("recoveries", "pastcast.reports.figures._hindcast:net_recoveries")
FIGURES.add("lookback", "pastcast.reports.figures._hindcast:lookback_sweep")
FIGURES.add("market", "pastcast.reports.figures._hindcast:market_against_forecasts")
FIGURES.add("topics", "pastcast.reports.figures._hindcast:topic_distribution")
FIGURES.add("thirds", "pastcast.reports.figures._longitudinal:brier_thirds")
FIGURES.add("evidence", "pastcast.reports.figures._longitudinal:change_by_evidence")
FIGURES.add("memory-cost", "pastcast.reports.figures._longitudinal:memory_on_cost")
FIGURES.add("capture-gain", "pastcast.reports.figures._longitudinal:capture_against_gain")
FIGURES.add("cost-by-step", "pastcast.reports.figures._longitudinal:cost_per_step")

MAX_PANELS = 12
"""Small multiples drawn at most per figure (the first groups of the leaderboard)."""


@dataclass(frozen=True)
class ReportData:
    """What figures are drawn from: the runs, their scorecard and the report's choices.

    Figures read the runs' score table (``table``), their step columns (``runs.batches``,
    ``runs.take``) and resources, never their full records; the one exception, the notebooks
    of the evidence index, are streamed by offset (``evidence``)."""

    runs: Runs
    card: Scorecard
    events: tuple[str, ...] = ()
    """Events for the market-against-forecasts figure (none: the ones with most steps)."""
    lookback: tuple[float, ...] | None = None
    """The lookback fractions of the schedule, when the run used the lookback schedule."""

    @property
    def fallback(self) -> Convention:
        return self.card.fallback

    @cached_property
    def table(self) -> ScoreTable:
        return self.runs.table()

    @cached_property
    def resources(self) -> NDArray[np.float64]:
        """Per step, the resources of ``pastcast.scoring.analyses.RESOURCES``."""
        return self.runs.resources()

    @cached_property
    def evidence(self) -> tuple[EvidenceRow, ...]:
        """The new-evidence index of the memory-on notebooks (``evidence_index``)."""
        return self.runs.evidence_index()

    @cached_property
    def cutoff_days(self) -> NDArray[np.int64]:
        """Per step, its cutoff's day (proleptic ordinal)."""
        days = [c.date().toordinal() for b in self.runs.batches(("cutoff",)) for c in b["cutoff"]]
        return np.asarray(days, dtype=np.int64).reshape(len(days))


@dataclass(frozen=True)
class RenderedFigure:
    name: str
    caption: str
    png: bytes
    svg: str

    def embedded(self) -> dict[str, str]:
        """Its name, caption and PNG as base64, as the HTML pages embed it."""
        return {"name": self.name, "caption": self.caption, "png": b64encode(self.png).decode()}


def new_figure(panels: int = 1, width: float = 4.2, height: float = 3.4) -> Figure:
    """A figure sized for ``panels`` small multiples (up to four per row)."""
    cols = min(max(panels, 1), 4)
    rows = -(-max(panels, 1) // cols)
    return Figure(figsize=(width * cols, height * rows), layout="constrained")


def panel_axes(fig: Figure, panels: int) -> list[Axes]:
    """``panels`` axes on ``fig`` (up to four per row, as ``new_figure`` sized it); the grid's
    spare cells are hidden."""
    cols = min(max(panels, 1), 4)
    grid = fig.subplots(-(-max(panels, 1) // cols), cols, squeeze=False)
    for ax in list(grid.flat)[panels:]:
        ax.set_visible(False)
    return list(grid.flat)[:panels]


def legend_beside(ax: Axes, fontsize: float = 8) -> None:
    """The legend of ``ax`` outside it, on its right: inside, a legend hides the bars or points
    it falls on (the layout makes room for it)."""
    ax.legend(fontsize=fontsize, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)


def wrapped(text: str, width: float, fontsize: float = 8) -> str:
    """``text`` broken into lines that fit ``width`` inches at ``fontsize`` points, whole: a
    title or label is wrapped, never cut (a name longer than a line is split inside)."""
    chars = max(12, int(width * 72 / (fontsize * 0.62)))
    return "\n".join(
        textwrap.fill(line, chars, break_on_hyphens=False) for line in text.splitlines() or [""]
    )


def date_axis(ax: Axes, maxticks: int = 6) -> None:
    """Readable dates on the x axis (a few ticks, concise labels)."""
    locator = AutoDateLocator(maxticks=maxticks)  # type: ignore[no-untyped-call]
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))  # type: ignore[no-untyped-call]


def render_figure(name: str, caption: str, fig: Figure) -> RenderedFigure:
    """A figure drawn elsewhere (the arena's), rendered as the report's own are."""
    png, svg = io.BytesIO(), io.StringIO()
    fig.savefig(png, format="png", dpi=110)
    fig.savefig(svg, format="svg")
    return RenderedFigure(name, caption, png.getvalue(), svg.getvalue())


def render_figures(data: ReportData, names: Sequence[str] | None = None) -> list[RenderedFigure]:
    """Draw the named figures (all registered ones by default) that the runs support."""
    out = []
    for name in names if names is not None else FIGURES.names():
        drawn = FIGURES.build(name, data=data)
        if drawn is None:
            continue
        out.append(render_figure(name, drawn.caption, drawn.figure))
    return out
