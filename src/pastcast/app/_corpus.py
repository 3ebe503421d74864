"""The corpus a string names, and building one: source -> allow-list -> quality filters ->
store, into any store backend (an index directory, with dense embeddings or without, or a
PostgreSQL database)."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from pastcast import __version__
from pastcast.app._corpus_plan import MAX_BUILD_WORKERS, CorpusBuildPlan, StoreBackend
from pastcast.app._fields import as_field
from pastcast.app._open import open_corpus
from pastcast.corpus import (
    CorpusBuildReport,
    is_database_url,
    one_line,
)
from pastcast.corpus.dense import Embedder, resolve_embedder
from pastcast.corpus.embedded import EmbeddedIndex, MonthRunner, ReadStamp
from pastcast.corpus.postgres import PostgresBackend
from pastcast.corpus.sources import (
    DatingRule,
    SideFile,
    SourceRun,
    allow_sources,
    open_source,
    read_allow_list,
    sources,
    with_dating,
)
from pastcast.errors import FieldError, within
from pastcast.owned import check_replaceable, made_kind
from pastcast.records import Document
from pastcast.retrying import redact_url
from pastcast.validation import field_path, first_error

DEFAULT_SCHEMA = "pastcast"


def corpus_documents(spec: str, field: str = "corpus") -> Iterator[Document]:
    """The documents of an index directory, or of a KIND:PATH source read as ``build_corpus``
    reads it (content screen included, so the ids match the index built from it)."""
    path = Path(spec)
    if path.is_dir():
        try:
            index = EmbeddedIndex.open(path)
        except (OSError, ValueError) as exc:
            raise FieldError(field, f"{spec!r}: not a readable index directory ({exc})") from None
        return (index.read_ordinal(i) for i in range(len(index)))
    kind, sep, rest = spec.partition(":")
    if not sep or kind not in sources:
        raise FieldError(field, f"{spec!r}: not an index directory nor KIND:PATH of a known source")
    try:
        return open_source(kind, rest).documents
    except ValueError as exc:
        raise FieldError(field, f"{spec!r}: {exc}") from None


@dataclass(frozen=True)
class CorpusBuild:
    """What a build stored: how many documents, where (no password), what was skipped as
    malformed (by reason), the report lines of each stage (screens, filters, side files) and,
    for an index directory, the report stored in it (partitions, reused ones, time, memory)."""

    indexed: int
    into: str
    skipped: dict[str, int] = field(default_factory=dict)
    report: tuple[str, ...] = ()
    build: CorpusBuildReport | None = None
    plan: CorpusBuildPlan | None = None
    """The record of the build (an append has none)."""

    def as_dict(self, count: str = "indexed") -> dict[str, Any]:
        """The JSON shape of a build (``count``: the name of the documents' count, ``appended``
        for an append)."""
        return {
            count: self.indexed,
            "into": self.into,
            "skipped": self.skipped,
            "report": list(self.report),
            "build": None if self.build is None else self.build.model_dump(mode="json"),
            **({} if self.plan is None else {"plan": self.plan.model_dump(mode="json")}),
        }

    def lines(self) -> tuple[str, ...]:
        """The stored build report's lines, then the stages' (screens, filters, side files)."""
        return self.report if self.build is None else (*self.build.lines(), *self.report)


def _check_target(
    backend: StoreBackend, out: Path | None, url: str | None, overwrite: bool
) -> None:
    if backend == "embedded":
        if url is not None:
            raise FieldError("url", "only with the postgres backend")
        if out is None:
            raise FieldError("out", "required with the embedded backend")
        if out.exists() or out.is_symlink():
            try:  # only an index pastcast built is ever replaced (pastcast.owned)
                check_replaceable(out, "index")
            except FileExistsError as exc:
                raise FieldError("out", str(exc)) from None
            if not overwrite and any(out.iterdir()):
                raise FieldError(
                    "overwrite", f"{out} already exists; it is replaced only when asked"
                )
    else:  # postgres
        if url is None or not is_database_url(url):
            raise FieldError(
                "url", "required with the postgres backend (postgresql://USER@HOST:PORT/DB)"
            )
        if out is not None:
            raise FieldError("out", "only with the embedded backend")


def _nonempty(run: SourceRun, source: str) -> Iterator[Document]:
    """The source's documents; a source without any is an error before anything is built (an
    empty index is no result)."""
    docs = iter(run.documents)
    try:
        first = next(docs)
    except StopIteration:
        skipped = sum(run.skipped().values())
        why = f"; {skipped} malformed lines skipped" if skipped else ""
        raise FieldError("source", f"{source!r}: no documents to index{why}") from None
    except (ValueError, FileNotFoundError) as exc:
        raise FieldError("documents", str(exc)) from None
    return itertools.chain([first], docs)


def _store(
    docs: Iterator[Document],
    plan: CorpusBuildPlan,
    out: Path | None,
    embedder: Embedder | None,
    run: SourceRun,
    read: ReadStamp | None,
    runner: MonthRunner | None,
    progress: bool,
) -> tuple[int, str, CorpusBuildReport | None]:
    """Index ``docs`` into the plan's backend (embedded too, with ``embedder``): how many, where
    they went and the index's build report (``read``, ``runner``: ``EmbeddedIndex.build``'s)."""
    url, overwrite = plan.url, plan.overwrite
    try:
        if plan.backend == "postgres" and url is not None:
            schema = plan.schema_name or DEFAULT_SCHEMA
            with PostgresBackend.build(
                docs, url, schema=schema, overwrite=overwrite, embedder=embedder, progress=progress
            ) as pg:
                count = len(pg)
            return count, f"schema {schema!r} of {redact_url(url)}", None
        assert out is not None
        index = EmbeddedIndex.build(
            docs,
            out,
            overwrite=overwrite,
            progress=progress,
            workers=plan.workers,
            removed=lambda: {f"malformed: {r}": n for r, n in run.skipped().items()},
            notes=run.report_lines,
            read=read,
            runner=runner,
        )
        if embedder is not None:  # computed (or imported) now, kept in the index for dense search
            dense = plan.model_dump(include={"vectors", "vectors_ids", "nprobe"}, exclude_none=True)
            field = "vectors" if plan.vectors else "embedder"
            try:
                open_corpus(
                    out, "dense", field=field, embedder=embedder, progress=progress, **dense
                ).close()
            except BaseException:
                # An import of vectors refused (or interrupted) leaves nothing, so the corrected
                # command is not refused for the index in its way. (A failed embedding job is
                # kept instead: the next open resumes it.)
                if plan.vectors and made_kind(out) == "index":
                    shutil.rmtree(out, ignore_errors=True)
                raise
        return len(index), str(out), index.build_report
    except ImportError as exc:
        raise FieldError(
            "backend", f"postgres: the 'postgres' extra is not installed ({exc.name})"
        ) from None
    except (ValueError, FileNotFoundError, FileExistsError, ConnectionError) as exc:
        if isinstance(exc, FieldError) and exc.field:  # a FieldError is a ValueError
            raise
        # a source's row that cannot be read (its file, line and field in the reason)
        why = exc.reason if isinstance(exc, FieldError) else str(exc)
        raise FieldError("documents", why) from None
    except Exception as exc:
        if url is None or not type(exc).__module__.startswith("psycopg"):
            raise
        # a database error, without the password
        raise FieldError("url", f"{redact_url(url)}: {one_line(exc)}") from None


def _dask_runner(scheduler: str | None, backend: StoreBackend) -> MonthRunner | None:
    if scheduler is None:
        return None
    if backend != "embedded":
        raise FieldError("scheduler", "only with an index directory")
    from pastcast.corpus.sharded import dask_months

    try:
        return dask_months(scheduler)
    except ImportError as exc:
        raise FieldError("scheduler", str(exc)) from None


def source_kind(source: str) -> tuple[str, str]:
    """``KIND:PATH`` split, the kind a registered source."""
    kind, sep, path = source.partition(":")
    if not sep or not path:
        raise FieldError("source", f"{source!r}: expected KIND:PATH, e.g. jsonl:docs.jsonl")
    if kind not in sources:
        raise FieldError(
            "source", f"{source!r}: unknown kind {kind!r} (known: {', '.join(sources.names())})"
        )
    return kind, path


def _inside(path: str, folder: Path) -> bool:
    return Path(path).exists() and Path(path).resolve().is_relative_to(folder.resolve())


def _check_workers(workers: int | None) -> None:
    if workers is not None and not 1 <= workers <= MAX_BUILD_WORKERS:
        raise FieldError("workers", f"expected 1 to {MAX_BUILD_WORKERS}, got {workers}")


@dataclass(frozen=True)
class Reading:
    """How a build (or an append) reads its source: the source and its options, the content
    screen, the allow-list, the quality filters and the dating rule, in that order."""

    kind: str
    path: str
    lenient: bool
    since: date | None
    until: date | None
    include_flagged: bool
    allowed: list[str]
    quality: Sequence[str]

    def open(
        self,
        workdir: Path | None,
        require_dates: DatingRule,
        stage: Callable[[Iterator[Document]], Iterator[Document]] | None = None,
    ) -> SourceRun:
        """The source's run through every stage; ``stage`` (an append's repeated ids) goes just
        before the dating rule, so that the dating counts are of what is stored."""
        # Only the options given are passed, so one the source does not take is an error.
        given: dict[str, Any] = {
            "lenient": self.lenient or None,
            "since": self.since,
            "until": self.until,
        }
        if self.include_flagged and "include_flagged" in sources.get(self.kind).parameters():
            given["include_flagged"] = True  # the source's own screens (wcep's days)
        options = {k: v for k, v in given.items() if v is not None}
        filters = _quality_filters(self.quality)
        with as_field("source"):  # a missing path or extra, an option the source does not take
            # A side file (e.g. the timestamp rule of each page) is written next to the index.
            run = open_source(
                self.kind, self.path, workdir=workdir, screen=not self.include_flagged, **options
            )
        if self.allowed:
            run = allow_sources(run, self.allowed)
        if filters:
            from pastcast.curate import with_quality

            run = with_quality(run, filters)
        if stage is not None:
            run = dataclasses.replace(run, documents=stage(run.documents))
        dated: SourceRun = with_dating(run, require_dates)  # outermost: it counts what is stored
        return dated


def _allowed(names: Sequence[str], file: Path | None) -> list[str]:
    allowed = list(names)
    if any(not name.strip() for name in allowed):
        raise FieldError("allow_source", "an empty source name")
    if file is not None:
        with as_field("allow_sources"):
            allowed += read_allow_list(file)
    return allowed


def _quality_filters(names: Sequence[str]) -> list[Any]:
    """The quality filters ``names`` names, built before any document is read."""
    if not names:
        return []
    from pastcast.curate import build_quality_filters

    with as_field("quality"):  # an unknown name, a filter without defaults, a missing extra
        return build_quality_filters(list(names))


# What a build reads, as a ``ReadStamp``: a build cut short after its read phase skips it when
# run again on the same input with the same options (``corpus.embedded._read_reuse``).
# The plan's fields that decide which documents are spooled, and how.
_READ_FIELDS = (
    "source",
    "lenient",
    "since",
    "until",
    "include_flagged",
    "allow_source",
    "allow_sources_file",
    "quality",
    "require_dates",
)


def _fingerprint(path: Path) -> list[tuple[str, int, int]]:
    """Every file under ``path`` (or ``path`` itself): name, size, modification time (ns)."""
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    out = []
    for f in files:
        st = f.stat()
        out.append(
            (f.relative_to(path).as_posix() if f != path else "", st.st_size, st.st_mtime_ns)
        )
    return out


def read_stamp(
    plan: CorpusBuildPlan, path: str, allowed: list[str], run: SourceRun
) -> ReadStamp | None:
    """The stamp of ``run``, read from ``path`` as ``plan`` says (``allowed``: its allow-list,
    the file's names included); None where the input is not files on disk (nothing to
    fingerprint: the read phase always runs). A restore replaces ``run``'s report and side
    files with those the read phase kept."""
    source = Path(path)
    if not source.exists():
        return None
    what = plan.model_dump(mode="json", include=set(_READ_FIELDS))
    what.update(allowed=allowed, files=_fingerprint(source), version=__version__)
    key = hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()

    def save(folder: Path) -> dict[str, Any]:
        for side in run.side_files:
            side.handle.close()  # complete now: every document is read
            shutil.copyfile(side.path, folder / side.name)
        return {
            "skipped": run.skipped(),
            "lines": run.report_lines(),
            "side": [[side.name, side.what] for side in run.side_files],
        }

    def restore(folder: Path, saved: dict[str, Any]) -> None:
        run.discard()  # this run's side files, empty: the read ones come back instead
        sides = []
        for name, what in saved["side"]:
            fd, copy = tempfile.mkstemp(prefix=".pastcast-", suffix=f".{name}")
            os.close(fd)
            shutil.copyfile(folder / name, copy)
            sides.append(SideFile(name, Path(copy), open(copy, "a", encoding="utf-8"), what))  # noqa: SIM115
        skipped, lines = dict(saved["skipped"]), list(saved["lines"])
        run.side_files, run.skipped, run.report_lines = tuple(sides), lambda: skipped, lambda: lines

    return ReadStamp(key, save, restore)


def build_corpus(
    plan: CorpusBuildPlan | str, *, progress: bool = False, **fields: Any
) -> CorpusBuild:
    """Build the corpus ``plan`` declares (``CorpusBuildPlan``; or a source ``KIND:PATH`` and
    the plan's other ``fields``), the progress on stderr with ``progress``. ``FieldError`` naming
    the field, before anything is stored where it can be."""
    if isinstance(plan, str):
        try:
            plan = CorpusBuildPlan(source=plan, **fields)
        except ValidationError as exc:
            loc, msg = first_error(exc)
            raise FieldError(field_path(loc) or "source", msg) from None
    source, out, backend, url = plan.source, plan.out, plan.backend, plan.url
    embedder, vectors, nprobe = plan.embedder, plan.vectors, plan.nprobe
    kind, path = source_kind(source)
    target = Path(out) if out is not None else None
    _check_target(backend, target, url, plan.overwrite)
    if target is not None and _inside(path, target):
        raise FieldError("out", f"{target} holds the input {path}; not replacing it")
    file = plan.allow_sources_file
    allowed = _allowed(plan.allow_source, Path(file) if file else None)
    if (vectors is not None or nprobe is not None) and embedder is None:
        raise FieldError(
            "vectors" if vectors is not None else "nprobe",
            "needs the embedder (the model of the vectors, which embeds the queries)",
        )
    if (vectors is not None or nprobe is not None) and backend != "embedded":
        raise FieldError(
            "vectors" if vectors is not None else "nprobe", "only with an index directory"
        )
    runner = _dask_runner(plan.scheduler, backend)
    model = None
    if embedder is not None:
        with within("embedder"):
            model = resolve_embedder(embedder)
    dates, flagged = (plan.since, plan.until), plan.include_flagged
    reading = Reading(kind, path, plan.lenient, *dates, flagged, allowed, plan.quality)
    run = reading.open(target.parent if target else None, plan.require_dates)
    try:
        docs = _nonempty(run, source)
        stored = _store(
            docs, plan, target, model, run, read_stamp(plan, path, allowed, run), runner, progress
        )
    except BaseException:  # a failure or an interrupt: drop the side files
        run.discard()
        raise
    lines: list[str] = []
    if run.side_files:
        # Into the index directory, or a fresh folder when the documents went to a database.
        side = target if target is not None else Path(tempfile.mkdtemp(prefix="pastcast-"))
        side = side if target is not None else side / "report"
        side.mkdir(parents=True, exist_ok=True)
        lines += run.finish(side)
    lines += run.report_lines()
    report = _record_plan(target, plan, stored[2])
    return CorpusBuild(stored[0], stored[1], dict(run.skipped()), tuple(lines), report, plan)


def _record_plan(
    index_dir: Path | None, plan: CorpusBuildPlan, report: CorpusBuildReport | None
) -> CorpusBuildReport | None:
    """The merged record into the index's build report, so the folder says how it was made (the
    lower layer builds from documents and never sees the record)."""
    if index_dir is None or report is None:
        return report
    report = report.model_copy(update={"plan": plan.model_dump(mode="json")})
    report.save(index_dir)
    return report
