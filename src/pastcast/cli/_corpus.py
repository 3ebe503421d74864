"""`pastcast corpus ...` commands: build an index from a source, search and read it as of a
cutoff."""

from __future__ import annotations

from datetime import date, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

# the workflows that build and append are imported by their commands: a search imports only
# what opening and searching an index need (two seconds less before the first search)
from pastcast.app import CorpusBuildPlan, open_corpus
from pastcast.cli._common import (
    ConfigOpt,
    JsonFlag,
    Retrieval,
    call_with_params,
    fail,
    fail_field,
    field_errors,
    field_help,
    field_option,
    options_record,
    print_json,
)
from pastcast.corpus import DocType, DocumentNotVisible, OpenedCorpus, SearchFilter
from pastcast.cutoff import parse_cutoff, parse_timestamp
from pastcast.errors import FieldError
from pastcast.validation import first_error

if TYPE_CHECKING:
    from pastcast.app import CorpusBuild

_TARGET_HELP = (
    "Index directory, or a PostgreSQL database URL (postgres://... or postgresql://..., "
    "optionally ending in ?schema=NAME)."
)

app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)

AsOf = Annotated[
    str,
    typer.Option(
        "--as-of",
        help="Cutoff: a date (means 00:00 UTC) or an ISO 8601 instant. Only documents strictly "
        "before it are visible.",
    ),
]


def _cutoff(value: str) -> datetime:
    try:
        return parse_cutoff(value)
    except ValueError as exc:
        fail(f"--as-of: {exc}")


def _filters(
    doc_type: DocType | None,
    source: str | None,
    author: str | None,
    month: str | None,
    since: str | None,
) -> SearchFilter:
    try:
        lower = None if since is None else parse_timestamp(since)
    except ValueError as exc:
        fail(f"--since: {exc}")
    fields = {"doc_type": doc_type, "source": source, "author": author, "month": month}
    try:
        return SearchFilter.model_validate(fields | {"since": lower})
    except ValidationError as exc:
        loc, msg = first_error(exc)
        fail(f"--{'-'.join(str(p) for p in loc).replace('_', '-')}: {msg}")


EmbedderOpt = Annotated[
    str | None,
    typer.Option(
        help="dense/hybrid: the embedder, by registered name (default: the model of the "
        "vectors kept in the index, else all-minilm-l6-v2; "
        "static-minilm-l6-v2 is about a hundred times faster on CPUs; a database corpus uses "
        "the one it was loaded with)."
    ),
]


def _open(target: str, retrieval: str = "bm25", **options: Any) -> OpenedCorpus:
    """An index directory, or the corpus in a schema of a ``postgresql://`` database
    (``pastcast.app.open_corpus``; an error names ``INDEX``)."""
    with field_errors({"corpus": "INDEX"}):
        return open_corpus(target, retrieval, **options)


