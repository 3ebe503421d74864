"""`pastcast data ...` commands: import real market data into datasets (`data info` and
`data show`, which describe them, live in ``_data_view``)."""

from __future__ import annotations

import tempfile
from dataclasses import asdict, fields
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from pastcast.cli import _curate, _data_view
from pastcast.cli._common import JsonFlag, fail, print_json
from pastcast.cutoff import DayConvention
from pastcast.markets import FilterConfig, schedules
from pastcast.owned import check_replaceable

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
        help="One market-filter value, e.g. min_lifetime_days=14 (repeatable; applied over "
        "--filters).",
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


def _news_counts(spec: str | None, histories: list[Any]) -> dict[date, int] | None:
    if spec is None or not histories:
        return None
    from pastcast.cli._corpus import open_corpus
    from pastcast.markets import daily_news_counts

    first = min(h.event.open_time.date() for h in histories)
    last = max(h.event.close_time.date() for h in histories)
    backend = open_corpus(spec, "bm25", "--news-corpus")
    try:
        return daily_news_counts(backend, first, last)
    finally:
        backend.close()


def _common(
    out: Path,
    schedule: str,
    split: str | None,
    corpus_end: str | None,
    first_belief: bool,
    convention: DayConvention = DayConvention.START_OF_DAY,
) -> Any:
    """The options every import shares, checked before anything is read or fetched."""
    from pastcast.markets import TemporalSplit, make_schedule

    try:  # only a dataset pastcast wrote is ever replaced (pastcast.owned)
        check_replaceable(out, "dataset")
    except FileExistsError as exc:
        fail(f"--out: {exc}")
    try:
        end = date.fromisoformat(corpus_end) if corpus_end is not None else None
    except ValueError:
        fail(f"--corpus-end: not a date (YYYY-MM-DD): {corpus_end!r}")
    try:
        sched = make_schedule(
            schedule, corpus_end=end, start_at_first_belief=first_belief, convention=convention
        )
    except ValueError as exc:
        fail(f"--schedule: {exc}")
    try:
        parsed = TemporalSplit.parse(split) if split is not None else None
    except ValueError as exc:
        fail(f"--split: {exc}")
    return sched, parsed


def _filters(file: Path | None, items: list[str] | None) -> FilterConfig:
    """The defaults, then the values of ``--filters FILE``, then each ``--filter NAME=VALUE``."""
    from pastcast.markets import filter_config, parse_filter_assignments, read_filter_file

    try:
        cfg = FilterConfig()
        if file is not None:
            cfg = filter_config(read_filter_file(file), where=str(file))
        return filter_config(parse_filter_assignments(items or []), where="--filter", base=cfg)
    except ValueError as exc:
        fail(str(exc))


def _report(ds: Any, report: Any, out: Path, as_json: bool, notes: dict[str, int]) -> None:
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
    for stage in report.funnel:
        if stage.hint:
            typer.echo(f"hint ({stage.stage}): {stage.hint}")


@import_app.command("forecastbench")
def import_forecastbench(
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
    as_json: JsonFlag = False,
) -> None:
    """Import ForecastBench's resolved binary market questions with their daily series."""
    from pastcast.markets import (
        FORECASTBENCH_FILES,
        HISTORY_REPO_HINT,
        DownloadError,
        ForecastBenchError,
        build_and_save,
        collected_at,
        download_files,
        read_forecastbench,
        read_text_versions,
    )

    sched, parsed = _common(out, schedule, split, corpus_end, True, day_convention)
    cfg = _filters(filters_file, filter_values)
    if history_repo is not None and not history_repo.is_dir():
        fail(f"--history-repo {history_repo}: no such folder")
    tmp: tempfile.TemporaryDirectory[str] | None = None
    try:
        if path_or_url.startswith(("http://", "https://")):
            if cache is None:
                tmp = tempfile.TemporaryDirectory(prefix="pastcast-fb-")
            root = cache or Path(tmp.name if tmp else ".")
            download_files(path_or_url, root, [*FORECASTBENCH_FILES, *(file or [])])
        else:
            if file or cache is not None:  # they act on a download only: never ignored
                fail(f"--{'file' if file else 'cache'}: only with a URL to download from")
            root = Path(path_or_url)
            if not root.is_dir():
                fail(f"{root}: no such folder")
        if history_repo is not None:
            typer.echo(
                f"reading the nightly history of {history_repo} (minutes for the full upstream "
                "history)",
                err=True,
            )
        result = read_forecastbench(root, history=history_repo)
        ds, report = build_and_save(
            result.histories,
            out,
            name="forecastbench",
            schedule=sched,
            filters=cfg,
            split=parsed,
            sources=source or None,
            news_counts=_news_counts(news_corpus, list(result.histories)),
            hints={"price history": HISTORY_REPO_HINT}
            if result.layout == "published" and history_repo is None
            else None,
            collected_at=None if keep_late_closes else collected_at(root, result.histories),
            texts=read_text_versions(root),
            provenance={
                "source": "forecastbench",
                "input": path_or_url,
                "import_notes": dict(result.skipped),
                "history": {"repo": str(history_repo), **result.history} if history_repo else {},
                "license": "CC BY-SA 4.0, Forecasting Research Institute",
            },
        )
    except (ForecastBenchError, DownloadError, OSError) as exc:
        fail(str(exc))
    except ValueError as exc:  # an unknown --source, or no event kept
        fail(str(exc))
    finally:
        if tmp is not None:
            tmp.cleanup()
    _report(ds, report, out, as_json, dict(result.skipped))


@import_app.command("polymarket")
def import_polymarket(
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
    as_json: JsonFlag = False,
) -> None:
    """Import resolved Polymarket events (binary and neg-risk multi-option) with price history
    and daily trading activity."""
    from pastcast.markets import PolymarketClient, PolymarketError, build_and_save, fetch_histories

    sched, parsed = _common(out, schedule, split, corpus_end, False, day_convention)
    cfg = _filters(filters_file, filter_values)
    collected_at = datetime.now(UTC)
    try:
        with PolymarketClient(base_url, clob_url, data_url) as client:
            histories, notes = fetch_histories(
                client, page_size=limit, max_events=max_events, trades=trades
            )
        ds, report = build_and_save(
            histories,
            out,
            name="polymarket",
            schedule=sched,
            filters=cfg,
            split=parsed,
            news_counts=_news_counts(news_corpus, list(histories)),
            collected_at=None if keep_late_closes else collected_at,
            provenance={
                "source": "polymarket",
                "gamma": base_url,
                "clob": clob_url,
                "data": data_url if trades else None,
                "import_notes": notes,
            },
        )
    except PolymarketError as exc:
        fail(str(exc))
    except ValueError as exc:  # no event kept
        fail(str(exc))
    _report(ds, report, out, as_json, notes)


app.command("info")(_data_view.info)
app.command("show")(_data_view.show)
app.command("curate")(_curate.curate)
