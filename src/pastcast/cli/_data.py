"""`pastcast data ...` commands: import real market data into datasets (`data info` and
`data show`, which describe them, live in ``_data_view``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, fields
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from pastcast.app import (
    ForecastBenchImport,
    Imported,
    MarketImport,
    PolymarketImport,
    filter_values,
)
from pastcast.app import import_forecastbench as forecastbench_dataset
from pastcast.app import import_polymarket as polymarket_dataset
from pastcast.cli import _curate, _data_view
from pastcast.cli._common import (
    ConfigOpt,
    JsonFlag,
    fail_field,
    field_errors,
    field_help,
    field_option,
    options_record,
    print_json,
)
from pastcast.cutoff import DayConvention
from pastcast.errors import FieldError
from pastcast.markets import FilterConfig, NothingKept, schedules

if TYPE_CHECKING:
    from pastcast.markets import DatasetBuildReport

app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)
import_app = typer.Typer(help="Import resolved markets from a source.", no_args_is_help=True)
app.add_typer(import_app, name="import")

ScheduleOpt = Annotated[
    str, typer.Option("--schedule", help=f"Forecast-date schedule: {'|'.join(schedules.names())}.")
]


_field = partial(field_option, ForecastBenchImport)


SplitOpt = Annotated[str | None, _field("split", "--split")]
CorpusEndOpt = Annotated[str | None, _field("corpus_end", "--corpus-end")]
OutOpt = Annotated[Path | None, _field("out", "--out")]
LateClosesOpt = Annotated[bool, _field("keep_late_closes", "--keep-late-closes")]
SiblingsOpt = Annotated[bool, _field("drop_sibling_answers", "--drop-sibling-answers")]
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
ConventionOpt = Annotated[DayConvention, _field("day_convention", "--day-convention")]
NewsOpt = Annotated[str | None, _field("news_corpus", "--news-corpus")]

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
PresetOpt = Annotated[str | None, _field("preset", "--preset")]


IMPORT_OPTIONS = {"source": "", "files": "--file", "filters": ""}


# Options of `data import` that are not the record's fields by the same name.
_FIELDS: dict[str, str | None] = {
    **dict.fromkeys(("filters_file", "filter_values", "min_dates", "as_json")),
    "source": "sources",
    "file": "files",
    "limit": "page_size",
}


def _import(ctx: typer.Context, kind: type[MarketImport], run: Callable[[Any], Imported]) -> None:
    """Import as the record of the options given says, and report: the market filters are the
    values of ``--filters FILE``, then each ``--filter NAME=VALUE``, then ``--min-dates``; a
    preset (``--preset``) fills what they leave out."""
    params = ctx.params
    min_dates, as_json = params["min_dates"], params["as_json"]
    with field_errors(IMPORT_OPTIONS):
        values = filter_values(params["filters_file"], params["filter_values"] or ())
    if min_dates is not None:
        values["min_dates"] = min_dates
    plan = options_record(ctx, kind, _FIELDS, **({"filters": values} if values else {}))
    history = getattr(plan, "history_repo", None)
    if history is not None and Path(history).is_dir():
        typer.echo(
            f"reading the nightly history of {history} (minutes for the full upstream history)",
            err=True,
        )
    try:
        imported = run(plan)
    except NothingKept as exc:
        _kept_nothing(exc, as_json)
    except FieldError as exc:
        fail_field(exc, IMPORT_OPTIONS)
    _report(imported, as_json)


def _funnel(report: DatasetBuildReport) -> None:
    for stage in report.funnel:
        typer.echo(f"  {stage.stage:<40} -{stage.removed:<6} {stage.remaining:>6}  {stage.note}")
        for example in stage.examples:
            typer.echo(f"  {'':<40}  e.g. {example}")


def _kept_nothing(exc: NothingKept, as_json: bool) -> NoReturn:
    """The funnel of an import that kept nothing, on stdout (as JSON with ``as_json``), and what
    would keep events; then the error line (exit 2)."""
    if as_json:
        print_json(
            {
                "error": exc.reason,
                "events": 0,
                "steps": 0,
                "funnel": [asdict(stage) for stage in exc.report.funnel],
                "relax": list(exc.relax),
            }
        )
    else:
        typer.echo("nothing written; the funnel:")
        _funnel(exc.report)
        for line in exc.relax:
            typer.echo(f"to keep the events of {line}")
    fail_field(exc, IMPORT_OPTIONS)


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
    _funnel(report)
    for stage in report.funnel:
        if stage.hint:
            typer.echo(f"hint ({stage.stage}): {stage.hint}")


@import_app.command("forecastbench")
def import_forecastbench(
    ctx: typer.Context,
    path_or_url: Annotated[
        str | None, typer.Argument(help=field_help(ForecastBenchImport, "path_or_url"))
    ] = None,
    out: OutOpt = None,
    schedule: ScheduleOpt = "causal-dojo",
    source: Annotated[list[str] | None, _field("sources", "--source")] = None,
    split: SplitOpt = None,
    corpus_end: CorpusEndOpt = None,
    file: Annotated[list[str] | None, _field("files", "--file")] = None,
    cache: Annotated[Path | None, _field("cache", "--cache")] = None,
    news_corpus: NewsOpt = None,
    history_repo: Annotated[Path | None, _field("history_repo", "--history-repo")] = None,
    filters_file: FiltersFileOpt = None,
    filter_values: FilterOpt = None,
    day_convention: ConventionOpt = DayConvention.START_OF_DAY,
    keep_late_closes: LateClosesOpt = False,
    drop_sibling_answers: SiblingsOpt = False,
    min_dates: MinDatesOpt = None,
    preset: PresetOpt = None,
    config: ConfigOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Import ForecastBench's resolved binary market questions with their daily series."""
    _import(ctx, ForecastBenchImport, forecastbench_dataset)


_PM = PolymarketImport(out=".")  # the defaults shown


_pm = partial(field_option, PolymarketImport)


@import_app.command("polymarket")
def import_polymarket(
    ctx: typer.Context,
    out: OutOpt = None,
    base_url: Annotated[str, _pm("base_url", "--base-url")] = _PM.base_url,
    clob_url: Annotated[str, _pm("clob_url", "--clob-url")] = _PM.clob_url,
    data_url: Annotated[str, _pm("data_url", "--data-url")] = _PM.data_url,
    trades: Annotated[bool, _pm("trades", "--trades/--no-trades")] = True,
    schedule: ScheduleOpt = "causal-dojo",
    split: SplitOpt = None,
    corpus_end: CorpusEndOpt = None,
    limit: Annotated[int, _pm("page_size", "--limit", min=1)] = 100,
    max_events: Annotated[int | None, _pm("max_events", "--max-events", min=1)] = None,
    news_corpus: NewsOpt = None,
    filters_file: FiltersFileOpt = None,
    filter_values: FilterOpt = None,
    day_convention: ConventionOpt = DayConvention.START_OF_DAY,
    keep_late_closes: LateClosesOpt = False,
    drop_sibling_answers: SiblingsOpt = False,
    min_dates: MinDatesOpt = None,
    preset: PresetOpt = None,
    config: ConfigOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Import resolved Polymarket events (binary and neg-risk multi-option) with price history
    and daily trading activity."""
    _import(ctx, PolymarketImport, polymarket_dataset)


app.command("info")(_data_view.info)
app.command("show")(_data_view.show)
app.command("curate")(_curate.curate)
