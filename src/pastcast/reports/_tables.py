"""The report's tables as text cells, rendered to a terminal (rich), Markdown, LaTeX or HTML.

Every rendering takes the same ``TextTable``, so the numbers in the HTML report, its Markdown and
LaTeX files and the terminal are one formatting of one scorecard.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import numpy as np
from rich.console import Group
from rich.table import Table

from pastcast.reports._leaderboard import fmt_cell, fmt_metric, metric_columns, ranked, with_titles
from pastcast.reports._scorecard import GroupReport, Scorecard, market_age_text
from pastcast.scoring import Cell, GroupSummary, Metric

G = TypeVar("G")


@dataclass(frozen=True)
class TextTable:
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    n_agents: int
    """Rows before this index are forecasters; the rest are references (drawn below a rule)."""
    n_keys: int
    """Leading columns that name the group."""
    note: str = ""


def fmt_number(
    x: float | None, digits: int = 3, signed: bool = False, percent: bool = False
) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:{'+' if signed else ''}.{digits}{'%' if percent else 'f'}}"


Column = tuple[str, Callable[[G], str]]
"""A table's column: its title and its cell of a group."""


def _build(
    groups: Sequence[G],
    summary: Callable[[G], GroupSummary],
    by: Sequence[str],
    titles: Mapping[str, str],
    title: str,
    columns: Sequence[Column[G]],
    note: str = "",
) -> TextTable:
    """A row per group, best first and references last (marked), after its key cells (the
    columns ``by`` grouped by and, with ``titles``, the question beside an event id)."""
    rows = []
    for g in ranked(groups, summary):
        names = with_titles(summary(g).group, titles, by)
        if summary(g).role == "reference" and names:
            names[0] += " (reference)"
        rows.append((*names, *(cell(g) for _, cell in columns)))
    n_agents = sum(summary(g).role != "reference" for g in groups)
    head = with_titles(by, titles)
    heads = (*head, *(c for c, _ in columns))
    return TextTable(title, heads, tuple(rows), n_agents, len(head), note)


def _card(
    card: Scorecard, title: str, columns: Sequence[Column[GroupReport]], note: str = ""
) -> TextTable:
    return _build(card.groups, lambda g: g.summary, card.by, card.titles, title, columns, note)


def _failure_rate(g: GroupReport) -> str:
    s = g.summary
    rate = s.failure_rate if s.scheduled_failure_rate is None else s.scheduled_failure_rate
    return fmt_number(rate, 1, percent=True)


def _metric_cell(m: Metric, cell: Cell) -> Callable[[GroupReport], str]:
    return lambda g: fmt_cell(g.summary, m, cell)


def _resource(name: str, digits: int) -> Callable[[GroupReport], str]:
    return lambda g: fmt_number(g.resources[name], digits)


def main_table(card: Scorecard) -> TextTable:
    """The metrics the report shows (``Metric.report``: Brier, accuracy, information-alpha),
    failures over the schedule, cost per forecast, rollout SD and the uniform and market
    references on the same forecasts."""
    return _card(
        card,
        "Main table",
        [
            ("n", lambda g: str(g.summary.n_recorded)),
            *(
                (title, _metric_cell(m, cell))
                for title, m, cell in metric_columns(lambda m: m.report)
            ),
            ("failure rate", _failure_rate),
            ("cost/forecast ($)", _resource("cost_usd", 4)),
            ("rollout SD", lambda g: fmt_number(g.summary.metrics["brier"].rollout_std)),
            ("uniform Brier", lambda g: fmt_number(g.uniform_brier)),
            ("market Brier", lambda g: fmt_number(g.market_brier)),
            ("market age (d)", lambda g: fmt_number(_median(g.market_ages), 1)),
        ],
        note=(
            f"Multiclass Brier on [0, 2] (lower is better); fractional-tie accuracy; brackets are "
            f"95% event-clustered bootstrap intervals ({card.bootstrap} draws, seed {card.seed}); "
            f"unusable forecasts scored as {card.fallback}. Failure rate: (failures + missing) "
            "over the scheduled forecasts. Rollout SD: standard deviation of per-rollout mean "
            "Brier. Uniform and market Brier: the uniform forecast and the market's belief at "
            "the cutoff, scored on the same forecasts; market age: the median age in days of "
            f"that belief at the cutoff ({market_age_text(card.market_ages)}), against which "
            "information-alpha is measured."
        ),
    )


def _median(values: Sequence[float]) -> float | None:
    return float(np.median(values)) if values else None


def leaderboard(
    summaries: Sequence[GroupSummary],
    by: Sequence[str],
    title: str = "",
    titles: Mapping[str, str] | None = None,
) -> TextTable:
    """``pastcast score``'s table: n, failures and the metrics it shows (``Metric.leaderboard``)
    per group, best first; with ``titles`` (event id -> question) and an "event" column among
    ``by``, a "question" column follows the event's."""
    columns: list[Column[GroupSummary]] = [
        ("n", lambda s: str(s.n_recorded)),
        ("fail", lambda s: fmt_number(s.failure_rate, 1, percent=True)),
        *(
            (c, partial(fmt_cell, m=m, cell=cell))
            for c, m, cell in metric_columns(lambda m: m.leaderboard)
        ),
    ]
    return _build(summaries, lambda s: s, by, titles or {}, title, columns)


def _part(of: str, name: str, signed: bool = False) -> Callable[[GroupReport], str]:
    """A field of a group's Murphy decomposition or anatomy of alpha (``of``), "-" without one."""

    def cell(g: GroupReport) -> str:
        found = getattr(g.calibration, of)
        return fmt_number(None if found is None else getattr(found, name), 4, signed=signed)

    return cell


