"""Importing resolved markets into a dataset directory: ForecastBench (a folder or a download)
and Polymarket (its public APIs), with the schedule, filters, split and news volume the user
names, checked before anything is read or fetched."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pastcast.app._open_corpus import open_corpus
from pastcast.cutoff import DayConvention
from pastcast.dataset import Dataset
from pastcast.errors import FieldError, within
from pastcast.markets import FilterConfig
from pastcast.owned import check_replaceable

if TYPE_CHECKING:
    from pastcast.markets import DatasetBuildReport, Schedule, TemporalSplit

__all__ = [
    "Imported",
    "import_forecastbench",
    "import_polymarket",
    "market_filters",
]


@dataclass(frozen=True)
class Imported:
    """The dataset written to ``out`` and the funnel of what each stage removed."""

    dataset: Dataset
    report: DatasetBuildReport
    out: Path
    notes: dict[str, int]
    """What the importer dropped or assumed, counted by reason (also in the provenance)."""


def market_filters(
    file: str | Path | None = None, items: Sequence[str] = (), base: FilterConfig | None = None
) -> FilterConfig:
    """The market filters: ``base`` (the defaults), then the values of ``file`` (TOML or JSON),
    then each ``NAME=VALUE`` of ``items``."""
    from pastcast.markets import filter_config, parse_filter_assignments, read_filter_file

    try:
        cfg = base or FilterConfig()
        if file is not None:
            cfg = filter_config(read_filter_file(Path(file)), where=str(file), base=cfg)
        return filter_config(parse_filter_assignments(list(items)), where="--filter", base=cfg)
    except ValueError as exc:
        raise FieldError("filters", str(exc)) from None


def _shared(
    out: Path,
    schedule: str,
    split: str | None,
    corpus_end: str | date | None,
    first_belief: bool,
    convention: DayConvention,
) -> tuple[Schedule, TemporalSplit | None]:
    """The options every import shares, checked before anything is read or fetched."""
    from pastcast.markets import TemporalSplit, make_schedule

    try:  # only a dataset pastcast wrote is ever replaced (pastcast.owned)
        check_replaceable(out, "dataset")
    except FileExistsError as exc:
        raise FieldError("out", str(exc)) from None
    try:
        end = date.fromisoformat(corpus_end) if isinstance(corpus_end, str) else corpus_end
    except ValueError:
        raise FieldError("corpus_end", f"not a date (YYYY-MM-DD): {corpus_end!r}") from None
    try:
        sched = make_schedule(
            schedule, corpus_end=end, start_at_first_belief=first_belief, convention=convention
        )
    except ValueError as exc:
        raise FieldError("schedule", str(exc)) from None
    try:
        parsed = TemporalSplit.parse(split) if split is not None else None
    except ValueError as exc:
        raise FieldError("split", str(exc)) from None
    return sched, parsed


def _news_counts(spec: str | Path | None, histories: Sequence[Any]) -> dict[date, int] | None:
    if spec is None or not histories:
        return None
    from pastcast.markets import daily_news_counts

    first = min(h.event.open_time.date() for h in histories)
    last = max(h.event.close_time.date() for h in histories)
    backend = open_corpus(spec, "bm25", field="news_corpus")
    try:
        return daily_news_counts(backend, first, last)
    finally:
        backend.close()


def import_forecastbench(
    path_or_url: str,
    out: str | Path,
    *,
    schedule: str = "causal-dojo",
    sources: Sequence[str] = (),
    split: str | None = None,
    corpus_end: str | date | None = None,
    files: Sequence[str] = (),
    cache: str | Path | None = None,
    news_corpus: str | Path | None = None,
    history_repo: str | Path | None = None,
    filters: FilterConfig | None = None,
    convention: DayConvention = DayConvention.START_OF_DAY,
    keep_late_closes: bool = False,
    drop_sibling_answers: bool = False,
) -> Imported:
    """ForecastBench's resolved binary questions with their daily series, from a folder or a
    base URL (its files downloaded into ``cache``, with ``files`` besides), into the dataset
    directory ``out``. ``history_repo``: a local clone of the datasets repository, whose nightly
    versions give daily series; ``news_corpus``: the corpus whose documents per day feed the
    dojo schedule's news term; ``keep_late_closes`` keeps markets scheduled to close after the
    data was collected; ``drop_sibling_answers`` drops the steps whose text names the answer of
    another imported event still open at their cutoff."""
    from pastcast.errors import FieldError
    from pastcast.markets import build_and_save
    from pastcast.markets.sources import (
        FORECASTBENCH_FILES,
        HISTORY_REPO_HINT,
        DownloadError,
        collected_at,
        download_files,
        read_forecastbench,
        read_text_versions,
    )

    target = Path(out)
    sched, parsed = _shared(target, schedule, split, corpus_end, True, convention)
    cfg = filters or FilterConfig()
    history = Path(history_repo) if history_repo is not None else None
    if history is not None and not history.is_dir():
        raise FieldError("history_repo", f"{history}: no such folder")
    remote = path_or_url.startswith(("http://", "https://"))
    if not remote and (files or cache is not None):  # they act on a download only
        raise FieldError("files" if files else "cache", "only with a URL to download from")
    if not remote and not Path(path_or_url).is_dir():
        raise FieldError("source", f"{path_or_url}: no such folder")
    tmp: tempfile.TemporaryDirectory[str] | None = None
    try:
        with within("source"):
            if remote:
                if cache is None:
                    tmp = tempfile.TemporaryDirectory(prefix="pastcast-fb-")
                root = Path(cache) if cache is not None else Path(tmp.name if tmp else ".")
                download_files(path_or_url, root, [*FORECASTBENCH_FILES, *files])
            else:
                root = Path(path_or_url)
            result = read_forecastbench(root, history=history)
        daily = result.layout != "published" or history is not None
        news = _news_counts(news_corpus, list(result.histories))  # names news_corpus
        with within("source"):
            ds, report = build_and_save(
                result.histories,
                target,
                name="forecastbench",
                schedule=sched,
                filters=cfg,
                split=parsed,
                sources=list(sources) or None,
                news_counts=news,
                hints={"pre-resolution beliefs": HISTORY_REPO_HINT} if not daily else None,
                daily_history=daily,
                collected_at=None if keep_late_closes else collected_at(root, result.histories),
                texts=read_text_versions(root),
                drop_sibling_answers=drop_sibling_answers,
                provenance={
                    "source": "forecastbench",
                    "input": path_or_url,
                    "import_notes": dict(result.skipped),
                    "history": {"repo": str(history), **result.history} if history else {},
                    "license": "CC BY-SA 4.0, Forecasting Research Institute",
                },
            )
    except FieldError:  # the source's, or the news corpus's
        raise
    except (DownloadError, OSError, ValueError) as exc:  # no event kept, an unknown source
        raise FieldError("source", str(exc)) from None
    finally:
        if tmp is not None:
            tmp.cleanup()
    return Imported(ds, report, target, dict(result.skipped))


def import_polymarket(
    out: str | Path,
    *,
    base_url: str = "https://gamma-api.polymarket.com",
    clob_url: str = "https://clob.polymarket.com",
    data_url: str = "https://data-api.polymarket.com",
    trades: bool = True,
    schedule: str = "causal-dojo",
    split: str | None = None,
    corpus_end: str | date | None = None,
    page_size: int = 100,
    max_events: int | None = None,
    news_corpus: str | Path | None = None,
    filters: FilterConfig | None = None,
    convention: DayConvention = DayConvention.START_OF_DAY,
    keep_late_closes: bool = False,
    drop_sibling_answers: bool = False,
) -> Imported:
    """Resolved Polymarket events (binary and neg-risk multi-option) with price history and,
    with ``trades``, daily trading activity, into the dataset directory ``out``. Descriptions
    are as the API gives them now, after the resolution: each step is shown its description
    without the dated edits made after its cutoff, and a step whose description has an undated
    edit is dropped (``markets.build_dataset``). ``drop_sibling_answers`` as for ForecastBench."""
    from pastcast.markets import build_and_save
    from pastcast.markets.sources import PolymarketClient, fetch_histories

    target = Path(out)
    sched, parsed = _shared(target, schedule, split, corpus_end, False, convention)
    collected = datetime.now(UTC)
    tokens: dict[str, dict[str, str]] = {}
    try:
        with within("source"), PolymarketClient(base_url, clob_url, data_url) as client:
            histories, notes = fetch_histories(
                client, page_size=page_size, max_events=max_events, trades=trades, tokens=tokens
            )
        news = _news_counts(news_corpus, list(histories))  # names news_corpus
        with within("source"):
            ds, report = build_and_save(
                histories,
                target,
                name="polymarket",
                schedule=sched,
                filters=filters or FilterConfig(),
                split=parsed,
                news_counts=news,
                collected_at=None if keep_late_closes else collected,
                drop_sibling_answers=drop_sibling_answers,
                provenance={
                    "source": "polymarket",
                    "gamma": base_url,
                    "clob": clob_url,
                    "data": data_url if trades else None,
                    "import_notes": notes,
                    # the CLOB ids of the binary markets: what an arena replay reads deadline
                    # prices and volumes by
                    "clob_tokens": dict(sorted(tokens.items())),
                },
            )
    except FieldError:  # the source's, or the news corpus's
        raise
    except ValueError as exc:  # no event kept
        raise FieldError("source", str(exc)) from None
    return Imported(ds, report, target, dict(notes))
