"""`pastcast data ...` commands: import real market data into datasets, describe a dataset
(its corpus coverage too) and one of its questions, and curate a new dataset of the events a
judge finds fair and answerable from the archive."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, fields
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from pastcast.app import (
    Curated,
    CurationPlan,
    ForecastBenchImport,
    Imported,
    MarketImport,
    PolymarketImport,
    curate_dataset,
    dataset_question,
    describe_dataset,
    filter_values,
)
from pastcast.app import import_forecastbench as forecastbench_dataset
from pastcast.app import import_polymarket as polymarket_dataset
from pastcast.cli._common import (
    EXIT_FAILED,
    ConfigOpt,
    CoverageDaysOpt,
    DayConventionOpt,
    JsonFlag,
    fail,
    fail_app,
    fail_field,
    field_errors,
    field_help,
    field_option,
    options_record,
    print_json,
)
from pastcast.curate import CurationConfig
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
        # the funnel of an import that kept nothing, on stdout (as JSON with ``as_json``), and
        # what would keep events; then the error line (exit 2)
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
    except FieldError as exc:
        fail_field(exc, IMPORT_OPTIONS)
    _report(imported, as_json)


def _funnel(report: DatasetBuildReport) -> None:
    for stage in report.funnel:
        typer.echo(f"  {stage.stage:<40} -{stage.removed:<6} {stage.remaining:>6}  {stage.note}")
        for example in stage.examples:
            typer.echo(f"  {'':<40}  e.g. {example}")


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


CorpusCoverageOpt = Annotated[
    str | None,
    typer.Option(
        "--corpus",
        help="Corpus (index directory or PostgreSQL URL): report, per split, the steps without "
        "a document in the --coverage-days before their cutoff.",
    ),
]


@app.command("info")
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


@app.command("show")
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


# The curation's settings are the plan's ``config``; --json is no field.
_CURATE_FIELDS: dict[str, str | None] = {
    **{name: f"config.{name}" for name in CurationConfig.model_fields},
    "as_json": None,
}


_cfield = partial(field_option, CurationPlan)


@app.command("curate")
def curate(
    ctx: typer.Context,
    dataset: Annotated[str | None, typer.Argument(help=field_help(CurationPlan, "dataset"))] = None,
    corpus: Annotated[str | None, _cfield("corpus", "--corpus")] = None,
    judge: Annotated[str | None, _cfield("judge", "--judge")] = None,
    out: Annotated[Path | None, _cfield("out", "--out")] = None,
    retrieval: Annotated[str, _cfield("retrieval", "--retrieval")] = "bm25,dense",
    embedder: Annotated[str | None, _cfield("embedder")] = None,
    window_days: Annotated[int, _cfield("window_days", min=0, max=36500)] = 0,
    keep_coverage: Annotated[
        Literal["strong", "weak", "none"],
        typer.Option(help="The weakest coverage label kept by the coverage probe."),
    ] = "strong",
    coverage: Annotated[
        bool, typer.Option(help="Run the coverage probe (--no-coverage skips it).")
    ] = True,
    coverage_queries: Annotated[
        int, typer.Option(min=1, max=20, help="Coverage probe: queries (and blocks) per outcome.")
    ] = 5,
    coverage_final: Annotated[
        Literal["arithmetic", "judge"],
        typer.Option(
            help="Coverage probe's score and label: the arithmetic rule over the sides' labels, "
            "or a final judge step reading both tallies (Hindcast 4.1)."
        ),
    ] = "arithmetic",
    coverage_at: Annotated[
        Literal["judging_date", "close"],
        typer.Option(
            help="When the coverage probe queries the archive: at the judging date, or at the "
            "market's close (Hindcast; never after the last forecast date)."
        ),
    ] = "judging_date",
    balance: Annotated[
        bool, typer.Option(help="Balance YES/NO outcomes, then topics (--no-balance skips it).")
    ] = True,
    topics: Annotated[
        Literal["source", "judge", "auto"],
        typer.Option(
            help="Topics for balancing: the source's category or tag, the judge's classifier, "
            "or the source where it has one (auto)."
        ),
    ] = "auto",
    seed: Annotated[int, typer.Option(help="Seed of the balancing draw.")] = 0,
    min_dates: Annotated[
        int, typer.Option(min=0, max=10_000, help="Forecast dates an evaluation event must keep.")
    ] = 3,
    max_tokens: Annotated[int, _cfield("max_tokens", min=16, max=100_000)] = 512,
    cache: Annotated[Path | None, _cfield("cache", "--cache")] = None,
    preset: Annotated[str | None, _cfield("preset")] = None,
    config: ConfigOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Curate a dataset: forecast dates, query decomposition, the evidence and leakage judge,
    the coverage probe and balancing; writes a new dataset with the funnel."""
    plan = options_record(ctx, CurationPlan, _CURATE_FIELDS)
    with field_errors({"dataset": "DATASET"}):
        curated = curate_dataset(plan)
    result, cache_dir = curated.result, curated.cache
    _report_curated(curated, Path(plan.out), as_json)
    if not result.dataset.events:
        last = next((f for f in reversed(result.funnel) if f.removed), result.funnel[0])
        fail(
            f"no events are left to write (the last removed at stage {last.stage!r}: "
            f"{last.note or 'none'}); nothing written; the judgements are cached in {cache_dir}",
            EXIT_FAILED,
        )


def _report_curated(curated: Curated, out: Path, as_json: bool) -> None:
    """The funnel and the judgement counts (on stdout, written or not)."""
    result, cache_dir = curated.result, curated.cache
    ds = result.dataset
    served = curated.cached
    written = bool(ds.events)
    if as_json:
        print_json(
            {
                "dataset_id": ds.id,
                "out": str(out) if written else None,
                "events": len(ds.events),
                "steps": len(ds.steps),
                "funnel": [asdict(stage) for stage in result.funnel],
                "judgements": len(result.judgements),
                "cached": served,
            }
        )
        return
    if written:
        typer.echo(f"wrote {ds.id} to {out}: {len(ds.events)} events, {len(ds.steps)} steps")
    for stage in result.funnel:
        line = f"  {stage.stage:<28} -{stage.removed:<5} {stage.remaining:>5}  {stage.note}"
        typer.echo(line.rstrip())
    where = f"; recorded in {out / 'curation'}" if written else ""
    typer.echo(
        f"judgements: {len(result.judgements)} ({served} from the cache {cache_dir}, "
        f"{len(result.judgements) - served} new){where}"
    )
