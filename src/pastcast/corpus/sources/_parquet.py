"""Documents from article tables in Parquet (the Forecast-Dojo layout; docs/corpus.md, "Article
tables in Parquet"), streamed by record batches: memory is a batch plus the ids seen."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pastcast.corpus.sources._dumps import SkipCounter
from pastcast.cutoff import as_utc, end_of_day, parse_publication_time
from pastcast.errors import FieldError
from pastcast.records import Document

ARTICLE_COLUMNS = ("title", "text", "article_id", "url", "published_date")


@dataclass
class ArticleTableReport:
    rows_read: int = 0
    kept: int = 0
    skipped: SkipCounter = field(default_factory=SkipCounter)

    def lines(self) -> list[str]:
        return [
            f"rows read {self.rows_read}, kept {self.kept}",
            *self.skipped.lines("rows skipped"),
        ]


class _BadRow(ValueError):
    pass


def published(value: Any) -> datetime:
    """The instant an article counts as published (a bare date: the end of its day)."""
    if value is None:
        raise _BadRow("column published_date: null")
    if isinstance(value, datetime):
        return as_utc(value)
    if isinstance(value, date):
        return end_of_day(value)
    if isinstance(value, str):
        try:
            return parse_publication_time(value)
        except ValueError:
            raise _BadRow("column published_date: not an ISO 8601 date or time") from None
    raise _BadRow(f"column published_date: unsupported type {type(value).__name__}")


def _document(row: dict[str, Any]) -> Document:
    raw_id = row["article_id"]
    if raw_id is None or (isinstance(raw_id, str) and not raw_id.strip()):
        raise _BadRow("column article_id: null or empty")
    if isinstance(raw_id, float | bytes):
        raise _BadRow(f"column article_id: unsupported type {type(raw_id).__name__}")
    text, title, url = row["text"], row["title"], row["url"]
    if not isinstance(text, str) or not text.strip():
        raise _BadRow("column text: null or empty")
    if title is not None and not isinstance(title, str):
        raise _BadRow(f"column title: expected text, got {type(title).__name__}")
    if url is not None and not isinstance(url, str):
        raise _BadRow(f"column url: expected text, got {type(url).__name__}")
    host = urlsplit(url).netloc.lower().removeprefix("www.") if url else ""
    return Document(
        id=str(raw_id),
        timestamp=published(row["published_date"]),
        title=title or "",
        text=text,
        source=host,
        url=url or None,
    )


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        files = sorted(path.glob("*.parquet"))
        if files:
            return files
        raise FieldError("", f"{path}: no *.parquet files")
    raise FieldError("", f"{path}: no such file or folder")


def read_article_table(
    path: Path | str,
    *,
    report: ArticleTableReport | None = None,
    batch_rows: int = 8192,
) -> Iterator[Document]:
    """Yield the documents of an article table; every file's columns are checked first."""
    import pyarrow.parquet as pq

    files = _files(Path(path))
    tables = []
    for file in files:
        try:
            table = pq.ParquetFile(file)
        except Exception as exc:  # pyarrow raises several types for a non-Parquet file
            raise FieldError("", f"{file}: not a readable Parquet file ({exc})") from None
        names = set(table.schema_arrow.names)
        for column in ARTICLE_COLUMNS:
            if column not in names:
                raise FieldError("", f"{file}: missing required column {column!r}")
        tables.append((file, table))
    report = report if report is not None else ArticleTableReport()
    seen: set[str] = set()
    for file, table in tables:
        row_no = 0
        for batch in table.iter_batches(batch_size=batch_rows, columns=list(ARTICLE_COLUMNS)):
            for row in batch.to_pylist():
                row_no += 1
                report.rows_read += 1
                where = f"{file}: row {row_no}"
                try:
                    doc = _document(row)
                    if doc.id in seen:
                        raise _BadRow("column article_id: repeated id (the first row is kept)")
                except _BadRow as exc:
                    report.skipped.add(str(exc), where)
                    continue
                seen.add(doc.id)
                report.kept += 1
                yield doc
