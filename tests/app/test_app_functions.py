"""The application functions from Python: errors name the field, results carry what the CLI
prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pastcast.app import build_corpus, open_corpus, read_runs, score_runs
from pastcast.errors import FieldError


def _docs(path: Path) -> Path:
    rows = [
        {
            "id": "a",
            "timestamp": "2024-01-02T00:00:00Z",
            "source": "news",
            "title": "Vote set",
            "text": "The council set the vote for March.",
        },
        {
            "id": "b",
            "timestamp": "2024-02-02T00:00:00Z",
            "source": "blog",
            "title": "Vote held",
            "text": "The council held the vote in February.",
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_corpus_build_from_python(tmp_path: Path) -> None:
    source = f"jsonl:{_docs(tmp_path / 'docs.jsonl')}"
    built = build_corpus(source, out=tmp_path / "index", allow_source=["news"])
    assert built.indexed == 1 and built.into == str(tmp_path / "index")
    corpus = open_corpus(tmp_path / "index")
    try:
        assert len(corpus) == 1
    finally:
        corpus.close()


@pytest.mark.parametrize(
    ("source", "options", "field"),
    [
        ("nokind", {}, "source"),
        ("jsonl:DOCS", {}, "out"),
        ("jsonl:DOCS", {"out": "INDEX", "url": "postgresql://u@h/db"}, "url"),
        ("jsonl:DOCS", {"out": "INDEX", "quality": ["nope"]}, "quality"),
        ("jsonl:DOCS", {"out": "INDEX", "allow_source": [" "]}, "allow_source"),
    ],
)
def test_a_bad_build_names_its_field(
    tmp_path: Path, source: str, options: dict[str, object], field: str
) -> None:
    docs = _docs(tmp_path / "docs.jsonl")
    source = source.replace("DOCS", str(docs))
    given = {k: (str(tmp_path / "index") if v == "INDEX" else v) for k, v in options.items()}
    with pytest.raises(FieldError) as caught:
        build_corpus(source, **given)  # type: ignore[arg-type]
    assert caught.value.field == field and "--" not in caught.value.reason
    assert not (tmp_path / "index").exists()


def test_a_user_folder_is_never_replaced(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(FieldError) as caught:
        build_corpus(f"jsonl:{_docs(tmp_path / 'd.jsonl')}", out=mine, overwrite=True)
    assert caught.value.field == "out" and (mine / "notes.txt").read_text() == "keep"


def test_runs_of_another_dataset_are_refused_naming_the_dataset(world_run: Path) -> None:
    with pytest.raises(FieldError) as caught:
        read_runs([world_run], "world:1")
    assert caught.value.field == "dataset" and "ran on" in caught.value.reason


def test_grouping_by_horizon_needs_the_dataset(world_run: Path) -> None:
    with pytest.raises(FieldError) as caught:
        score_runs([world_run], by="agent,horizon", bootstrap=0)
    assert caught.value.field == "dataset"
    scored = score_runs([world_run], dataset="world", by="agent,horizon", bootstrap=0)
    assert scored.card.n_forecasts == len(scored.read.runs) and not scored.read.notes
