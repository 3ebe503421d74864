"""Datasets as the user makes and reads them, each named by its spec and checked before anything
is read or fetched: importing resolved markets (ForecastBench, a folder or a download;
Polymarket, its public APIs) as their records declare, the provenance recording the record;
describing what a dataset holds (``pastcast data info`` and ``data show``: counts, the import
funnel, the corpus coverage of its steps, one of its questions); and curating one (a judge by
its model spec, the curated dataset written with its funnel and every judgement cached)."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pastcast.app._audits import cached_model
from pastcast.app._fields import as_field
from pastcast.app._open import open_corpus, open_dataset
from pastcast.app._plans import (
    CURATION_LEGS,
    CurationPlan,
    ForecastBenchImport,
    MarketImport,
    PolymarketImport,
)
from pastcast.corpus import OpenedCorpus
from pastcast.cutoff import DayConvention
from pastcast.dataset import Dataset
from pastcast.errors import FieldError, within
from pastcast.owned import check_replaceable

if TYPE_CHECKING:
    from pastcast.audit import LeakageCard
    from pastcast.curate import CurationResult
    from pastcast.markets import CoverageReport, DatasetBuildReport, Schedule, TemporalSplit


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


@dataclass(frozen=True)
class DatasetSummary:
    """``dataset_info``'s counts and funnel (with ``coverage`` as JSON when asked for), and the
    coverage report itself."""

    summary: dict[str, Any]
    coverage: CoverageReport | None = None
    leakage: LeakageCard | None = None


def dataset_leakage_card(dataset: Dataset, corpus: str | Path | None = None) -> LeakageCard:
    """The leakage card of ``dataset`` (``pastcast.audit.leakage_card``): with the dating of
    ``corpus`` when given, and the events each model of known knowledge cutoff may remember."""
    from pastcast.audit import leakage_card
    from pastcast.models import knowledge_cutoffs

    identity = None
    if corpus is not None:
        backend = open_corpus(corpus, "bm25")
        try:
            identity = backend.identity()
        finally:
            backend.close()
    return leakage_card(dataset, corpus=identity, models=knowledge_cutoffs.names())


def describe_dataset(
    directory: str | Path,
    *,
    corpus: str | Path | None = None,
    coverage_days: int = 7,
    leakage: bool = True,
) -> DatasetSummary:
    """Counts by source, label, split and schedule, the filtering funnel of the dataset
    directory ``directory``, with ``corpus`` the coverage of its steps per split, and with
    ``leakage`` its leakage card (``leakage_card`` in the summary)."""
    from pastcast.dataset import load_dataset
    from pastcast.markets import dataset_info, step_coverage

    with within("dataset"):
        summary = dataset_info(directory)
    report = card = None
    if corpus is not None or leakage:
        ds = load_dataset(directory)
        if corpus is not None:  # a step is covered by a document of the days before its cutoff
            backend = open_corpus(corpus, "bm25")
            try:
                report = step_coverage(ds, backend, window_days=coverage_days)
            finally:
                backend.close()
            summary = {**summary, "coverage": report.as_json()}
        if leakage:
            card = dataset_leakage_card(ds, corpus)
            summary = {**summary, "leakage_card": card.model_dump(mode="json")}
    return DatasetSummary(summary, report, card)


def _find(ds: Dataset, event: str) -> str:
    """The event id ``event`` names: exactly, or as the unique prefix of one id."""
    if any(e.id == event for e in ds.events):
        return event
    matches = [e.id for e in ds.events if e.id.startswith(event)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise FieldError(
            "event",
            f"{event!r}: the prefix of {len(matches)} events ({', '.join(matches[:3])}, ...)",
        )
    sample = ", ".join(e.id for e in ds.events[:3])
    raise FieldError(
        "event", f"{event!r}: no such event in {ds.id} ({len(ds.events)} events, e.g. {sample})"
    )


def dataset_question(
    event: str,
    dataset: str | Path | Dataset = "world",
    *,
    outcome: bool = False,
    convention: DayConvention = DayConvention.START_OF_DAY,
) -> dict[str, Any]:
    """One question as ``dataset`` holds it (``event``: its id or the unique prefix of one):
    the event, its split, forecast steps and market-price days; the resolution only with
    ``outcome``."""
    ds = open_dataset(dataset, convention=convention)
    event_id = _find(ds, event)
    ev = ds.event(event_id)
    beliefs = ds.beliefs.get(event_id, ())
    out: dict[str, Any] = {
        "dataset_id": ds.id,
        "event": ev.model_dump(mode="json"),
        "split": ds.splits.get(event_id),
        "steps": [s.cutoff.isoformat() for s in ds.steps_of(event_id)],
        "beliefs": {
            "days": len(beliefs),
            "first": beliefs[0].day.isoformat() if beliefs else None,
            "last": beliefs[-1].day.isoformat() if beliefs else None,
        },
    }
    if outcome:
        res = ds.resolutions[event_id]
        out["resolution"] = {"label": res.label, "resolved_at": res.resolved_at.isoformat()}
    return out


@dataclass(frozen=True)
class Curated:
    """The curation, where it was written (None when no event was left: nothing is written)
    and the judgement cache."""

    result: CurationResult
    out: Path | None
    cache: Path

    @property
    def cached(self) -> int:
        """Judgements answered from the cache."""
        return sum(j.cached for j in self.result.judgements)


def _check_output(path: Path, field: str, kind: str | None) -> None:
    """Refuse, before any work, a folder that cannot be written: one pastcast did not make (a
    dataset is replaced only when pastcast wrote it), a file, a name the file system refuses."""
    if kind is not None:
        with as_field(field, FileExistsError):
            check_replaceable(path, kind)
    elif path.exists() and not path.is_dir():
        raise FieldError(field, f"{path}: exists and is not a directory")
    if path.exists():
        return
    try:  # made and removed again: the real one is written at the end
        path.mkdir(parents=True)
        path.rmdir()
    except OSError as exc:
        raise FieldError(field, f"{path}: cannot be created ({exc.strerror or exc})") from None


def _metadata(spec: str | Path) -> dict[str, Any]:
    """The source dataset's metadata (its import funnel, provenance), carried over."""
    from pastcast.world import is_world_spec

    if is_world_spec(str(spec)):
        return {"name": "world", "provenance": {"source": str(spec)}}
    from pastcast.dataset import read_metadata

    try:
        return read_metadata(spec)
    except ValueError:
        return {}


