"""Nothing destroyed: only a directory pastcast made (it carries a marker file) is ever replaced;
never a user's folder, a file, or the input; a run never replaces an index it did not build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.cli import app
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.records import Document

runner = CliRunner()
FB = Path(__file__).parents[1] / "markets" / "fixtures" / "fb_upstream"


def _docs(path: Path, n: int = 3) -> Path:
    lines = [
        json.dumps({"id": f"d{i}", "timestamp": "2024-03-05", "title": "t", "text": f"x y {i}"})
        for i in range(n)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _user_folder(path: Path) -> dict[str, bytes]:
    path.mkdir(parents=True)
    (path / "thesis.tex").write_bytes(b"years of work")
    (path / "manifest.json").write_bytes(b'{"name": "my web app"}')  # looks like ours, is not
    return _snapshot(path)


def _snapshot(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def _refused(args: list[str], *names: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    for name in names:
        assert name in result.stderr


def test_overwrite_never_replaces_a_users_folder(tmp_path: Path) -> None:
    docs = _docs(tmp_path / "docs.jsonl")
    mine = tmp_path / "mine"
    before = _user_folder(mine)
    _refused(["corpus", "build", f"jsonl:{docs}", "--out", str(mine), "--overwrite"], str(mine))
    assert _snapshot(mine) == before


def test_overwrite_never_replaces_the_input(tmp_path: Path) -> None:
    docs = _docs(tmp_path / "docs.jsonl")
    before = docs.read_bytes()
    _refused(["corpus", "build", f"jsonl:{docs}", "--out", str(docs), "--overwrite"], str(docs))
    assert docs.read_bytes() == before
    # An index holding the input (its own folder) is not replaced by a build from that input.
    index = tmp_path / "index"
    assert (
        runner.invoke(app, ["corpus", "build", f"jsonl:{docs}", "--out", str(index)]).exit_code == 0
    )
    inside = _docs(index / "extra.jsonl")
    _refused(["corpus", "build", f"jsonl:{inside}", "--out", str(index), "--overwrite"], "input")
    assert inside.is_file()


def test_overwrite_replaces_an_index_pastcast_built(tmp_path: Path) -> None:
    index = tmp_path / "index"
    first = _docs(tmp_path / "a.jsonl", 3)
    second = _docs(tmp_path / "b.jsonl", 5)
    assert (
        runner.invoke(app, ["corpus", "build", f"jsonl:{first}", "--out", str(index)]).exit_code
        == 0
    )
    _refused(["corpus", "build", f"jsonl:{second}", "--out", str(index)], "--overwrite")
    result = runner.invoke(
        app, ["corpus", "build", f"jsonl:{second}", "--out", str(index), "--overwrite"]
    )
    assert result.exit_code == 0, result.output
    assert len(EmbeddedIndex.open(index)) == 5


def test_an_empty_folder_is_filled(tmp_path: Path) -> None:
    docs = _docs(tmp_path / "docs.jsonl")
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(app, ["corpus", "build", f"jsonl:{docs}", "--out", str(empty)])
    assert result.exit_code == 0, result.output


def test_the_api_refuses_too(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    before = _user_folder(mine)
    doc = Document.model_validate(
        {"id": "a", "timestamp": "2024-03-05T00:00:00Z", "title": "t", "text": "x y"}
    )
    with pytest.raises(FileExistsError, match="not made by pastcast"):
        EmbeddedIndex.build([doc], mine, overwrite=True)
    assert _snapshot(mine) == before


def test_a_dataset_import_never_replaces_a_users_folder_or_a_file(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    before = _user_folder(mine)
    _refused(["data", "import", "forecastbench", str(FB), "--out", str(mine)], str(mine))
    assert _snapshot(mine) == before
    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep me")
    _refused(["data", "import", "forecastbench", str(FB), "--out", str(a_file)], str(a_file))
    assert a_file.read_text() == "keep me"


def test_a_run_never_replaces_an_index_it_did_not_build(tmp_path: Path) -> None:
    out = tmp_path / "runs" / "run.jsonl"
    args = ["run", "-a", "uniform", "--max-events", "1", "--out", str(out)]
    users = tmp_path / "runs" / "index"
    before = _user_folder(users)
    _refused(args, str(users))
    assert _snapshot(users) == before

    # An index built by `corpus build` (of other documents) is not the run's to replace either.
    other = tmp_path / "other" / "index"
    docs = _docs(tmp_path / "docs.jsonl")
    assert (
        runner.invoke(app, ["corpus", "build", f"jsonl:{docs}", "--out", str(other)]).exit_code == 0
    )
    _refused([*args[:-1], str(other.parent / "run.jsonl")], str(other))
    assert len(EmbeddedIndex.open(other)) == 3

    # The index a run built for the world is rebuilt for another seed.
    mine = tmp_path / "mine" / "run.jsonl"
    for seed in ("0", "1"):
        result = runner.invoke(
            app,
            [
                "run",
                "-a",
                "uniform",
                "--max-events",
                "1",
                "--dataset",
                f"world:{seed}",
                "--out",
                str(mine.with_name(f"run{seed}.jsonl")),
            ],
        )
        assert result.exit_code == 0, result.output


def test_the_demo_never_writes_into_a_users_folder(tmp_path: Path) -> None:
    # the arena's commands alike: arena/tests/test_arena_outputs.py
    mine = tmp_path / "mine"
    before = _user_folder(mine)
    (mine / "report.md").write_text("my own report")
    before = _snapshot(mine)
    result = runner.invoke(app, ["demo", "--out", str(mine)])
    assert result.exit_code == 2, result.output
    assert _snapshot(mine) == before
