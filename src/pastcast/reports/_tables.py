"""The report's tables as text cells, rendered to a terminal (rich), Markdown, LaTeX or HTML.

Every rendering takes the same ``TextTable``, so the numbers in the HTML report, its Markdown and
LaTeX files and the terminal are one formatting of one scorecard.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.table import Table

from pastcast.reports._leaderboard import fmt_metric, with_titles
from pastcast.reports._scorecard import GroupReport, Scorecard

__all__ = [
    "TextTable",
    "calibration_table",
    "cost_table",
    "fmt_number",
    "latex_escape",
    "main_table",
    "to_latex",
    "to_markdown",
    "to_rich",
]


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


def fmt_number(x: float | None, digits: int = 3, signed: bool = False) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def _pct(x: float | None) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:.1%}"


def _names(g: GroupReport, card: Scorecard) -> list[str]:
    names = with_titles(g.group, card.titles, card.by)
    if g.summary.role == "reference" and names:
        names[0] += " (reference)"
    return names


def _build(
    card: Scorecard,
    title: str,
    columns: Sequence[str],
    cells: Callable[[GroupReport], Sequence[str]],
    note: str = "",
) -> TextTable:
    ranked = card.ranked()
    keys = with_titles(card.by, card.titles)
    rows = tuple((*_names(g, card), *cells(g)) for g in ranked)
    n_agents = sum(g.summary.role != "reference" for g in ranked)
    return TextTable(title, (*keys, *columns), rows, n_agents, len(keys), note)


def _failure_rate(g: GroupReport) -> str:
    s = g.summary
    if s.scheduled_failure_rate is not None:
        return _pct(s.scheduled_failure_rate)
    return _pct(s.failure_rate)


def main_table(card: Scorecard) -> TextTable:
    """Brier, accuracy, information-alpha, failures over the schedule, cost per forecast,
    rollout SD and the uniform and market references on the same forecasts."""

    def cells(g: GroupReport) -> list[str]:
        m = g.summary.metrics
        return [
            str(g.summary.n_recorded),
            fmt_metric(m["brier"]),
            fmt_metric(m["accuracy"]),
            fmt_metric(m["info_alpha"]),
            _failure_rate(g),
            fmt_number(g.resources["cost_usd"], 4),
            fmt_number(m["brier"].rollout_std),
            fmt_number(g.uniform_brier),
            fmt_number(g.market_brier),
        ]

    return _build(
        card,
        "Main table",
        (
            "n",
            "Brier",
            "accuracy",
            "info-alpha",
            "failure rate",
            "cost/forecast ($)",
            "rollout SD",
            "uniform Brier",
            "market Brier",
        ),
        cells,
        note=(
            f"Multiclass Brier on [0, 2] (lower is better); fractional-tie accuracy; brackets are "
            f"95% event-clustered bootstrap intervals ({card.bootstrap} draws, seed {card.seed}); "
            f"unusable forecasts scored as {card.fallback}. Failure rate: (failures + missing) "
            "over the scheduled forecasts. Rollout SD: standard deviation of per-rollout mean "
            "Brier. Uniform and market Brier: the uniform forecast and the market's belief at "
            "the cutoff, scored on the same forecasts."
        ),
    )


def calibration_table(card: Scorecard) -> TextTable:
    """Two-outcome calibration: [0, 1] Brier, Hindcast accuracy, ECE, distance to market, the
    Murphy decomposition and the anatomy of alpha."""

    def cells(g: GroupReport) -> list[str]:
        m, c = g.summary.metrics, g.calibration
        mu, an = c.murphy, c.anatomy
        return [
            str(c.n),
            fmt_metric(m["binary_brier"]),
            fmt_metric(m["hindcast_accuracy"]),
            fmt_number(c.ece),
            fmt_metric(m["distance_to_market"]),
            fmt_number(None if mu is None else mu.reliability, 4),
            fmt_number(None if mu is None else mu.resolution, 4),
            fmt_number(None if mu is None else mu.uncertainty, 4),
            fmt_number(None if mu is None else mu.residual, 4),
            fmt_number(None if an is None else an.alpha, 4, signed=True),
            fmt_number(None if an is None else an.resolution_gain, 4, signed=True),
            fmt_number(None if an is None else an.reliability_gap, 4, signed=True),
        ]

    return _build(
        card,
        "Calibration of two-outcome forecasts",
        (
            "n (2-outcome)",
            "Brier [0,1]",
            "Hindcast acc.",
            "ECE",
            "dist. to market",
            "REL",
            "RES",
            "UNC",
            "residual",
            "alpha",
            "RES gain",
            "REL gap",
        ),
        cells,
        note=(
            f"Binary Brier (p - x)^2 on [0, 1] of two-outcome events; Hindcast accuracy 1[p > 0.5] "
            f"of the realised outcome (all events); distance to market |p - q| on the realised "
            f"outcome; ECE, Murphy (Brier = UNC + REL - RES + residual) over {card.bins} "
            "equal-width bins of P(first label); alpha = RES gain + REL gap + binning residual "
            "against the market's belief."
        ),
    )


def cost_table(card: Scorecard) -> TextTable:
    """Models, schedule and failures, and resources per recorded forecast."""

    def cells(g: GroupReport) -> list[str]:
        s, r = g.summary, g.resources
        return [
            ", ".join(g.models) or "-",
            str(s.n_scheduled) if s.n_scheduled is not None else "-",
            str(s.n_recorded),
            str(s.n_missing) if s.n_missing is not None else "-",
            str(s.n_failures),
            _failure_rate(g),
            fmt_number(r["cost_usd"], 4),
            fmt_number(r["input_tokens"], 0),
            fmt_number(r["output_tokens"], 0),
            fmt_number(r["model_calls"], 2),
            fmt_number(r["tool_calls"], 2),
        ]

    return _build(
        card,
        "Cost and failures",
        (
            "models",
            "scheduled",
            "recorded",
            "missing",
            "unusable",
            "failure rate",
            "cost/forecast ($)",
            "input tokens",
            "output tokens",
            "model calls",
            "tool calls",
        ),
        cells,
        note="Resources are means per recorded forecast; failure rate is (unusable + missing) "
        "over scheduled.",
    )


def to_rich(t: TextTable) -> Table:
    table = Table(title=t.title, title_justify="left")
    for i, col in enumerate(t.columns):
        table.add_column(col, justify="left" if i < t.n_keys else "right")
    for i, row in enumerate(t.rows):
        if i == t.n_agents and i > 0:
            table.add_section()
        table.add_row(*row)
    return table


def to_markdown(t: TextTable) -> str:
    def esc(x: str) -> str:
        return x.replace("|", "\\|")

    lines = [f"### {t.title}", ""]
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
