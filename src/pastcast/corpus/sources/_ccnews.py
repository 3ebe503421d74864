"""Documents from CC-News style crawls: JSON lines with the news-please fields (or the page in
``html``, read by ``_htmlmeta``), or WARC files (extra ``warc``). Every page goes through
``clean_pages``; pages are put in time order by spooling them to one temporary file per month
(memory bounded by a month). See docs/corpus.md, "CC-News style crawls"."""

from __future__ import annotations

import hashlib
import importlib
import json
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

from pastcast import safejson
from pastcast.corpus.sources._clean import CleanReport, RawPage, choose_timestamp, clean_pages
from pastcast.corpus.sources._dumps import SkipCounter, open_text
from pastcast.corpus.sources._htmlmeta import parse_html
from pastcast.records import Document

_JSON_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".ndjson")
_WARC_SUFFIXES = (".warc", ".warc.gz")


class WarcMissing(RuntimeError):
    """A WARC file was given but the ``warcio`` package (the ``warc`` extra) is missing."""


@dataclass
class CCNewsReport:
    records_read: int = 0
    malformed: SkipCounter = field(default_factory=SkipCounter)
    clean: CleanReport = field(default_factory=CleanReport)

    def lines(self) -> list[str]:
        out = [f"records read {self.records_read}, kept {self.clean.kept}"]
        out += self.malformed.lines("malformed, skipped")
        out += [f"removed ({r}): {n}" for r, n in sorted(self.clean.removed.items())]
        out += [f"dated by {r}: {n}" for r, n in sorted(self.clean.timestamp_rule.items())]
        return out


def _page_id(obj: dict[str, Any], url: str | None) -> str:
    given = obj.get("id")
    if isinstance(given, str) and given.strip():
        return given
    if not url:
        raise ValueError("field url: missing (and no id)")
    return "ccnews:" + hashlib.sha256(url.encode()).hexdigest()[:16]


def _from_record(obj: Any) -> RawPage:
    if not isinstance(obj, dict):
        raise ValueError("record: expected a JSON object")
    for name in ("url", "title", "maintext", "text", "html", "date_publish", "date_modify"):
        value = obj.get(name)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"field {name}: expected a string, got {type(value).__name__}")
    url = obj.get("url") or None
    meta = parse_html(obj["html"]) if obj.get("html") else None
    text = obj.get("maintext") or obj.get("text") or (meta.text if meta else "")
    return RawPage(
        id=_page_id(obj, url),
        url=url,
        title=obj.get("title") or (meta.title if meta else ""),
        text=text,
        date_published=obj.get("date_publish") or (meta.published if meta else None),
        date_modified=obj.get("date_modify") or (meta.modified if meta else None),
        crawl_time=str(obj["date_download"]) if obj.get("date_download") else None,
        source=obj.get("source_domain") or "",
    )


def _jsonl_pages(path: Path, report: CCNewsReport) -> Iterator[RawPage]:
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            report.records_read += 1
            try:
                try:
                    obj = safejson.loads_line(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"record: invalid JSON ({exc.msg})") from None
                yield _from_record(obj)
            except ValueError as exc:
                report.malformed.add(str(exc), f"{path}:{lineno}")


def _warc_pages(path: Path, report: CCNewsReport) -> Iterator[RawPage]:
    try:
        archive = importlib.import_module("warcio.archiveiterator")
    except ImportError:
        raise WarcMissing(
            f"{path}: reading WARC needs the 'warc' extra (pip install 'pastcast[warc]')"
        ) from None
    with path.open("rb") as fh:
        for n, rec in enumerate(archive.ArchiveIterator(fh), start=1):
            if rec.rec_type != "response":
                continue
            ctype = (rec.http_headers.get_header("Content-Type") or "") if rec.http_headers else ""
            if "html" not in ctype.lower():
                continue
            report.records_read += 1
            url = rec.rec_headers.get_header("WARC-Target-URI")
            body = rec.content_stream().read().decode("utf-8", errors="replace")
            if not url:
                report.malformed.add("record: no WARC-Target-URI", f"{path}: record {n}")
                continue
            meta = parse_html(body)
            yield RawPage(
                id=_page_id({}, url),
                url=url,
                title=meta.title,
                text=meta.text,
                date_published=meta.published,
                date_modified=meta.modified,
                crawl_time=rec.rec_headers.get_header("WARC-Date"),
            )


def ccnews_pages(path: Path | str, report: CCNewsReport) -> Iterator[RawPage]:
    """The raw pages of a file or a folder of files, in file order."""
    path = Path(path)
    if path.is_dir():
        suffixes = _JSON_SUFFIXES + _WARC_SUFFIXES
        files = sorted(p for p in path.iterdir() if p.name.endswith(suffixes))
        if not files:
            raise FileNotFoundError(f"{path}: no .jsonl(.gz) or .warc(.gz) files")
    elif path.is_file():
        files = [path]
    else:
        raise FileNotFoundError(f"{path}: no such file or folder")
    for file in files:
        if file.name.endswith(_WARC_SUFFIXES):
            yield from _warc_pages(file, report)
        else:
            yield from _jsonl_pages(file, report)


def _in_time_order(pages: Iterable[RawPage], folder: Path) -> Iterator[RawPage]:
    """Pages ordered by their cascade timestamp (then id); undatable pages first."""
    months: dict[str, IO[str]] = {}
    with ExitStack() as stack:
        for page in pages:
            chosen = choose_timestamp(page)
            if chosen is None:
                yield page  # counted by clean_pages as having no usable timestamp
                continue
            month = chosen[0].strftime("%Y-%m")
            if month not in months:
                months[month] = stack.enter_context((folder / f"{month}.jsonl").open("w"))
            months[month].write(page.model_dump_json() + "\n")
    for month in sorted(months):
        with (folder / f"{month}.jsonl").open() as fh:
            batch = [RawPage.model_validate_json(line) for line in fh]
        batch.sort(key=_order)
        yield from batch


def _order(page: RawPage) -> tuple[datetime, str]:
    chosen = choose_timestamp(page)
    assert chosen is not None  # only dated pages are spooled
    return chosen[0], page.id


def read_ccnews(
    path: Path | str, *, report: CCNewsReport | None = None, rules_out: IO[str] | None = None
) -> Iterator[Document]:
    """Yield the cleaned documents of a CC-News style source; ``rules_out`` receives an
    ``id<TAB>rule`` line per kept document (the cascade rule that dated it)."""
    report = report if report is not None else CCNewsReport()
    seen: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="pastcast-ccnews-") as tmp:
        pages = _in_time_order(ccnews_pages(path, report), Path(tmp))
        for cleaned in clean_pages(pages, report.clean):
            doc = cleaned.document
            if doc.id in seen:
                report.clean.kept -= 1
                report.clean.timestamp_rule[cleaned.timestamp_rule] -= 1
                report.clean.removed["duplicate_id"] += 1
                continue
            seen.add(doc.id)
            if rules_out is not None:
                rules_out.write(f"{doc.id}\t{cleaned.timestamp_rule}\n")
            yield doc
