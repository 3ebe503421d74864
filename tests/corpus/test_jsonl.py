from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sources import LoadReport, read_jsonl_documents
from pastcast.errors import FieldError


def write(path: Path, lines: list[object]) -> Path:
    path.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    return path


GOOD = {"id": "a", "timestamp": "2024-03-01T12:00:00Z", "title": "T", "text": "body"}


def test_reads_documents_with_optional_fields(tmp_path: Path) -> None:
    path = write(
        tmp_path / "d.jsonl",
        [
            GOOD,
            "",
            {
                **GOOD,
                "id": "b",
                "timestamp": "2024-03-01T14:00:00+02:00",
                "url": "http://x",
                "source": "s",
                "thread_id": "t",
                "author": "me",
                "parent_id": "a",
            },
            {**GOOD, "id": "c", "timestamp": "2024-03-02"},
        ],
    )
    docs = list(read_jsonl_documents(path))
    assert [d.id for d in docs] == ["a", "b", "c"]
    assert docs[1].timestamp == datetime(2024, 3, 1, 12, tzinfo=UTC)
    assert docs[1].author == "me" and docs[1].parent_id == "a"
    # A bare date counts from the end of its day (published some time that day).
    assert docs[2].timestamp == datetime(2024, 3, 2, 23, 59, 59, 999999, tzinfo=UTC)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "2: record: invalid JSON"),
        ({**GOOD, "id": "z", "timestamp": "yesterday"}, "2: field timestamp: not an ISO 8601"),
        ({"id": "z", "timestamp": "2024-01-01", "title": "t"}, "2: field text: missing"),
        ({**GOOD, "id": 3}, "2: field id: expected a string, got int"),
        ({**GOOD, "id": "z", "colour": "red"}, "2: field colour: unknown field"),
        ([1, 2], "2: record: expected a JSON object"),
    ],
)
def test_malformed_lines_name_file_line_and_field(
    tmp_path: Path, line: object, message: str
) -> None:
    path = write(tmp_path / "d.jsonl", [GOOD, line])
    with pytest.raises(FieldError, match=rf"^{path}:{message}"):
        list(read_jsonl_documents(path))


def test_lenient_mode_skips_and_counts(tmp_path: Path) -> None:
    path = write(
        tmp_path / "d.jsonl",
        [GOOD, "{bad", {**GOOD, "id": "b", "text": None}, {**GOOD, "id": "c"}, "{bad"],
    )
    report = LoadReport()
    docs = list(read_jsonl_documents(path, lenient=True, report=report))
    assert [d.id for d in docs] == ["a", "c"]
    assert report.read == 2 and report.skipped == 3
    assert sum(report.reasons.values()) == 3
    assert report.reasons["field text: expected a string, got NoneType"] == 1
    assert sum(n for r, n in report.reasons.items() if r.startswith("record: invalid JSON")) == 2


def test_a_duplicate_id_is_refused_by_the_index_built_from_it(tmp_path: Path) -> None:
    # the reader remembers no ids (its memory does not grow with the file); the build refuses
    path = write(tmp_path / "d.jsonl", [GOOD, {**GOOD, "id": "b"}, GOOD])
    assert [d.id for d in read_jsonl_documents(path)] == ["a", "b", "a"]
    with pytest.raises(ValueError, match=r"duplicate document id 'a'"):
        EmbeddedIndex.build(read_jsonl_documents(path), tmp_path / "index", workers=1)


SURROGATE = '{"id": "s", "timestamp": "2024-03-01", "title": "T", "text": "half \\ud800 a pair"}'


@pytest.mark.parametrize("field", ["text", "title", "id", "author"])
def test_a_lone_surrogate_is_one_error_naming_file_line_and_field(
    tmp_path: Path, field: str
) -> None:
    bad = {**GOOD, "id": "s", field: "x \ud800"}
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(FieldError, match=rf"^{path}:2: field {field}: a lone surrogate"):
        list(read_jsonl_documents(path))


def test_corpus_build_lenient_skips_a_lone_surrogate_and_counts_it(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from pastcast.cli import app

    path = write(tmp_path / "d.jsonl", [GOOD, SURROGATE, {**GOOD, "id": "c"}])
    out = tmp_path / "index"
    result = CliRunner().invoke(app, ["corpus", "build", f"jsonl:{path}", "--out", str(out)])
    assert result.exit_code == 2 and f"{path}:2: field text: a lone surrogate" in result.output
    result = CliRunner().invoke(
        app, ["corpus", "build", f"jsonl:{path}", "--out", str(out), "--lenient"]
    )
    assert result.exit_code == 0, result.output
    assert "indexed 2 documents" in result.output and "lone surrogate" in result.output