def calibration_table(card: Scorecard) -> TextTable:
    """Two-outcome calibration: [0, 1] Brier, Hindcast accuracy, ECE, distance to market, the
    Murphy decomposition and the anatomy of alpha."""

    def metric(name: str) -> Callable[[GroupReport], str]:
        return lambda g: fmt_metric(g.summary.metrics[name])

    return _card(
        card,
        "Calibration of two-outcome forecasts",
        [
            ("n (2-outcome)", lambda g: str(g.calibration.n)),
            ("Brier [0,1]", metric("binary_brier")),
            ("Hindcast acc.", metric("hindcast_accuracy")),
            ("ECE", lambda g: fmt_number(g.calibration.ece)),
            ("dist. to market", metric("distance_to_market")),
            ("REL", _part("murphy", "reliability")),
            ("RES", _part("murphy", "resolution")),
            ("UNC", _part("murphy", "uncertainty")),
            ("residual", _part("murphy", "residual")),
            ("alpha", _part("anatomy", "alpha", signed=True)),
            ("RES gain", _part("anatomy", "resolution_gain", signed=True)),
            ("REL gap", _part("anatomy", "reliability_gap", signed=True)),
        ],
        note=(
            f"Binary Brier (p - x)^2 on [0, 1] of two-outcome events; Hindcast accuracy 1[p > 0.5] "
            f"of the realised outcome (all events); distance to market |p - q| on the realised "
            f"outcome; ECE, Murphy (Brier = UNC + REL - RES + residual) over {card.bins} "
            "equal-width bins of P(first label); alpha = RES gain + REL gap + binning residual "
            f"against the market's belief at the cutoff ({market_age_text(card.market_ages)})."
        ),
    )


def _count(value: int | None) -> str:
    return "-" if value is None else str(value)


def cost_table(card: Scorecard) -> TextTable:
    """Models, schedule and failures, and resources per recorded forecast."""
    return _card(
        card,
        "Cost and failures",
        [
            ("models", lambda g: ", ".join(g.models) or "-"),
            ("scheduled", lambda g: _count(g.summary.n_scheduled)),
            ("recorded", lambda g: str(g.summary.n_recorded)),
            ("missing", lambda g: _count(g.summary.n_missing)),
            ("unusable", lambda g: str(g.summary.n_failures)),
            ("failure rate", _failure_rate),
            ("cost/forecast ($)", _resource("cost_usd", 4)),
            ("input tokens", _resource("input_tokens", 0)),
            ("output tokens", _resource("output_tokens", 0)),
            ("model calls", _resource("model_calls", 2)),
            ("tool calls", _resource("tool_calls", 2)),
        ],
        note="Resources are means per recorded forecast; failure rate is (unusable + missing) "
        "over scheduled.",
    )


def _width(column: str, cells: Sequence[str]) -> int:
    return max(len(line) for text in (column, *cells) for line in text.splitlines() or [""])


def _blocks(t: TextTable, width: int | None) -> tuple[list[list[int]], bool]:
    """The value columns of each block, as many as fit ``width`` beside the key columns (a rich
    box costs 3 characters a column and 1 more; a column wider than the room is alone), and
    whether the key columns fold (they take at most half the width)."""
    values = list(range(t.n_keys, len(t.columns)))
    if width is None:
        return [values], False
    need = [_width(c, [r[i] for r in t.rows]) + 3 for i, c in enumerate(t.columns)]
    keys = sum(need[: t.n_keys])
    room = width - 1 - min(keys, width // 2)
    blocks: list[list[int]] = [[]]
    used = 0
    for i in values:
        if blocks[-1] and used + need[i] > room:
            blocks.append([])
            used = 0
        blocks[-1].append(i)
        used += need[i]
    return blocks, keys > width // 2


def to_rich(t: TextTable, width: int | None = None) -> Group:
    """``t`` for a terminal ``width`` characters wide, every cell whole: where its columns do not
    fit, they are split into blocks printed one after another, each repeating the columns that
    name the group; a name too long for its column folds onto more lines, never cut short (two
    agents named alike stay two names), and rows are then ruled apart."""
    blocks, folds = _blocks(t, width)
    tables = []
    for k, block in enumerate(blocks):
        title = t.title if k == 0 else "(continued)"
        table = Table(title=title or None, title_justify="left", show_lines=folds)
        shown = [*range(t.n_keys), *block]
        for i in shown:
            table.add_column(
                t.columns[i], justify="left" if i < t.n_keys else "right", overflow="fold"
            )
        for j, row in enumerate(t.rows):
            if j == t.n_agents and j > 0:
                table.add_section()
            table.add_row(*(row[i] for i in shown))
        tables.append(table)
    return Group(*tables)


def to_markdown(t: TextTable) -> str:
    def esc(x: str) -> str:
        return x.replace("|", "\\|")

    lines = [f"### {t.title}", ""] if t.title else []
    lines.append("| " + " | ".join(esc(c) for c in t.columns) + " |")
    lines.append("|" + "---|" * len(t.columns))
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in t.rows]
    if t.note:
        lines += ["", t.note]
    return "\n".join(lines)


_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text)


def to_latex(t: TextTable) -> str:
    """A booktabs ``table`` environment (needs ``\\usepackage{booktabs}``)."""
    spec = "l" * len(t.columns)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        f"\\caption{{{latex_escape(t.title)}}}",
        f"\\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        " & ".join(latex_escape(c) for c in t.columns) + r" \\",
        r"\midrule",
    ]
    for i, row in enumerate(t.rows):
        if i == t.n_agents and i > 0:
            lines.append(r"\midrule")
        lines.append(" & ".join(latex_escape(c) for c in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines)
