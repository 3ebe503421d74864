"""`pastcast data ...` commands: import real market data into datasets, and describe them."""

from __future__ import annotations

import tempfile
from dataclasses import asdict
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from pastcast.cli._common import JsonFlag, fail, print_json
from pastcast.markets import schedules
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
    out: Path, schedule: str, split: str | None, corpus_end: str | None, first_belief: bool
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
        sched = make_schedule(schedule, corpus_end=end, start_at_first_belief=first_belief)
    except ValueError as exc:
        fail(f"--schedule: {exc}")
    try:
        parsed = TemporalSplit.parse(split) if split is not None else None
    except ValueError as exc:
        fail(f"--split: {exc}")
    return sched, parsed


def _report(ds: Any, report: Any, out: Path, as_json: bool) -> None:
    if as_json:
        print_json(
            {
                "dataset_id": ds.id,
                "out": str(out),
                "events": len(ds.events),
                "steps": len(ds.steps),
                "funnel": [asdict(stage) for stage in report.funnel],
            }
        )
        return
    typer.echo(f"wrote {ds.id} to {out}: {len(ds.events)} events, {len(ds.steps)} steps")
    for stage in report.funnel:
        typer.echo(f"  {stage.stage:<40} -{stage.removed:<6} {stage.remaining:>6}  {stage.note}")


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
    as_json: JsonFlag = False,
) -> None:
    """Import ForecastBench's resolved binary market questions with their daily series."""
    from pastcast.markets import (
        FORECASTBENCH_FILES,
        DownloadError,
        ForecastBenchError,
        build_and_save,
        collected_at,
        download_files,
        read_forecastbench,
        read_text_versions,
    )

    sched, parsed = _common(out, schedule, split, corpus_end, first_belief=True)
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
        result = read_forecastbench(root)
        ds, report = build_and_save(
            result.histories,
            out,
            name="forecastbench",
            schedule=sched,
            split=parsed,
            sources=source or None,
            news_counts=_news_counts(news_corpus, list(result.histories)),
            collected_at=collected_at(root),
            texts=read_text_versions(root),
            provenance={
                "source": "forecastbench",
                "input": path_or_url,
                "import_notes": dict(result.skipped),
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
    _report(ds, report, out, as_json)


@import_app.command("polymarket")
def import_polymarket(
    out: OutOpt,
    base_url: Annotated[str, typer.Option("--base-url", help="Gamma API base URL.")] = (
        "https://gamma-api.polymarket.com"
    ),
    clob_url: Annotated[str, typer.Option("--clob-url", help="CLOB API base URL.")] = (
        "https://clob.polymarket.com"
    ),
    schedule: ScheduleOpt = "causal-dojo",
    split: SplitOpt = None,
    corpus_end: CorpusEndOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Events per page.")] = 100,
    max_events: Annotated[
        int | None, typer.Option("--max-events", min=1, help="Stop after this many events.")
    ] = None,
    news_corpus: NewsOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Import resolved Polymarket events (binary and neg-risk multi-option) with price history."""
    from pastcast.markets import PolymarketClient, PolymarketError, build_and_save, fetch_histories

    sched, parsed = _common(out, schedule, split, corpus_end, first_belief=False)
    collected_at = datetime.now(UTC)
    try:
        with PolymarketClient(base_url, clob_url) as client:
            histories, notes = fetch_histories(client, page_size=limit, max_events=max_events)
        ds, report = build_and_save(
            histories,
            out,
            name="polymarket",
            schedule=sched,
            split=parsed,
            news_counts=_news_counts(news_corpus, list(histories)),
            collected_at=collected_at,
            provenance={
                "source": "polymarket",
                "gamma": base_url,
                "clob": clob_url,
                "import_notes": notes,
            },
        )
    except PolymarketError as exc:
        fail(str(exc))
    except ValueError as exc:  # no event kept
        fail(str(exc))
    _report(ds, report, out, as_json)


@app.command("info")
def info(
    directory: Annotated[Path, typer.Argument(help="Dataset directory.")],
    as_json: JsonFlag = False,
) -> None:
    """Counts by source, label, split and schedule, and the filtering funnel."""
    from pastcast.dataset import DatasetFormatError
    from pastcast.markets import dataset_info

    try:
        summary = dataset_info(directory)
    except DatasetFormatError as exc:
        fail(str(exc))
    if as_json:
        print_json(summary)
        return
    for key in ("dataset_id", "events", "by_source", "by_label", "by_split", "beliefs", "steps"):
        typer.echo(f"{key}: {summary[key]}")
    for stage in summary["funnel"]:
        typer.echo(f"  {stage['stage']:<40} -{stage['removed']:<6} {stage['remaining']:>6}")