def _day(value: str | None, option: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        fail(f"{option}: not a date (YYYY-MM-DD): {value!r}")


BUILD_OPTIONS = {"source": "source", "documents": ""}
"""The fields of a build or an append whose option is not ``--field-name``."""


_field = partial(field_option, CorpusBuildPlan)
Schema = Annotated[str | None, _field("schema_name", "--schema")]


@app.command()
def build(
    ctx: typer.Context,
    source: Annotated[
        str | None, typer.Argument(help=field_help(CorpusBuildPlan, "source"))
    ] = None,
    out: Annotated[Path | None, _field("out", "--out")] = None,
    overwrite: Annotated[bool, _field("overwrite")] = False,
    backend: Annotated[Literal["embedded", "postgres"], _field("backend")] = "embedded",
    url: Annotated[str | None, _field("url")] = None,
    schema: Schema = None,
    embedder: Annotated[str | None, _field("embedder")] = None,
    vectors: Annotated[str | None, _field("vectors")] = None,
    vectors_ids: Annotated[str | None, _field("vectors_ids")] = None,
    nprobe: Annotated[int | None, _field("nprobe", min=1)] = None,
    lenient: Annotated[bool, _field("lenient")] = False,
    since: Annotated[str | None, _field("since")] = None,
    until: Annotated[str | None, _field("until")] = None,
    include_flagged: Annotated[bool, _field("include_flagged")] = False,
    allow_source: Annotated[list[str] | None, _field("allow_source", "--allow-source")] = None,
    allow_sources_file: Annotated[
        Path | None, _field("allow_sources_file", "--allow-sources")
    ] = None,
    quality: Annotated[list[str] | None, _field("quality", "--quality")] = None,
    require_dates: Annotated[
        Literal["any", "metadata", "published"], _field("require_dates", "--require-dates")
    ] = "any",
    workers: Annotated[int | None, _field("workers", min=1, max=256)] = None,
    scheduler: Annotated[str | None, _field("scheduler")] = None,
    config: ConfigOpt = None,
    as_json: JsonFlag = False,
) -> None:
    """Build an index from a document source (written atomically, resumed where a build that
    stopped left off), then print a report."""
    from pastcast.app import build_corpus

    plan = options_record(ctx, CorpusBuildPlan, {"schema": "schema_name", "as_json": None})
    with field_errors(BUILD_OPTIONS):
        built = build_corpus(plan, progress=True)
    if as_json:
        print_json(built.as_dict())
        return
    _print_built(built, f"indexed {built.indexed} documents into {built.into}")


def _print_built(built: CorpusBuild, headline: str) -> None:
    typer.echo(headline)
    for line in built.lines():
        typer.echo(f"  {line}")
    if built.skipped:
        typer.echo(f"skipped {sum(built.skipped.values())} malformed lines:")
        for reason, n in sorted(built.skipped.items(), key=lambda kv: (-kv[1], kv[0])):
            typer.echo(f"  {n:6d}  {reason}")


@app.command()
def append(
    ctx: typer.Context,
    source: Annotated[
        str, typer.Argument(help="KIND:PATH of the new documents (the kinds 'corpus build' reads).")
    ],
    index: Annotated[Path, typer.Option("--index", help="Index directory to append to.")],
    skip_duplicates: Annotated[
        bool,
        typer.Option(
            help="Skip (and count) documents whose id the index holds or the source repeats; "
            "without it such a document stops the append, naming the id, and nothing changes."
        ),
    ] = False,
    lenient: Annotated[bool, _field("lenient")] = False,
    since: Annotated[str | None, _field("since")] = None,
    until: Annotated[str | None, _field("until")] = None,
    include_flagged: Annotated[bool, _field("include_flagged")] = False,
    allow_source: Annotated[list[str] | None, _field("allow_source", "--allow-source")] = None,
    allow_sources_file: Annotated[
        Path | None, _field("allow_sources_file", "--allow-sources")
    ] = None,
    quality: Annotated[list[str] | None, _field("quality", "--quality")] = None,
    require_dates: Annotated[
        Literal["any", "metadata", "published"] | None,
        typer.Option(
            "--require-dates",
            help="The dating rule; must be the one the index was built with (the default).",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(help="Processes indexing the touched months side by side.", min=1, max=256),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Add a source's documents to an index: only the months they fall in are indexed again; the
    index then equals one built from all the documents (replaced atomically when complete)."""
    from pastcast.app import append_corpus

    with field_errors(BUILD_OPTIONS):
        built = call_with_params(
            ctx,
            append_corpus,
            omit={"skip_duplicates"},
            duplicates="skip" if skip_duplicates else "refuse",
            since=_day(since, "--since"),
            until=_day(until, "--until"),
            allow_source=allow_source or (),
            quality=quality or (),
            progress=True,
        )
    if as_json:
        print_json(built.as_dict("appended"))
        return
    _print_built(built, f"appended {built.indexed} documents to {built.into}")


@app.command()
def search(
    target: Annotated[str, typer.Argument(help=_TARGET_HELP, metavar="INDEX")],
    query: Annotated[str, typer.Argument(help="Free-text query.")],
    as_of: AsOf,
    k: Annotated[int, typer.Option("--k", min=1, max=100_000, help="Number of hits.")] = 10,
    retrieval: Retrieval = "bm25",
    json_out: JsonFlag = False,
    schema: Schema = None,
    embedder: EmbedderOpt = None,
    nprobe: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="dense/hybrid over an index directory: search approximately (faiss IVF, this "
            "many lists probed, trained only on documents before the cutoff and kept in the "
            "index; exact until the first month of 1,000+ documents is over). Default: exact.",
        ),
    ] = None,
    doc_type: Annotated[
        DocType | None,
        typer.Option(help="Only posts and articles (submission), or only comments."),
    ] = None,
    # not named ``source``: that is the KIND:PATH of ``corpus build``
    from_source: Annotated[
        str | None,
        typer.Option(
            "--source", help="Only this source, or its last path segments (politics, r/politics)."
        ),
    ] = None,
    author: Annotated[str | None, typer.Option(help="Only this author's documents.")] = None,
    month: Annotated[
        str | None, typer.Option(help="Only documents of this UTC month, YYYY-MM.")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(help="Only documents at or after this date (00:00 UTC) or instant."),
    ] = None,
) -> None:
    """Rank the documents visible at the cutoff (statistics as of the cutoff), optionally only
    those that pass the filters (applied before ranking; the cutoff holds whatever they say)."""
    cutoff = _cutoff(as_of)
    filters = _filters(doc_type, from_source, author, month, since)
    backend = _open(target, retrieval, schema=schema, embedder=embedder, nprobe=nprobe)
    try:  # filters only when not empty (CorpusBackend)
        hits = backend.search(
            query, as_of=cutoff, k=k, filters=None if filters.is_empty() else filters
        )
    finally:
        backend.close()
    if json_out:
        print_json([h.model_dump(mode="json") for h in hits])
        return
    table = Table("score", "timestamp", "id", "title")
    for h in hits:
        table.add_row(f"{h.score:.3f}", h.timestamp.isoformat(), h.id, h.title)
    Console().print(table)


@app.command()
def read(
    target: Annotated[str, typer.Argument(help=_TARGET_HELP, metavar="INDEX")],
    doc_id: Annotated[str, typer.Argument(help="Document id.")],
    as_of: AsOf,
    json_out: JsonFlag = False,
    schema: Schema = None,
) -> None:
    """Print one document if it is visible at the cutoff (exit 2 otherwise)."""
    cutoff = _cutoff(as_of)
    backend = _open(target, schema=schema)
    try:
        doc = backend.read(doc_id, as_of=cutoff)
    except DocumentNotVisible as exc:
        fail(str(exc))
    finally:
        backend.close()
    if json_out:
        print_json(doc.model_dump(mode="json"))
        return
    typer.echo(f"{doc.title}\n{doc.timestamp.isoformat()}  {doc.source}  {doc.url or ''}\n")
    typer.echo(doc.text)


FEED_OPTIONS = {
    "feeds": "FEEDS",
    "documents": "--index",
    "source": "--spool",
}


@app.command()
def feed(
    feeds: Annotated[
        Path,
        typer.Argument(
            help="TOML file of [[feed]] tables: name and one of url (RSS 2.0 or Atom), path (a "
            "feed file) or folder (a drop folder of JSONL document files); optional source, "
            "timeout_s, max_bytes, retries, backoff_s (docs/corpus.md, 'Live feeds').",
            metavar="FEEDS.toml",
        ),
    ],
    spool: Annotated[
        Path,
        typer.Option(
            "--spool", help="Spool folder the items are appended to (build with feed:SPOOL)."
        ),
    ],
    once: Annotated[bool, typer.Option("--once", help="One fetch round, then exit.")] = False,
    interval: Annotated[
        float, typer.Option("--interval", min=1, help="Seconds between rounds (start to start).")
    ] = 300.0,
    index: Annotated[
        Path | None,
        typer.Option(
            "--index",
            help="After each round that wrote items, append them to this index directory "
            "(built from the spool if absent; items already indexed are skipped).",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Fetch feeds into a dated spool, once or every --interval seconds: each item dated by its
    feed's time only when that is not after pastcast first saw it, else by that first sight."""
    from pastcast.app import check_feed_index, follow_feeds, index_feed_round

    failed = False
    try:
        if index is not None:
            check_feed_index(index)  # before the spool is made or anything fetched
        for fetched in follow_feeds(feeds, spool, interval=interval, rounds=1 if once else None):
            failed = fetched.errors > 0
            added = index_feed_round(spool, index, fetched.written)
            if as_json:
                print_json({**fetched.as_dict(), "indexed": added})
                continue
            typer.echo(f"{fetched.at.isoformat()}: {fetched.written} items written to {spool}")
            for report in fetched.feeds:
                typer.echo(f"  {report.line()}")
            if added is not None:
                typer.echo(f"  indexed {added} documents into {index}")
    except FieldError as exc:
        fail_field(exc, FEED_OPTIONS)
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    if failed:
        raise typer.Exit(1)
