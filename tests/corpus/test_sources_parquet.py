"""Reading Forecast-Dojo style article tables from Parquet."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pastcast.corpus.sources import read_article_table
from pastcast.corpus.sources._parquet import ArticleTableReport
from pastcast.errors import FieldError


def row(i: int, **kw: Any) -> dict[str, Any]:
    base = {
        "article_id": f"a{i}",
        "title": f"Title {i}",
        "text": f"Body of article {i}.",
        "url": f"https://www.example.com/news/{i}",
        "published_date": f"2025-03-0{i % 9 + 1}T08:30:00Z",
        "summary": "ignored",
    }
    return base | kw


def write(path: Path, rows: list[dict[str, Any]], schema: pa.Schema | None = None) -> Path:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, row_group_size=2)
    return path


def test_reads_rows_and_ignores_extra_columns(tmp_path: Path) -> None:
    path = write(tmp_path / "a.parquet", [row(1), row(2)])
    report = ArticleTableReport()
    docs = list(read_article_table(path, report=report, batch_rows=1))
    assert [d.id for d in docs] == ["a1", "a2"]
    assert docs[0].timestamp == datetime(2025, 3, 2, 8, 30, tzinfo=UTC)
    assert docs[0].source == "example.com" and docs[0].url == "https://www.example.com/news/1"
    assert (report.rows_read, report.kept) == (2, 2)


def test_timestamp_columns_and_bare_dates(tmp_path: Path) -> None:
    stamps = write(
        tmp_path / "ts.parquet",
        [row(1, published_date=datetime(2025, 3, 1, 12, 0))],  # zone-less: UTC
        pa.schema(
            [
                ("article_id", pa.string()),
                ("title", pa.string()),
                ("text", pa.string()),
                ("url", pa.string()),
                ("published_date", pa.timestamp("us")),
                ("summary", pa.string()),
            ]
        ),
    )
    assert next(read_article_table(stamps)).timestamp == datetime(2025, 3, 1, 12, tzinfo=UTC)
    days = write(tmp_path / "d.parquet", [row(1, published_date=date(2025, 3, 1))])
    end_of_day = datetime(2025, 3, 1, 23, 59, 59, 999999, tzinfo=UTC)
    assert next(read_article_table(days)).timestamp == end_of_day
    text_day = write(tmp_path / "t.parquet", [row(1, published_date="2025-03-01")])
    assert next(read_article_table(text_day)).timestamp == end_of_day


def test_missing_column_names_file_and_column(tmp_path: Path) -> None:
    rows = [{k: v for k, v in row(1).items() if k != "published_date"}]
    path = write(tmp_path / "bad.parquet", rows)
    expected = r"bad\.parquet: missing required column 'published_date'"
    with pytest.raises(FieldError, match=expected):
        next(read_article_table(path))


def test_bad_rows_are_counted_with_row_numbers(tmp_path: Path) -> None:
    rows = [
        row(1),
        row(2, published_date="soon"),
        row(3, article_id=None),
        row(4, text=""),
        row(1),  # repeated id
        row(5, published_date=None),
        row(6),
    ]
    path = write(tmp_path / "a.parquet", rows)
    report = ArticleTableReport()
    docs = list(read_article_table(path, report=report))
    assert [d.id for d in docs] == ["a1", "a6"]
    assert report.skipped.total == 5 and report.rows_read == 7
    assert report.skipped.first_at == {
        "column published_date: not an ISO 8601 date or time": f"{path}: row 2",
        "column article_id: null or empty": f"{path}: row 3",
        "column text: null or empty": f"{path}: row 4",
        "column article_id: repeated id (the first row is kept)": f"{path}: row 5",
        "column published_date: null": f"{path}: row 6",
    }
    assert report.lines()[0] == "rows read 7, kept 2"


def test_folder_of_tables(tmp_path: Path) -> None:
    write(tmp_path / "2025-04.parquet", [row(3)])
    write(tmp_path / "2025-03.parquet", [row(1), row(2)])
    assert [d.id for d in read_article_table(tmp_path)] == ["a1", "a2", "a3"]
    with pytest.raises(FieldError, match="no such file"):
        next(read_article_table(tmp_path / "nope"))
    (tmp_path / "junk.parquet").write_text("not parquet")
    with pytest.raises(FieldError, match="not a readable Parquet file"):
        next(read_article_table(tmp_path))
