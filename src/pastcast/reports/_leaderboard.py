"""What every table of score summaries shares: the registered metrics a table shows and their
cells, the order of groups (forecasting agents by the first metric's mean, Brier, best first;
reference agents, the market price, after them) and event titles beside event ids.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from pastcast.scoring import Cell, GroupSummary, Metric, MetricSummary, metric_list


def fmt_metric(m: MetricSummary, digits: int = 3) -> str:
    if m.n == 0 or not math.isfinite(m.mean):
        return "-"
    text = f"{m.mean:.{digits}f}"
    if math.isfinite(m.ci_low):
        text += f" [{m.ci_low:.{digits}f}, {m.ci_high:.{digits}f}]"
    return text


def metric_columns(shown: Callable[[Metric], Cell | None]) -> list[tuple[str, Metric, Cell]]:
    """(column title, metric, cell) of each metric a table shows, in the registry's order:
    ``shown`` picks the table (``lambda m: m.report``)."""
    out = []
    for m in metric_list():
        cell = shown(m)
        if cell is not None:
            out.append((f"{m.label} (shrunk)" if cell == "shrunk" else m.label, m, cell))
    return out


def fmt_cell(s: GroupSummary, m: Metric, cell: Cell) -> str:
    """A group's cell of metric ``m``: its mean and interval, or its test's shrunk mean."""
    if cell == "interval":
        return fmt_metric(s.metrics[m.name], m.digits)
    t = s.alpha_tests[m.name]
    if t.n == 0:
        return "-"
    return f"{t.shrunk:+.{m.digits}f}" + (" provisional" if t.provisional else "")


T = TypeVar("T")


def leaderboard_rows(
    entries: Iterable[T], rank: Callable[[T], Any], role: Callable[[T], str] | None = None
) -> tuple[list[T], list[T]]:
    """The leaderboard's order, of run logs' groups and the arena's agents alike: the forecasting
    agents (role ``agent``) ranked by ``rank``, lowest first, and apart, in the order given, the
    references (any other role: the market's price), which are listed after them. ``role``: an
    entry's role (its ``role`` attribute by default)."""
    listed = list(entries)
    role_of = role or (lambda e: str(getattr(e, "role")))  # noqa: B009
    agents = sorted((e for e in listed if role_of(e) == "agent"), key=rank)
    return agents, [e for e in listed if role_of(e) != "agent"]


def ranked(items: Sequence[T], summary: Callable[[T], GroupSummary]) -> list[T]:
    """Forecasting groups by the first metric's mean, best first (its direction), then the
    reference groups (the market price), each in their order (``leaderboard_rows``)."""
    first = metric_list()[0]
    sign = -1.0 if first.better == "higher" else 1.0
    agents, refs = leaderboard_rows(
        items, lambda x: sign * summary(x).metrics[first.name].mean, lambda x: summary(x).role
    )
    return [*agents, *refs]


def with_titles(
    cells: Sequence[str], titles: Mapping[str, str], by: Sequence[str] | None = None
) -> list[str]:
    """``cells`` with a "question" cell after the event's: the header (``by`` omitted, ``cells``
    are the column names) or a row's key cells (``by`` names them). Unchanged without titles or
    an event column."""
    columns = list(cells if by is None else by)
    if not titles or "event" not in columns:
        return list(cells)
    at = columns.index("event") + 1
    out = list(cells)
    out.insert(at, "question" if by is None else titles.get(cells[at - 1], ""))
    return out
