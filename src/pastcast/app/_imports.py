"""Importing resolved markets into a dataset directory: ForecastBench (a folder or a download)
and Polymarket (its public APIs), as their records declare (schedule, filters, split, news
volume), checked before anything is read or fetched; the dataset's provenance records the
record."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pastcast.app._fields import as_field
from pastcast.app._open import open_corpus
from pastcast.app._plans import ForecastBenchImport, MarketImport, PolymarketImport
from pastcast.dataset import Dataset
from pastcast.errors import FieldError, within
from pastcast.owned import check_replaceable

if TYPE_CHECKING:
    from pastcast.markets import DatasetBuildReport, Schedule, TemporalSplit

__all__ = ["Imported", "filter_values", "import_forecastbench", "import_polymarket"]


@dataclass(frozen=True)
class Imported:
    """The dataset written to ``out`` and the funnel of what each stage removed."""

    dataset: Dataset
    report: DatasetBuildReport
    out: Path
    notes: dict[str, int]
    """What the importer dropped or assumed, counted by reason (also in the provenance)."""


def filter_values(file: str | Path | None = None, items: Sequence[str] = ()) -> dict[str, Any]:
    """The market-filter values of ``file`` (TOML or JSON), then each ``NAME=VALUE`` of
    ``items`` (an import's ``filters``), each checked; ``FieldError`` (field ``filters``) naming
    the file or ``--filter`` otherwise."""
    from pastcast.markets import filter_config, parse_filter_assignments, read_filter_file

    with as_field("filters"):
        values = read_filter_file(Path(file)) if file is not None else {}
        filter_config(values, where=str(file))
        given = parse_filter_assignments(list(items))
        filter_config(given, where="--filter")
    return {**values, **given}


def _shared(plan: MarketImport, first_belief: bool) -> tuple[Schedule, TemporalSplit | None]:
    """The options every import shares, checked before anything is read or fetched."""
    from pastcast.markets import TemporalSplit, make_schedule

    try:  # only a dataset pastcast wrote is ever replaced (pastcast.owned)
        check_replaceable(Path(plan.out), "dataset")
    except FileExistsError as exc:
        raise FieldError("out", str(exc)) from None
    with as_field("schedule"):
        sched = make_schedule(
            plan.schedule,
            corpus_end=plan.corpus_end,
            start_at_first_belief=first_belief,
            convention=plan.day_convention,
        )
    with as_field("split"):
        parsed = TemporalSplit.parse(plan.split) if plan.split is not None else None
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


def import_forecastbench(plan: ForecastBenchImport) -> Imported:
    """ForecastBench's resolved binary questions with their daily series, from a folder or a
    base URL (its files downloaded into the plan's ``cache``), into the dataset directory
    ``out``, as ``plan`` declares (``ForecastBenchImport``)."""
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

    target, path_or_url, files, cache = Path(plan.out), plan.path_or_url, plan.files, plan.cache
    sched, parsed = _shared(plan, True)
    history = Path(plan.history_repo) if plan.history_repo is not None else None
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
        news = _news_counts(plan.news_corpus, list(result.histories))  # names news_corpus
        with within("source"):
            ds, report = build_and_save(
                result.histories,
                target,
                name="forecastbench",
                schedule=sched,
                filters=plan.filter_config(),
                split=parsed,
                sources=list(plan.sources) or None,
                news_counts=news,
                hints={"pre-resolution beliefs": HISTORY_REPO_HINT} if not daily else None,
                daily_history=daily,
                collected_at=None
                if plan.keep_late_closes
                else collected_at(root, result.histories),
                texts=read_text_versions(root),
                drop_sibling_answers=plan.drop_sibling_answers,
                provenance={
                    "source": "forecastbench",
                    "plan": plan.model_dump(mode="json"),
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


def import_polymarket(plan: PolymarketImport) -> Imported:
    """Resolved Polymarket events (binary and neg-risk multi-option) with price history and,
    with ``trades``, daily trading activity, into the dataset directory ``out``, as ``plan``
    declares (``PolymarketImport``). Descriptions are as the API gives them now, after the
    resolution: each step is shown its description without the dated edits made after its
    cutoff, and a step whose description has an undated edit is dropped
    (``markets.build_dataset``)."""
    from pastcast.markets import build_and_save
    from pastcast.markets.sources import PolymarketClient, fetch_histories

    target, trades = Path(plan.out), plan.trades
    sched, parsed = _shared(plan, False)
    collected = datetime.now(UTC)
    tokens: dict[str, dict[str, str]] = {}
    try:
        with (
            within("source"),
            PolymarketClient(plan.base_url, plan.clob_url, plan.data_url) as client,
        ):
            histories, notes = fetch_histories(
                client,
                page_size=plan.page_size,
                max_events=plan.max_events,
                trades=trades,
                tokens=tokens,
            )
        news = _news_counts(plan.news_corpus, list(histories))  # names news_corpus
        with within("source"):
            ds, report = build_and_save(
                histories,
                target,
                name="polymarket",
                schedule=sched,
                filters=plan.filter_config(),
                split=parsed,
                news_counts=news,
                collected_at=None if plan.keep_late_closes else collected,
                drop_sibling_answers=plan.drop_sibling_answers,
                provenance={
                    "source": "polymarket",
                    "plan": plan.model_dump(mode="json"),
                    "gamma": plan.base_url,
                    "clob": plan.clob_url,
                    "data": plan.data_url if trades else None,
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