def curate_dataset(plan: CurationPlan) -> Curated:
    """Curate as ``plan`` says: its dataset against its archive with its judge, the curated
    dataset written to its ``out`` unless no event is left, the plan recorded with it.
    Judgements are cached (default: ``OUT.judge-cache`` beside ``out``), so re-curating makes
    no new model calls. ``FieldError`` naming the field before any work."""
    from pastcast.curate import Judge, Retriever, curate_dataset, save_curation
    from pastcast.models import check_model_spec

    judge, dataset, corpus, embedder = plan.judge, plan.dataset, plan.corpus, plan.embedder
    with as_field("judge"):  # before the dataset and the corpus are read (minutes, at scale)
        check_model_spec(judge)
    legs = [leg.strip() for leg in plan.retrieval if leg.strip()]
    bad = [leg for leg in legs if leg not in CURATION_LEGS]
    if not legs or bad or len(set(legs)) != len(legs):
        raise FieldError(
            "retrieval",
            f"expected a comma-separated list of {', '.join(CURATION_LEGS)}, "
            f"got {','.join(plan.retrieval)!r}",
        )
    if embedder is not None and "dense" not in legs:
        raise FieldError("embedder", "only with a dense leg in the retrieval")
    target = Path(plan.out)
    if Path(dataset).resolve() == target.resolve():
        raise FieldError(
            "out", f"{target}: is the dataset being curated; write the curated one elsewhere"
        )
    _check_output(target, "out", "dataset")
    cache = plan.cache
    cache_dir = Path(cache) if cache is not None else target.with_name(target.name + ".judge-cache")
    _check_output(cache_dir, "cache", None)
    data = open_dataset(dataset)
    opened: list[OpenedCorpus] = []
    try:
        for leg in legs:
            options = {"embedder": embedder} if leg == "dense" and embedder else {}
            opened.append(open_corpus(corpus, leg, **options))
        with cached_model(judge, cache_dir) as cached:
            retriever = Retriever(opened, window_days=plan.window_days or None)
            judging = Judge(cached, max_tokens=plan.max_tokens)
            result = curate_dataset(data, retriever, judging, plan.config)
            settings = {
                "source_dataset": data.id,
                "corpus": opened[0].identity().model_dump(mode="json"),
                "plan": plan.model_dump(mode="json"),
            }
            written = None
            if result.dataset.events:  # an empty dataset is never written as if it were a result
                save_curation(result, target, metadata=_metadata(dataset), settings=settings)
                written = target
    finally:
        for backend in opened:
            backend.close()
    return Curated(result, written, cache_dir)
