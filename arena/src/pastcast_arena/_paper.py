"""The numbers of the Foresight Arena paper's simulation study (Tables 5, 6 and 7, seed 137,
R = 50 rounds of k = 7 markets), and pastcast's simulation set beside them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from pydantic import computed_field

from pastcast.records import Record
from pastcast.reports import TextTable, fmt_number
from pastcast_arena._seeds import SeedFigure, SeedSummary
from pastcast_arena._stats import ArenaReport


class PaperRow(Record):
    """One agent of Tables 5 and 6: Brier, alpha with its standard error and t, the share of
    rounds beating the market, and the Murphy components."""

    label: str
    brier: float
    alpha: float
    alpha_se: float | None
    t: float | None
    beat: float | None
    reliability: float
    resolution: float


class PaperCategory(Record):
    """One row of Table 7."""

    category: str
    rounds: int
    market_brier: float
    best_label: str
    best_alpha: float
    positive: int


PAPER_MARKET_BRIER = 0.1995
"""Table 5's mean market-consensus Brier (Table 7's round-weighted total is 0.202)."""

PAPER_LEADERBOARD: tuple[PaperRow, ...] = (
    PaperRow(label="claude-opus-4-5", brier=0.1945, alpha=0.0049, alpha_se=0.0036, t=1.37,
             beat=0.56, reliability=0.0107, resolution=0.0653),
    PaperRow(label="gpt-5-2", brier=0.1954, alpha=0.0041, alpha_se=0.0037, t=1.10, beat=0.52,
             reliability=0.0123, resolution=0.0635),
    PaperRow(label="gemini-3-pro", brier=0.1960, alpha=0.0034, alpha_se=0.0035, t=0.99,
             beat=0.52, reliability=0.0051, resolution=0.0587),
    PaperRow(label="grok-4-1", brier=0.2010, alpha=-0.0015, alpha_se=0.0017, t=-0.86,
             beat=0.46, reliability=0.0086, resolution=0.0585),
    PaperRow(label="glm-4-7", brier=0.2072, alpha=-0.0077, alpha_se=0.0038, t=-2.03,
             beat=0.34, reliability=0.0063, resolution=0.0477),
    PaperRow(label="Market Consensus", brier=0.1995, alpha=0.0, alpha_se=None, t=None,
             beat=None, reliability=0.0079, resolution=0.0581),
    PaperRow(label="Random Baseline", brier=0.3384, alpha=-0.1390, alpha_se=0.0192, t=-7.24,
             beat=0.16, reliability=0.0959, resolution=0.0091),
)  # fmt: skip

PAPER_CATEGORIES: tuple[PaperCategory, ...] = (
    PaperCategory(category="crypto", rounds=12, market_brier=0.198,
                  best_label="claude-opus-4-5", best_alpha=0.0148, positive=4),
    PaperCategory(category="politics", rounds=11, market_brier=0.221,
                  best_label="claude-opus-4-5", best_alpha=0.0112, positive=3),
    PaperCategory(category="sports", rounds=9, market_brier=0.167, best_label="gpt-5-2",
                  best_alpha=0.0083, positive=3),
    PaperCategory(category="economics", rounds=7, market_brier=0.207,
                  best_label="gemini-3-pro", best_alpha=0.0060, positive=2),
    PaperCategory(category="geopolitics", rounds=6, market_brier=0.234, best_label="gpt-5-2",
                  best_alpha=-0.0019, positive=0),
    PaperCategory(category="entertainment", rounds=5, market_brier=0.192,
                  best_label="claude-opus-4-5", best_alpha=0.0041, positive=2),
)  # fmt: skip


class PaperComparison(Record):
    """One figure of Tables 5-7: the paper's value, pastcast's and their difference; over
    seeds, pastcast's is the mean and ``low``-``high`` the 5-95% range."""

    table: str
    row: str
    figure: str
    paper: float
    pastcast: float | None
    low: float | None = None
    high: float | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def residual(self) -> float | None:
        return None if self.pastcast is None else self.pastcast - self.paper


Got = float | SeedFigure | None
_FIGURES = ("brier", "alpha", "alpha_se", "t", "beat", "REL", "RES")
"""Tables 5 and 6's figures (Table 6: REL and RES, the ``reliability`` and ``resolution`` of a
``PaperRow`` and of ours)."""
_KEYS = {"REL": "reliability", "RES": "resolution"}


def _item(table: str, row: str, figure: str, paper: float, got: Got) -> PaperComparison:
    """One figure beside the paper's: a value at one seed, or a mean and range over seeds."""
    if isinstance(got, SeedFigure):
        return PaperComparison(table=table, row=row, figure=figure, paper=paper,
                               pastcast=got.mean, low=got.low, high=got.high)  # fmt: skip
    return PaperComparison(table=table, row=row, figure=figure, paper=paper, pastcast=got)


