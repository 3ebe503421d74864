"""`pastcast data ...` commands: import real market data into datasets (`data info` and
`data show`, which describe them, live in ``_data_view``)."""

from __future__ import annotations

from dataclasses import asdict, fields
from pathlib import Path
from typing import Annotated, Any

import typer

from pastcast.app import (
    AppError,
    ForecastBenchImport,
    Imported,
    MarketImport,
    PolymarketImport,
    filter_values,
)
from pastcast.app import import_forecastbench as forecastbench_dataset
from pastcast.app import import_polymarket as polymarket_dataset
from pastcast.cli import _curate, _data_view
from pastcast.cli._common import JsonFlag, fail_field, options_record, print_json
from pastcast.cutoff import DayConvention
from pastcast.markets import FilterConfig, schedules

app = typer.Typer(
    help="Import real market data into datasets and describe them.", no_args_is_help=True
)
import_app = typer.Typer(help="Import resolved markets from a source.", no_args_is_help=True)
app.add_typer(import_app, name="import")

ScheduleOpt = Annotated[
    str, typer.Option("--schedule", help=f"Forecast-date schedule: {'|'.join(schedules.names())}.")
]
SourceOpt = Annotated[
    list[str] | None, typer.Option("--source", help="Keep only this source (repeatable).")
]
SplitOpt = Annotated[
    str | None,
    typer.Option("--split", help="Temporal split T0,T1,T2 (train [T0,T1), eval [T1,T2))."),
]
CorpusEndOpt = Annotated[
    str | None, typer.Option("--corpus-end", help="Last corpus day (caps the hindcast t0).")
]
OutOpt = Annotated[Path, typer.Option("--out", help="Dataset directory to write.")]
LateClosesOpt = Annotated[
    bool,
    typer.Option(
        "--keep-late-closes",
        help="Keep markets scheduled to close after the data was collected. They are there only "
        "because they resolved early, and their close dates say so (docs/audits.md).",
    ),
]
SiblingsOpt = Annotated[
    bool,
    typer.Option(
        "--drop-sibling-answers",
        help="Drop the steps whose question, background or options name the resolved answer "
        "of another imported event still open at their cutoff (docs/audits.md).",
    ),
]
_FILTER_NAMES = ", ".join(f.name for f in fields(FilterConfig))
FiltersFileOpt = Annotated[
    Path | None,
    typer.Option(
        "--filters",
        help="TOML or JSON file of market-filter values (its top level, or its filters table); "
        f"names: {_FILTER_NAMES}.",
    ),
]
FilterOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--filter",
        metavar="NAME=VALUE",
        help="One market-filter value, e.g. min_lifetime_days=14, or a type's faithful-day "
        "threshold, e.g. multi.min_trades=2 (repeatable; applied over --filters).",
    ),
]
ConventionOpt = Annotated[
    DayConvention,
    typer.Option(
        "--day-convention",
        help="How a scheduled day becomes a cutoff: start_of_day (00:00 UTC, nothing dated that "
        "day is visible; the default) or inclusive (Forecast-Dojo: the whole day is visible).",
    ),
]
NewsOpt = Annotated[
    str | None,
    typer.Option(
        "--news-corpus",
        help="Corpus (index directory or PostgreSQL URL) whose documents per day feed the dojo "
        "schedule's news-volume term.",
    ),
]

MinDatesOpt = Annotated[
    int | None,
    typer.Option(
        "--min-dates",
        min=0,
        max=10_000,
        help="Forecast dates an evaluation event must keep (Forecast-Dojo: 3); training events "
        "keep theirs (default: the market filter min_dates, 0: no such rule).",
    ),
]
PresetOpt = Annotated[
    str | None,
    typer.Option(
        "--preset",
        help="Import as a paper does (dojo: evaluation events keep >= 3 forecast dates; "
        "hindcast: its schedule); options given here are set over it.",
    ),
]


IMPORT_OPTIONS = {"source": "", "files": "--file", "filters": ""}


# Options of `data import` that are not the record's fields by the same name.
_FIELDS: dict[str, str | None] = {
    **dict.fromkeys(("filters_file", "filter_values", "min_dates", "as_json")),
    "source": "sources",
    "file": "files",
    "limit": "page_size",
}


def _import_plan(
    ctx: typer.Context,
    kind: type[MarketImport],
    file: Path | None,
    items: list[str] | None,
    min_dates: int | None,
) -> Any:
    """The import's record of the options given: the market filters are the values of
    ``--filters FILE``, then each ``--filter NAME=VALUE``, then ``--min-dates``; a preset
    (``--preset``) fills what they leave out."""
    try:
        values = filter_values(file, items or ())
    except AppError as exc:
        fail_field(exc, IMPORT_OPTIONS)
    if min_dates is not None:
        values["min_dates"] = min_dates
    return options_record(ctx, kind, _FIELDS, **({"filters": values} if values else {}))


