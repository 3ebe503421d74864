"""Dating provenance: each source records which date a document carries; a document dated only
by its crawl or fetch time is flagged in the build report and left out on request, and the counts
are kept in the corpus identity."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pastcast.app import build_corpus, open_corpus
from pastcast.corpus.sources import CCNewsReport, read_ccnews, read_jsonl_documents
from pastcast.errors import FieldError


def _body(n: int) -> str:
    return " ".join(f"topic{n}x{i} report" for i in range(30))


def _ccnews(path: Path) -> Path:
    records: list[dict[str, Any]] = [
        {"url": "https://n.example/1", "title": "One", "maintext": _body(1),
         "date_publish": "2024-05-03 12:00:00", "date_download": "2024-05-10 06:00:00"},
        {"url": "https://n.example/2", "title": "Two", "maintext": _body(2),
         "date_modify": "2024-05-04T00:00:00Z", "date_download": "2024-05-10 06:00:00"},
        {"url": "https://n.example/3", "title": "Three", "maintext": _body(3),
         "date_download": "2024-05-10 06:00:00"},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_ccnews_records_which_date_each_page_carries(tmp_path: Path) -> None:
    docs = list(read_ccnews(_ccnews(tmp_path / "cc.jsonl"), report=CCNewsReport()))
    assert {d.title: d.dated_by for d in docs} == {
        "One": "published", "Two": "modified", "Three": "crawled",
    }  # fmt: skip


def _jsonl(path: Path) -> Path:
    lines = [
        {"id": "pub", "timestamp": "2024-05-01T10:00:00Z", "title": "Published",
         "text": _body(4), "dated_by": "published"},
        {"id": "fetch", "timestamp": "2024-05-02T10:00:00Z", "title": "Fetched",
         "text": _body(5), "dated_by": "fetched"},
        {"id": "plain", "timestamp": "2024-05-03T10:00:00Z", "title": "Unrecorded",
         "text": _body(6)},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _ids(index: Path) -> set[str]:
    from pastcast.corpus.embedded import EmbeddedIndex

    opened = EmbeddedIndex.open(index)
    return {opened.read_ordinal(i).id for i in range(len(opened))}


def test_a_document_dated_only_by_its_fetch_time_is_flagged_and_kept_by_default(
    tmp_path: Path,
) -> None:
    built = build_corpus(f"jsonl:{_jsonl(tmp_path / 'd.jsonl')}", out=tmp_path / "idx")
    assert built.indexed == 3 and _ids(tmp_path / "idx") == {"pub", "fetch", "plain"}
    assert "dated by fetched: 1 (33.3%)" in built.report
    assert any(line.startswith("flagged: 1 documents dated only by crawl or fetch time")
               for line in built.report)  # fmt: skip
    corpus = open_corpus(tmp_path / "idx")
    try:
        dating = corpus.identity().options["dating"]
    finally:
        corpus.close()
    assert dating == {
        "require": "any", "dated_by": {"fetched": 1, "published": 1, "unrecorded": 1},
        "crawl_or_fetch_dated": 1, "excluded": {},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("require", "kept"), [("metadata", {"pub", "plain"}), ("published", {"pub"})]
)
def test_a_build_leaves_out_documents_without_the_dates_it_requires(
    tmp_path: Path, require: str, kept: set[str]
) -> None:
    built = build_corpus(
        f"jsonl:{_jsonl(tmp_path / 'd.jsonl')}",
        out=tmp_path / "idx",
        require_dates=require,  # type: ignore[arg-type]
    )
    assert _ids(tmp_path / "idx") == kept and built.indexed == len(kept)
    assert f"left out (require {require}): 1 dated by fetched" in built.report
    recorded = json.loads((tmp_path / "idx" / "dating.json").read_text())
    assert recorded["require"] == require and recorded["crawl_or_fetch_dated"] == 0


def test_an_unknown_kind_of_date_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"id": "x", "timestamp": "2024-05-01T00:00:00Z", "title": "t",
                               "text": "t", "dated_by": "guessed"}) + "\n")  # fmt: skip
    with pytest.raises(ValueError, match="field dated_by: expected one of published"):
        list(read_jsonl_documents(bad))
    with pytest.raises(FieldError, match="require_dates"):
        build_corpus(f"jsonl:{_jsonl(tmp_path / 'd.jsonl')}", out=tmp_path / "i",
                     require_dates="sometimes")  # type: ignore[arg-type]  # fmt: skip
