"""Leaderboards from score summaries, as a terminal table or Markdown.

One leaderboard order for run logs and the arena's rounds (``leaderboard_rows``): forecasting
agents ranked, reference agents (the market price) listed apart after them. Run logs' groups are
ranked by mean Brier, and their references marked as such below a rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

from rich.table import Table

from pastcast.scoring import GroupSummary, MetricSummary

__all__ = [
    "clean_json",
    "fmt_metric",
    "leaderboard_markdown",
    "leaderboard_rows",
    "leaderboard_table",
    "with_titles",
]

COLUMNS = ("n", "fail", "Brier", "accuracy", "log loss", "info-alpha", "alpha (shrunk)")


class Ranked(Protocol):
    @property
    def role(self) -> str: ...


R = TypeVar("R", bound=Ranked)


def clean_json(obj: Any) -> Any:
    """NaN is not JSON: write it as null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: clean_json(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [clean_json(v) for v in obj]
    return obj


def fmt_metric(m: MetricSummary, digits: int = 3) -> str:
    if m.n == 0 or not math.isfinite(m.mean):
        return "-"
    text = f"{m.mean:.{digits}f}"
    if math.isfinite(m.ci_low):
        text += f" [{m.ci_low:.{digits}f}, {m.ci_high:.{digits}f}]"
    return text


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


def leaderboard_rows(entries: Iterable[R], rank: Callable[[R], Any]) -> tuple[list[R], list[R]]:
    """The leaderboard's order, of run logs' groups and the arena's agents alike: the forecasting
    agents (role ``agent``) ranked by ``rank``, lowest first, and apart, in the order given, the
    references (any other role: the market's price), which are listed after them."""
    listed = list(entries)
    agents = sorted((e for e in listed if e.role == "agent"), key=rank)
    return agents, [e for e in listed if e.role != "agent"]


def _ordered(summaries: Sequence[GroupSummary]) -> tuple[list[GroupSummary], list[GroupSummary]]:
    return leaderboard_rows(summaries, lambda s: s.metrics["brier"].mean)


def _row(
    s: GroupSummary, titles: Mapping[str, str] | None = None, by: Sequence[str] = ()
) -> list[str]:
    names = with_titles(s.group, titles or {}, by)
    if s.role == "reference" and names:
        names[0] += " (reference)"
    at = s.alpha_tests["alpha"]
    shrunk = "-" if at.n == 0 else f"{at.shrunk:+.4f}" + (" provisional" if at.provisional else "")
    return [
        *names,
        str(s.n_recorded),
        f"{s.failure_rate:.1%}",
        fmt_metric(s.metrics["brier"]),
        fmt_metric(s.metrics["accuracy"]),
        fmt_metric(s.metrics["log_loss"]),
        fmt_metric(s.metrics["info_alpha"]),
        shrunk,
    ]


def leaderboard_table(
    summaries: Sequence[GroupSummary],
    by: Sequence[str],
    title: str = "",
    titles: Mapping[str, str] | None = None,
) -> Table:
    table = Table(title=title, title_justify="left")
    for col in with_titles(by, titles or {}):
        table.add_column(col)
    for col in COLUMNS:
        table.add_column(col, justify="right")
    agents, refs = _ordered(summaries)
    for s in agents:
        table.add_row(*_row(s, titles, by))
    if refs:
        table.add_section()
        for s in refs:
            table.add_row(*_row(s, titles, by))
    return table


def leaderboard_markdown(
    summaries: Sequence[GroupSummary],
    by: Sequence[str],
    titles: Mapping[str, str] | None = None,
) -> str:
    header = [*with_titles(by, titles or {}), *COLUMNS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    agents, refs = _ordered(summaries)
    lines += ["| " + " | ".join(_row(s, titles, by)) + " |" for s in [*agents, *refs]]
    return "\n".join(lines)
