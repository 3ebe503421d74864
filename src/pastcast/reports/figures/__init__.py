"""Static figures of the papers from run logs (matplotlib, the ``reports`` extra).

``FIGURES`` holds every figure by name; ``render_figures(data)`` draws those the runs support,
each with the caption it wrote (``Drawn``). Plugins add figures through the entry-point group
``pastcast.figures``.
"""

from pastcast.reports.figures._base import (
    FIGURES,
    MAX_PANELS,
    Drawn,
    RenderedFigure,
    ReportData,
    new_figure,
    register_figure,
    render_figure,
    render_figures,
)

__all__ = [
    "FIGURES",
    "MAX_PANELS",
    "Drawn",
    "RenderedFigure",
    "ReportData",
    "new_figure",
    "register_figure",
    "render_figure",
    "render_figures",
]
