"""`pastcast data info` and `pastcast data show`: describe a dataset, its corpus coverage, and one
of its questions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from pastcast.app import dataset_question, describe_dataset
from pastcast.cli._common import DayConventionOpt, JsonFlag, fail_app, field_errors, print_json
from pastcast.cutoff import DayConvention

__all__ = ["CorpusCoverageOpt", "CoverageDaysOpt", "info", "show"]

CoverageDaysOpt = Annotated[
    int,
    typer.Option(
        "--coverage-days",
        min=1,
        help="Corpus coverage: a step is covered when the corpus has a document dated in this "
        "many days before its cutoff.",
    ),
]
CorpusCoverageOpt = Annotated[
    str | None,
    typer.Option(
        "--corpus",
        help="Corpus (index directory or PostgreSQL URL): report, per split, the steps without "
        "a document in the --coverage-days before their cutoff.",
    ),
]


def info(
    directory: Annotated[Path, typer.Argument(help="Dataset directory.")],
    corpus: CorpusCoverageOpt = None,
    coverage_days: CoverageDaysOpt = 7,
    leakage: Annotated[
        bool,
        typer.Option(
            "--leakage-card/--no-leakage-card",
            help="The leakage card: construction audit, question-text edits, sibling answers, "
            "the corpus's dating (with --corpus) and the events each model may remember.",
        ),
    ] = True,
    as_json: JsonFlag = False,
) -> None:
    """Counts by source, label, split and schedule, the filtering funnel, (with --corpus) the
    corpus coverage of the steps per split, and the leakage card."""
    with field_errors({"dataset": ""}):
        described = describe_dataset(
            directory, corpus=corpus, coverage_days=coverage_days, leakage=leakage
        )
    summary, report = described.summary, described.coverage
    if as_json:
        print_json(summary)
        if report is not None:
            for line in report.warnings():
                typer.echo(f"warning: {line}", err=True)
        return
    keys = ("dataset_id", "events", "by_source", "by_category", "by_label", "by_split")
    for key in (*keys, "beliefs", "steps"):
        typer.echo(f"{key}: {summary[key]}")
    for stage in summary["funnel"]:
        typer.echo(f"  {stage['stage']:<40} -{stage['removed']:<6} {stage['remaining']:>6}")
    for stage in summary["funnel"]:
        if stage.get("hint"):
            typer.echo(f"hint ({stage['stage']}): {stage['hint']}")
    if report is not None:
        typer.echo(
            f"coverage by {corpus}: {report.documents} documents, "
            f"{report.first_day} .. {report.last_day}; a step is covered by a document of the "
            f"{report.window_days} days before its cutoff"
        )
        for s in report.splits:
            typer.echo(f"  {s.split:<12} {s.covered:>6} of {s.steps:<6} steps covered")
        for line in report.warnings():
            typer.echo(f"warning: {line}", err=True)
    if described.leakage is not None:
        typer.echo("leakage card:")
        for channel, text in described.leakage.rows():
            typer.echo(f"  {channel + ':':<32} {text}")


def show(
    event: Annotated[str, typer.Argument(help="Event id (or the unique prefix of one).")],
    dataset: Annotated[
        str,
        typer.Option(
            "--dataset",
            help="'world[:SEED]', a dataset directory or a Forecast-Dojo release folder.",
        ),
    ] = "world",
    outcome: Annotated[
        bool,
        typer.Option("--outcome", help="Also print the resolved outcome and when it resolved."),
    ] = False,
    day_convention: DayConventionOpt = DayConvention.START_OF_DAY,
    as_json: JsonFlag = False,
) -> None:
    """Print one question as its dataset holds it: text, options, dates, category, forecast
    steps and market-price days (the outcome only with --outcome)."""
    with field_errors({"event": "EVENT"}, fail_app):
        q = dataset_question(event, dataset, outcome=outcome, convention=day_convention)
    if as_json:
        print_json(q)
        return
    ev = q["event"]
    typer.echo(
        f"{ev['id']}  ({ev['kind']}; {ev['category'] or 'no category'}; split "
        f"{q['split'] or '-'}; source {ev['source'] or '-'})"
    )
    typer.echo(ev["title"])
    typer.echo(f"options: {' | '.join(ev['labels'])}")
    typer.echo(f"open {ev['open_time']}  close {ev['close_time']}")
    if ev["tags"]:
        typer.echo(f"tags: {', '.join(ev['tags'])}")
    if ev["url"]:
        typer.echo(f"url: {ev['url']}")
    for name, text in (
        ("description", ev["description"]),
        ("resolution criteria", ev["resolution_criteria"]),
    ):
        if text:
            typer.echo(f"\n{name}:\n{text}")
    typer.echo(f"\nforecast steps ({len(q['steps'])}): {', '.join(q['steps']) or '-'}")
    b = q["beliefs"]
    typer.echo(
        f"market prices: {b['days']} days" + (f", {b['first']} .. {b['last']}" if b["days"] else "")
    )
    if "resolution" in q:
        r = q["resolution"]
        typer.echo(f"outcome: {r['label']} (resolved {r['resolved_at']})")
