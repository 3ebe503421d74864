"""The self-contained HTML report of one or more run logs, with its Markdown and LaTeX tables,
the scorecard as JSON and every figure as PNG and SVG files.

The HTML embeds its figures (PNG, base64) and its style, so the one file can be mailed or
archived; Jinja2 escapes every value it renders (agent names, event titles, failure messages
come from run logs and datasets, which are not trusted to be HTML).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from jinja2 import Environment, PackageLoader, select_autoescape

from pastcast.atomic import write_atomic
from pastcast.owned import claim_dir
from pastcast.reports._compare import default_pairs, paired_table
from pastcast.reports._runs import Runs
from pastcast.reports._scorecard import Scorecard, scorecard
from pastcast.reports._tables import (
    TextTable,
    calibration_table,
    cost_table,
    main_table,
    to_latex,
    to_markdown,
)
from pastcast.reports.figures import RenderedFigure, ReportData, render_figures
from pastcast.reports.html._sections import ReportSection
from pastcast.safejson import clean_json
from pastcast.scoring import Convention, PairedComparison, paired_comparison

if TYPE_CHECKING:
    from pastcast.audit import LeakageCard


@dataclass(frozen=True)
class WrittenReport:
    html: Path
    markdown: Path
    latex: Path
    json: Path
    figures: tuple[Path, ...]
    card: Scorecard


def report_pairs(card: Scorecard, runs: Runs) -> list[PairedComparison]:
    """The paired comparisons the report shows (``default_pairs``: each agent's other settings
    against memory-free, the same agent and setting in a later run against the first), scored
    as the card is."""
    table = runs.base_table
    return [
        paired_comparison(
            table, other, base, fallback=card.fallback, bootstrap=card.bootstrap, seed=card.seed
        )
        for base, other in default_pairs(table)
    ]


def _failures(runs: Runs) -> Counter[tuple[str, str, str]]:
    """Unusable forecasts by agent, setting and reason, from the step columns."""
    out: Counter[tuple[str, str, str]] = Counter()
    for b in runs.batches(("agent", "setting", "usable", "failure_reason")):
        out.update(
            (agent, setting, reason or "-")
            for agent, setting, usable, reason in zip(
                b["agent"], b["setting"], b["usable"], b["failure_reason"], strict=True
            )
            if not usable
        )
    return out


def report_tables(
    card: Scorecard, runs: Runs, pairs: Sequence[PairedComparison] | None = None
) -> list[TextTable]:
    """The report's tables in order: main, calibration, cost, unusable forecasts by reason, and
    the paired differences where two agents or settings share steps."""
    failures = _failures(runs)
    fail_rows = tuple((a, st, r, str(n)) for (a, st, r), n in sorted(failures.items()))
    pairs = report_pairs(card, runs) if pairs is None else pairs
    paired = [paired_table(pairs, "Paired differences on shared steps")] if pairs else []
    return [
        main_table(card),
        calibration_table(card),
        cost_table(card),
        TextTable(
            "Unusable forecasts by reason",
            ("agent", "setting", "reason", "count"),
            fail_rows,
            len(fail_rows),
            3,
            "" if fail_rows else "None.",
        ),
        *paired,
    ]


def _environment() -> Environment:
    return Environment(
        loader=PackageLoader("pastcast.reports.html", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )


def write_html_report(
    runs: Runs,
    out: str | Path,
    *,
    by: Sequence[str] = ("agent", "setting"),
    fallback: Convention = "uniform",
    bootstrap: int = 4000,
    seed: int = 0,
    bins: int = 10,
    events: Sequence[str] = (),
    lookback: Sequence[float] | None = None,
    figures: Sequence[str] | None = None,
    sections: Sequence[ReportSection] = (),
    leakage: Sequence[LeakageCard] = (),
) -> WrittenReport:
    """Write the report's files under ``out`` (docs/reports.md, "The HTML report"), each replaced
    whole; ``out`` is claimed first (``pastcast.owned.claim_dir``: ``FileExistsError`` before
    anything is written). ``runs``: read with at least ``REPORT_COLUMNS``. ``figures`` names
    registered figures (default: all that the runs support). ``leakage``: the runs' leakage
    cards, in a section of their own and in ``leakage.json``. ``sections`` (the arena's rounds)
    follow the figures, their tables in the Markdown and LaTeX files too and their figures as
    ``figures/SLUG-NAME.{png,svg}``."""
    out = claim_dir(Path(out), "report")
    (out / "figures").mkdir(exist_ok=True)
    card = scorecard(runs, by, fallback, bootstrap=bootstrap, seed=seed, bins=bins)
    data = ReportData(runs, card, tuple(events), tuple(lookback) if lookback else None)
    drawn: list[RenderedFigure] = render_figures(data, figures)
    figure_paths: list[Path] = []
    named = [(f.name, f) for f in drawn]
    named += [(f"{s.slug}-{f.name}", f) for s in sections for f in s.figures]
    for name, fig in named:
        for ext, blob in (("png", fig.png), ("svg", fig.svg.encode("utf-8"))):
            figure_paths.append(out / "figures" / f"{name}.{ext}")
            write_atomic(figure_paths[-1], blob)
    pairs = report_pairs(card, runs)
    tables = report_tables(card, runs, pairs)
    extra = [t for section in sections for t in section.tables]
    md = "# pastcast report\n\n" + "\n\n".join(to_markdown(t) for t in [*tables, *extra]) + "\n"
    tex = (
        "% needs \\usepackage{booktabs}\n"
        + "\n\n".join(to_latex(t) for t in [*tables[:3], *extra])
        + "\n"
    )
    logs = runs.logs
    html = (
        _environment()
        .get_template("report.html.j2")
        .render(
            runs=[
                {
                    "run_id": log.header.run_id,
                    "path": log.path.name,
                    "dataset": log.header.dataset_id,
                    "code": log.header.code_version,
                    "steps": steps,
                    "created": f"{log.header.created_at:%Y-%m-%d %H:%M} UTC",
                }
                for log, steps in zip(logs, runs.log_sizes(), strict=True)
            ],
            card=card,
            tables=tables,
            figures=[f.embedded() for f in drawn],
            sections=[{**vars(s), "figures": [f.embedded() for f in s.figures]} for s in sections],
            generated=f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
            leakage=[{"dataset": c.dataset_id, "run": c.run_id, "rows": c.rows()} for c in leakage],
        )
    )
    paths = (out / "report.html", out / "tables.md", out / "tables.tex", out / "scorecard.json")
    card_dict = {**card.as_dict(), "paired": [p.as_dict() for p in pairs]}
    card_json = json.dumps(clean_json(card_dict), indent=2, allow_nan=False, default=str)
    for path, text in zip(paths, (html, md, tex, card_json + "\n"), strict=True):
        write_atomic(path, text)
    if leakage:
        cards = json.dumps([c.model_dump(mode="json") for c in leakage], indent=2)
        write_atomic(out / "leakage.json", cards + "\n")
    return WrittenReport(*paths, tuple(figure_paths), card)
