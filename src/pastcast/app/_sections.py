"""Sections that an installed plugin adds to the HTML report and the dashboard (the arena's
rounds): factories of the entry-point group ``pastcast.report_sections``, called as
``factory(run_logs, folder)`` with the folder the user named for the plugin (None: the plugin
looks beside the run logs itself); see docs/plugins.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pastcast.errors import FieldError
from pastcast.registry import Registry

if TYPE_CHECKING:
    from pastcast.reports.html import ReportSection

__all__ = ["plugin_sections", "report_sections"]

report_sections: Registry[tuple[ReportSection, ...]] = Registry("report_section")


def plugin_sections(
    run_logs: Sequence[str | Path], folders: Mapping[str, str | Path] | None = None
) -> tuple[ReportSection, ...]:
    """Every plugin's sections for ``run_logs``, each given its folder of ``folders`` (by the
    plugin's name); a folder for a plugin that is not installed is an ``FieldError`` naming it."""
    folders = dict(folders or {})
    for name in folders:
        if name not in report_sections:
            known = ", ".join(report_sections.names()) or "none"
            raise FieldError(
                name, f"no report-section plugin {name!r} is installed (installed: {known})"
            )
    logs = tuple(Path(p) for p in run_logs)
    out: list[ReportSection] = []
    for entry in report_sections.entries():
        folder = folders.get(entry.name)
        out += entry.factory(logs, None if folder is None else Path(folder))
    return tuple(out)
