"""The self-contained HTML report (with Markdown and LaTeX tables and figure files); needs the
``reports`` extra (matplotlib, Jinja2)."""

from pastcast.reports.html._sections import ReportSection
from pastcast.reports.html._write import WrittenReport, write_html_report

__all__ = ["ReportSection", "WrittenReport", "write_html_report"]