def _field(record: Record | None, name: str) -> Got:
    """``record``'s figure ``name``; None without the record (a category no round fell in)."""
    return None if record is None else cast(Got, getattr(record, name))


def _leaderboard(market: Got, ours: Mapping[str, Mapping[str, Got]]) -> list[PaperComparison]:
    """Table 5's market Brier and every figure of Tables 5 and 6 the paper gives, beside
    ``ours`` (each paper label's figures by key)."""
    out = [_item("5", "market", "brier", PAPER_MARKET_BRIER, market)]
    for row in PAPER_LEADERBOARD:
        mine = ours.get(row.label, {})
        for figure in _FIGURES:
            key, table = _KEYS.get(figure, figure), "6" if figure in _KEYS else "5"
            paper = getattr(row, key)
            if paper is not None:
                out.append(_item(table, row.label, figure, paper, mine.get(key)))
    return out


def compare_with_paper(
    report: ArenaReport, labels: Mapping[str, str]
) -> tuple[PaperComparison, ...]:
    """Every figure of Tables 5, 6 and 7 beside the same figure of ``report``; ``labels`` maps
    an archetype's name to the paper's placeholder label. A Table 7 row's best agent is
    compared by its alpha; the best agent's label is in the ``row``."""
    ours: dict[str, dict[str, Got]] = {}
    for r in report.leaderboard:
        figures = {"brier": r.brier, "alpha": r.alpha, "alpha_se": r.alpha_se, "t": r.t}
        ours[labels.get(r.agent, r.agent)] = {**figures, "beat": r.beat_market}
    for m in report.murphy:
        mine = ours.setdefault(labels.get(m.agent, m.agent), {})
        mine.update(reliability=m.reliability, resolution=m.resolution)
    out = _leaderboard(report.market_brier, ours)
    categories = {c.category: c for c in report.categories}
    for cat in PAPER_CATEGORIES:
        got = categories.get(cat.category)
        best = "-" if got is None or got.best_agent is None else got.best_agent
        row = f"{cat.category} ({cat.best_label} / {labels.get(best, best)})"
        out += [
            _item("7", cat.category, "rounds", cat.rounds, _field(got, "rounds")),
            _item("7", cat.category, "market brier", cat.market_brier, _field(got, "market_brier")),
            _item("7", row, "best alpha", cat.best_alpha, _field(got, "best_alpha")),
            _item("7", cat.category, "#alpha>0", cat.positive, _field(got, "positive")),
        ]
    return tuple(out)


def compare_seeds_with_paper(
    summary: SeedSummary, labels: Mapping[str, str]
) -> tuple[PaperComparison, ...]:
    """Tables 5-7 beside the means (and 5-95% ranges) over seeds of ``summary``; Table 7's best
    agent is set beside the share of seeds at which the paper's best archetype is the best
    (the ``row`` names it), and ``significant`` is the share of seeds with |t| >= 2, set beside
    1 where the paper's t is past 2 and 0 where not."""
    rows = {labels.get(r.agent, r.agent): r for r in summary.rows}
    out = _leaderboard(summary.market_brier, {k: r.figures for k, r in rows.items()})
    for paper in PAPER_LEADERBOARD:
        mine = rows.get(paper.label)
        if paper.t is not None:
            significant = float(abs(paper.t) >= 2)
            share = None if mine is None else mine.significant
            out.append(_item("5", paper.label, "significant", significant, share))
    categories = {c.category: c for c in summary.categories}
    by_label = {labels.get(r.agent, r.agent): r.agent for r in summary.rows}
    for cat in PAPER_CATEGORIES:
        got = categories.get(cat.category)
        best = None if got is None else got.best.get(by_label.get(cat.best_label, ""), 0.0)
        row = f"{cat.category} ({cat.best_label})"
        out += [
            _item("7", cat.category, "market brier", cat.market_brier, _field(got, "market_brier")),
            _item("7", cat.category, "best alpha", cat.best_alpha, _field(got, "best_alpha")),
            _item("7", row, "best is paper's", 1.0, best),
            _item("7", cat.category, "#alpha>0", cat.positive, _field(got, "positive")),
        ]
    return tuple(out)


def paper_table(rows: tuple[PaperComparison, ...], run: str) -> TextTable:
    """``rows`` as a table titled with the ``run`` they come from (a seed, or seeds)."""
    spread = any(c.low is not None for c in rows)
    cells = tuple(
        (c.table, c.row, c.figure, f"{c.paper:+.4f}", fmt_number(c.pastcast, 4, signed=True))
        + (("" if c.low is None else f"{c.low:+.4f} {c.high:+.4f}",) * spread)
        + (fmt_number(c.residual, 4, signed=True),)
        for c in rows
    )
    columns = ("table", "row", "figure", "paper", "pastcast", *(("5-95%",) * spread), "difference")
    title = f"The paper's Tables 5-7 (seed 137, R = 50, k = 7) beside ours ({run})"
    return TextTable(title, columns, cells, len(cells), 3)
