"""Parts of a report that a package above the reports contributes (the arena's rounds): a
heading, a paragraph, tables and figures, rendered by the HTML report and the dashboard like the
report's own."""

from __future__ import annotations

from dataclasses import dataclass

from pastcast.reports._tables import TextTable
from pastcast.reports.figures import RenderedFigure


@dataclass(frozen=True)
class ReportSection:
    title: str
    intro: str
    tables: tuple[TextTable, ...]
    figures: tuple[RenderedFigure, ...]
    slug: str
    """The section's id in the HTML (``section-SLUG``) and its figures' file prefix."""
