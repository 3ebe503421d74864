"""The arena's rounds as a section of the HTML report and a page of the dashboard (its tables
and Figures 2b and 5: docs/arena.md, "Rounds in the report and the dashboard"); the figures are
drawn with matplotlib (the ``reports`` extra), imported when a figure is drawn."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from pastcast.reports import TextTable, fmt_number
from pastcast_arena._ledger import verify_ledger
from pastcast_arena._records import (
    MAX_BP,
    OUTCOME_EXCLUDED,
    OUTCOME_NO,
    OUTCOME_YES,
    RoundResult,
)
from pastcast_arena._stats import ArenaReport, LeaderboardRow, arena_report

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from pastcast.reports.html import ReportSection

_OUTCOMES = {OUTCOME_NO: "NO", OUTCOME_YES: "YES", OUTCOME_EXCLUDED: "excluded"}
Column = tuple[str, Callable[[Any], str]]


def _table(
    title: str,
    columns: Sequence[Column],
    items: Sequence[Any],
    keys: int,
    note: str = "",
    n_agents: int | None = None,
) -> TextTable:
    """A table of ``items``, one row each, a column per (name, cell of an item)."""
    rows = tuple(tuple(cell(item) for _, cell in columns) for item in items)
    names = tuple(name for name, _ in columns)
    return TextTable(title, names, rows, len(rows) if n_agents is None else n_agents, keys, note)


def leaderboard_table(
    rows: Sequence[LeaderboardRow], title: str = "Arena leaderboard"
) -> TextTable:
    """The leaderboard (rows in ``standings``' order, references after the rule) with its
    standard errors, t-test and shrunk alpha: the report's table and the terminal's."""
    columns: tuple[Column, ...] = (
        ("agent", lambda row: row.agent + ("" if row.role == "agent" else f" ({row.role})")),
        ("rounds", lambda row: str(row.rounds)),
        ("predictions", lambda row: str(row.predictions)),
        ("Brier ± SE", lambda row: f"{row.brier:.4f} ± {fmt_number(row.brier_se, 4)}"),
        ("alpha ± SE", lambda row: f"{row.alpha:+.4f} ± {fmt_number(row.alpha_se, 4)}"),
        ("SE (Prop. 2)", lambda row: fmt_number(row.alpha_se_model, 4)),
        ("t", lambda row: fmt_number(row.t, 2, signed=True)),
        ("p", lambda row: fmt_number(row.p_value, 3)),
        ("beat market", lambda row: f"{100 * row.beat_market:.0f}%"),
        (
            "alpha (shrunk)",
            lambda row: f"{row.shrunk_alpha:+.4f}" + (" (provisional)" if row.provisional else ""),
        ),
    )
    note = (
        "SE: over per-round scores; SE (Prop. 2): sqrt(sum 4 b(1 - b)(b - p)^2) / n over the "
        "agent's markets; t and p: one-sample t-test of per-round alpha against 0."
    )
    n_agents = sum(row.role == "agent" for row in rows)
    return _table(title, columns, rows, 1, note, n_agents)


def arena_section(
    results: Sequence[RoundResult], *, ledger: Path | None = None, title: str = "Arena rounds"
) -> ReportSection:
    """The section of ``results`` (an arena replay's ``rounds.jsonl``, read with
    ``read_results``); with its ``ledger``, the ledger is verified first (hashes, signatures,
    commitments, scores) and its commits and reveals counted per round."""
    from pastcast.reports.figures import render_figure
    from pastcast.reports.html import ReportSection

    report: ArenaReport = arena_report(results)
    counts: Counter[tuple[int, str]] = Counter()
    verified = ""
    if ledger is not None:
        summary = verify_ledger(ledger)  # raises on any broken hash, signature or score
        snap = summary.snapshot
        counts.update([(c.round_id, "commit") for c in snap.commits])
        counts.update([(r.round_id, "reveal") for r in snap.reveals])
        verified = (
            f" The ledger {ledger.name} verifies: {summary.lines} lines, head {summary.head[:16]}."
        )
    held = (lambda r, kind: str(counts[(r.round.round_id, kind)])) if ledger else None
    rounds: tuple[Column, ...] = (
        ("round", lambda r: str(r.round.round_id)),
        ("commit deadline", lambda r: f"{r.round.commit_deadline:%Y-%m-%d %H:%M}"),
        ("reveal deadline", lambda r: f"{r.round.reveal_deadline:%Y-%m-%d %H:%M}"),
        ("markets", lambda r: str(r.round.k)),
        ("resolved", lambda r: str(sum(o != OUTCOME_EXCLUDED for o in r.outcomes))),
        ("selector", lambda r: r.round.selector or "-"),
        ("commits", lambda r: held(r, "commit") if held else "-"),
        ("reveals", lambda r: held(r, "reveal") if held else "-"),
    )
    markets: tuple[Column, ...] = (  # (round, market, benchmark, outcome)
        ("round", lambda x: str(x[0].round.round_id)),
        ("market", lambda x: x[1].market_id),
        ("question", lambda x: x[1].question),
        ("category", lambda x: x[1].category or "-"),
        ("benchmark", lambda x: f"{x[2].price_bp / MAX_BP:.4f}"),
        ("source", lambda x: x[2].source),
        ("observed", lambda x: f"{x[2].observed_at:%Y-%m-%d %H:%M}"),
        ("outcome", lambda x: _OUTCOMES[x[3]]),
    )
    murphy: tuple[Column, ...] = (
        ("agent", lambda m: m.agent),
        ("n", lambda m: str(m.n)),
        ("UNC", lambda m: fmt_number(m.uncertainty, 4)),
        ("REL", lambda m: fmt_number(m.reliability, 4)),
        ("RES", lambda m: fmt_number(m.resolution, 4)),
        ("Brier", lambda m: fmt_number(m.brier, 4)),
        ("residual", lambda m: fmt_number(m.residual, 4, signed=True)),
        ("resolution gain", lambda m: fmt_number(m.resolution_gain, 4, signed=True)),
        ("reliability gap", lambda m: fmt_number(m.reliability_gap, 4, signed=True)),
    )
    categories: tuple[Column, ...] = (
        ("category", lambda c: c.category),
        ("rounds", lambda c: str(c.rounds)),
        ("markets", lambda c: str(c.markets)),
        ("market Brier", lambda c: fmt_number(c.market_brier, 4)),
        ("best agent", lambda c: c.best_agent or "-"),
        ("best alpha", lambda c: fmt_number(c.best_alpha, 4, signed=True)),
        ("agents with alpha > 0", lambda c: f"{c.positive} of {c.agents}"),
    )
    per_round: tuple[Column, ...] = (
        ("round", lambda s: str(s.round_id)),
        ("agent", lambda s: s.agent),
        ("Brier", lambda s: f"{s.brier:.4f}"),
        ("alpha", lambda s: f"{s.alpha:+.4f}"),
        ("resolved", lambda s: str(s.resolved)),
    )
    by_market = [
        (r, m, b, o)
        for r in results
        for m, b, o in zip(r.round.markets, r.round.benchmarks, r.outcomes, strict=True)
    ]
    source = (
        "source: where the benchmark price came from (the price history at the commit "
        "deadline, or a labelled fallback such as the daily mean)."
    )
    tables = (
        _table("Rounds", rounds, results, 1),
        _table("Markets and benchmark prices", markets, by_market, 2, source),
        leaderboard_table(report.leaderboard),
        _table("Murphy decomposition (10 bins) and alpha's anatomy", murphy, report.murphy, 1),
        _table("By category", categories, report.categories, 1),
        _table("Per-round scores", per_round, report.per_round, 2),
    )
    captions = {
        "arena-murphy": "The [0, 1] Brier score of each agent with its Murphy components, "
        "Brier = UNC + REL - RES (Foresight Arena Figure 2b).",
        "arena-cumulative-alpha": "Cumulative mean alpha of each agent against the market after "
        "R rounds ([0, 1] Brier units; above zero the agent beat the market), Foresight Arena "
        "Figure 5.",
    }
    figures = tuple(  # named within the section: files figures/arena-murphy.png, ...
        render_figure(name.removeprefix("arena-"), captions.get(name, name), fig)
        for name, fig in arena_figures(report).items()
    )
    intro = (
        f"{report.rounds} scored rounds ({report.unscored_rounds} without a resolved market), "
        f"{report.markets_scored} markets scored, market Brier {report.market_brier:.4f}."
        + verified
    )
    return ReportSection(title, intro, tables, figures, "arena")


def _murphy_figure(report: ArenaReport) -> Figure:
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
    return {"arena-murphy": _murphy_figure(report), "arena-cumulative-alpha": _cumulative(report)}


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