def _report(imported: Imported, as_json: bool) -> None:
    ds, report, out, notes = imported.dataset, imported.report, imported.out, imported.notes
    if as_json:
        print_json(
            {
                "dataset_id": ds.id,
                "out": str(out),
                "events": len(ds.events),
                "steps": len(ds.steps),
                "funnel": [asdict(stage) for stage in report.funnel],
                "import_notes": notes,
            }
        )
        return
    for reason, count in notes.items():  # what the importer dropped or assumed
        typer.echo(f"note: {reason}: {count}", err=True)
    typer.echo(f"wrote {ds.id} to {out}: {len(ds.events)} events, {len(ds.steps)} steps")
    for stage in report.funnel:
        typer.echo(f"  {stage.stage:<40} -{stage.removed:<6} {stage.remaining:>6}  {stage.note}")
        for example in stage.examples:
            typer.echo(f"  {'':<40}  e.g. {example}")
    for stage in report.funnel:
        if stage.hint:
            typer.echo(f"hint ({stage.stage}): {stage.hint}")


@import_app.command("forecastbench")
def import_forecastbench(
    ctx: typer.Context,
    path_or_url: Annotated[str, typer.Argument(help="ForecastBench folder, or a base URL.")],
    out: OutOpt,
    schedule: ScheduleOpt = "causal-dojo",
    source: SourceOpt = None,
    split: SplitOpt = None,
    corpus_end: CorpusEndOpt = None,
    file: Annotated[
        list[str] | None,
        typer.Option("--file", help="Extra file to download (relative to the base URL)."),
    ] = None,
    cache: Annotated[
        Path | None, typer.Option("--cache", help="Download folder (default: a temp folder).")
    ] = None,
    news_corpus: NewsOpt = None,
    history_repo: Annotated[
        Path | None,
        typer.Option(
            "--history-repo",
            help="A local git clone of github.com/forecastingresearch/forecastbench-datasets: "
            "daily series rebuilt from the nightly versions of its resolution sets (the "
            "published files alone carry one price per question set).",
        ),
    ] = None,
    filters_file: FiltersFileOpt = None,
    filter_values: FilterOpt = None,
    day_convention: ConventionOpt = DayConvention.START_OF_DAY,
    keep_late_closes: LateClosesOpt = False,
    drop_sibling_answers: SiblingsOpt = False,
    min_dates: MinDatesOpt = None,
    preset: PresetOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Import ForecastBench's resolved binary market questions with their daily series."""
    plan = _import_plan(ctx, ForecastBenchImport, filters_file, filter_values, min_dates)
    if history_repo is not None and history_repo.is_dir():
        typer.echo(
            f"reading the nightly history of {history_repo} (minutes for the full upstream "
            "history)",
            err=True,
        )
    try:
        imported = forecastbench_dataset(plan)
    except AppError as exc:
        fail_field(exc, IMPORT_OPTIONS)
    _report(imported, as_json)


@import_app.command("polymarket")
def import_polymarket(
    ctx: typer.Context,
    out: OutOpt,
    base_url: Annotated[str, typer.Option("--base-url", help="Gamma API base URL.")] = (
        "https://gamma-api.polymarket.com"
    ),
    clob_url: Annotated[str, typer.Option("--clob-url", help="CLOB API base URL.")] = (
        "https://clob.polymarket.com"
    ),
    data_url: Annotated[
        str, typer.Option("--data-url", help="Data API base URL (the public trade feed).")
    ] = "https://data-api.polymarket.com",
    trades: Annotated[
        bool,
        typer.Option(
            "--trades/--no-trades",
            help="Fetch each market's trades for the faithful-day filter (daily trade counts "
            "and share volume on the realised leg).",
        ),
    ] = True,
    schedule: ScheduleOpt = "causal-dojo",
    split: SplitOpt = None,
    corpus_end: CorpusEndOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Events per page.")] = 100,
    max_events: Annotated[
        int | None, typer.Option("--max-events", min=1, help="Stop after this many events.")
    ] = None,
    news_corpus: NewsOpt = None,
    filters_file: FiltersFileOpt = None,
    filter_values: FilterOpt = None,
    day_convention: ConventionOpt = DayConvention.START_OF_DAY,
    keep_late_closes: LateClosesOpt = False,
    drop_sibling_answers: SiblingsOpt = False,
    min_dates: MinDatesOpt = None,
    preset: PresetOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Import resolved Polymarket events (binary and neg-risk multi-option) with price history
    and daily trading activity."""
    plan = _import_plan(ctx, PolymarketImport, filters_file, filter_values, min_dates)
    try:
        imported = polymarket_dataset(plan)
    except AppError as exc:
        fail_field(exc, IMPORT_OPTIONS)
    _report(imported, as_json)


app.command("info")(_data_view.info)
app.command("show")(_data_view.show)
app.command("curate")(_curate.curate)
