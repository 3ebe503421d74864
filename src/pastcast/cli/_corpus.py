"""`pastcast corpus ...` commands: build an index from a source, search and read it as of a
cutoff."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from pastcast.cli._common import fail, print_json
from pastcast.cli._sources import SOURCE_KINDS, SourceRun, open_source
from pastcast.corpus import (
    CorpusBackend,
    DocumentFormatError,
    DocumentNotVisible,
    EmbeddedIndex,
    LoadReport,
    WcepReport,
    read_jsonl_documents,
    read_wcep,
)
from pastcast.cutoff import parse_cutoff
from pastcast.records import Document

app = typer.Typer(help="Build and query the dated document corpus.", no_args_is_help=True)

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


def _open(index_dir: Path) -> EmbeddedIndex:
    try:
        return EmbeddedIndex.open(index_dir)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))


def _day(value: str | None, option: str) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        fail(f"{option}: not a date (YYYY-MM-DD): {value!r}")


@app.command()
def build(
    source: Annotated[
        str,
        typer.Argument(
            help="KIND:PATH: jsonl:docs.jsonl, wcep:FOLDER, reddit:DUMP_OR_FOLDER, "
            "parquet:TABLE_OR_FOLDER or ccnews:FILE_OR_FOLDER (JSON lines or WARC)"
        ),
    ],
    out: Annotated[Path, typer.Option("--out", help="Index directory to write.")],
    overwrite: Annotated[bool, typer.Option(help="Replace an existing index.")] = False,
    lenient: Annotated[
        bool, typer.Option(help="jsonl: skip malformed lines (counted by reason).")
    ] = False,
    since: Annotated[str | None, typer.Option(help="wcep: first day (YYYY-MM-DD).")] = None,
    until: Annotated[str | None, typer.Option(help="wcep: last day (YYYY-MM-DD).")] = None,
    include_flagged: Annotated[
        bool, typer.Option(help="wcep: keep documents flagged as possible hindsight.")
    ] = False,
) -> None:
    """Build an index from a document source (written atomically), then print a report."""
    kind, sep, path = source.partition(":")
    if not sep or not path:
        fail(f"source {source!r}: expected KIND:PATH, e.g. jsonl:docs.jsonl")
    if out.exists() and not overwrite:
        fail(f"{out}: already exists (pass --overwrite to replace it)")
    docs: Iterator[Document]
    run: SourceRun | None = None
    if kind == "jsonl":
        if not Path(path).is_file():
            fail(f"{path}: no such file")
        load_report = LoadReport()
        report: LoadReport | WcepReport = load_report
        docs = read_jsonl_documents(path, lenient=lenient, report=load_report)
    elif kind == "wcep":
        if not Path(path).is_dir():
            fail(f"{path}: no such folder")
        wcep_report = WcepReport()
        report = wcep_report
        docs = read_wcep(
            path,
            since=_day(since, "--since"),
            until=_day(until, "--until"),
            include_flagged=include_flagged,
            report=wcep_report,
        )
    elif kind in SOURCE_KINDS:
        run = open_source(kind, path, out)
        docs, report = run.documents, LoadReport()
    else:
        known = ", ".join(("jsonl", "wcep", *SOURCE_KINDS))
        fail(f"source {source!r}: unknown kind {kind!r} (known: {known})")
    try:
        index = EmbeddedIndex.build(docs, out, overwrite=overwrite, progress=True)
    except (DocumentFormatError, ValueError, FileNotFoundError) as exc:
        if run is not None:
            run.discard()
        fail(str(exc))
    typer.echo(f"indexed {len(index)} documents into {out}")
    if run is not None:
        run.finish(out)
    if isinstance(report, WcepReport):
        for line in report.lines():
            typer.echo(f"  {line}")
    elif report.skipped:
        typer.echo(f"skipped {report.skipped} malformed lines:")
        for reason, count in report.reasons.most_common():
            typer.echo(f"  {count:6d}  {reason}")


@app.command()
def search(
    index_dir: Annotated[Path, typer.Argument(help="Index directory.")],
    query: Annotated[str, typer.Argument(help="Free-text query.")],
    as_of: AsOf,
    k: Annotated[int, typer.Option("--k", min=1, help="Number of hits.")] = 10,
    mode: Annotated[
        str,
        typer.Option(
            help="bm25, dense (needs the 'dense' extra; embeddings are cached in the index) or "
            "hybrid (reciprocal-rank fusion of both)."
        ),
    ] = "bm25",
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Rank the documents visible at the cutoff (statistics as of the cutoff)."""
    cutoff = _cutoff(as_of)
    if mode not in ("bm25", "dense", "hybrid"):
        fail(f"--mode: expected bm25, dense or hybrid, got {mode!r}")
    index = _open(index_dir)
    backend: CorpusBackend = index
    if mode != "bm25":
        try:
            from pastcast.corpus import DenseIndex, HybridIndex, MiniLMEmbedder

            dense = DenseIndex(index, MiniLMEmbedder())
        except ImportError as exc:
            fail(f"--mode {mode}: the 'dense' extra is not installed ({exc.name})")
        backend = dense if mode == "dense" else HybridIndex(dense)
    hits = backend.search(query, as_of=cutoff, k=k)
    if json_out:
        print_json([h.model_dump(mode="json") for h in hits])
        return
    table = Table("score", "timestamp", "id", "title")
    for h in hits:
        table.add_row(f"{h.score:.3f}", h.timestamp.isoformat(), h.id, h.title)
    Console().print(table)


@app.command()
def read(
    index_dir: Annotated[Path, typer.Argument(help="Index directory.")],
    doc_id: Annotated[str, typer.Argument(help="Document id.")],
    as_of: AsOf,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Print one document if it is visible at the cutoff (exit 2 otherwise)."""
    cutoff = _cutoff(as_of)
    try:
        doc = _open(index_dir).read(doc_id, as_of=cutoff)
    except DocumentNotVisible as exc:
        fail(str(exc))
    if json_out:
        print_json(doc.model_dump(mode="json"))
        return
    typer.echo(f"{doc.title}\n{doc.timestamp.isoformat()}  {doc.source}  {doc.url or ''}\n")
    typer.echo(doc.text)
