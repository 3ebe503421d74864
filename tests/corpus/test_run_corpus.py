"""The corpus options of ``pastcast run`` and ``pastcast data import``: an index directory or a
database URL, any retrieval mode, and the corpus identity in the run header."""

from __future__ import annotations

import json
import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest
from test_corpus_cli import DOCS
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.corpus import content_digest
from pastcast.dataset import load_dataset
from pastcast.runlog import read_run_log
from pastcast.world import build_world

runner = CliRunner()

RUN = ["run", "--dataset", "world:0", "--agent", "heuristic", "--max-events", "1"]


@pytest.fixture(scope="module")
def world_digest() -> str:
    return content_digest(build_world(0).documents)


@pytest.fixture(scope="module")
def world_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("world") / "ix"
    result = runner.invoke(app, ["corpus", "build", "world:0", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


def test_the_world_keeps_its_own_index_and_any_retrieval(tmp_path: Path, world_digest: str) -> None:
    pytest.importorskip("faiss")  # the 'dense' extra
    out = tmp_path / "run.jsonl"
    args = [*RUN, "--retrieval", "hybrid", "--embedder", "hash-64", "--out", str(out)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    corpus = read_run_log(out).header.corpus
    assert corpus is not None and corpus.retrieval == "hybrid" and corpus.backend == "hybrid"
    assert corpus.content_sha256 == world_digest and corpus.options["embedder"] == "hash-64"
    assert corpus.spec == str(tmp_path / "index")
    assert (tmp_path / "index" / "dense-hash-64.npy").is_file()


def test_the_world_with_a_corpus_built_from_it(
    tmp_path: Path, world_index: Path, world_digest: str
) -> None:
    pytest.importorskip("faiss")  # the 'dense' extra
    out = tmp_path / "run.jsonl"
    args = [*RUN, "--corpus", str(world_index), "--retrieval", "hybrid", "--embedder", "hash-64"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    corpus = read_run_log(out).header.corpus
    assert corpus is not None and corpus.spec == str(world_index)
    assert corpus.content_sha256 == world_digest and corpus.retrieval == "hybrid"
    assert corpus.options["exact"] is True
    assert not (tmp_path / "index").exists()  # the given corpus, not one of its own
    approx = tmp_path / "approx.jsonl"  # approximate months, recorded in the run header
    result = runner.invoke(app, [*args, "--nprobe", "4", "--out", str(approx)])
    assert result.exit_code == 0, result.output
    recorded = read_run_log(approx).header.corpus
    assert recorded is not None and recorded.options["nprobe"] == 4
    months = recorded.options["approximate_months"]  # the world's months may all be small
    assert recorded.options["exact"] is (months == 0)


def test_the_world_refuses_a_corpus_of_other_documents(tmp_path: Path) -> None:
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    other = tmp_path / "other"
    assert (
        runner.invoke(app, ["corpus", "build", f"jsonl:{src}", "--out", str(other)]).exit_code == 0
    )
    result = runner.invoke(app, [*RUN, "--corpus", str(other), "--out", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2
    assert "holds other documents than world:0" in result.output
    assert "pastcast corpus build world:0" in result.output
    assert not (tmp_path / "r.jsonl").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--retrieval", "fuzzy"], "--retrieval expected one of bm25, dense, hybrid, got 'fuzzy'"),
        (["--embedder", "hash-64"], "--embedder is only for retrieval dense or hybrid"),
        (["--retrieval", "dense", "--embedder", "nope"], "unknown embedder 'nope'"),
        (["--corpus", "/no/such/index"], "--corpus /no/such/index: not an index directory"),
        (["--corpus", "postgresql://u:pw@127.0.0.1:1/db?connect_timeout=2"], "cannot connect"),
    ],
)
def test_bad_corpus_options_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, [*RUN, *args, "--out", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2, result.output
    assert message in result.output and ":pw@" not in result.output
    lines = result.output.strip().splitlines()  # progress lines of the world's index, then
    assert [line for line in lines if line.startswith("error:")] == lines[-1:]  # one error


def test_the_world_from_a_database_url(tmp_path: Path, pg_url: str, world_digest: str) -> None:
    url = pg_url.replace("postgres@", "postgres:s3cret-pw@", 1)
    build = ["corpus", "build", "world:0", "--backend", "postgres", "--url", url]
    result = runner.invoke(app, [*build, "--schema", "world0", "--embedder", "hash-64"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "run.jsonl"
    args = [*RUN, "--corpus", f"{url}?schema=world0", "--retrieval", "hybrid"]
    result = runner.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 0, result.output
    log = read_run_log(out)
    corpus = log.header.corpus
    assert corpus is not None and corpus.backend == "postgres" and corpus.retrieval == "hybrid"
    assert corpus.content_sha256 == world_digest and corpus.options["schema"] == "world0"
    assert corpus.options["embedder"] == "hash-64"  # the model the corpus was loaded with
    assert "s3cret-pw" not in out.read_text() and "s3cret-pw" not in result.output
    searched = [c for s in log.steps for c in s.episode.tool_calls if c.name == "search"]
    assert searched and any(c.doc_ids for c in searched)


def test_news_counts_from_an_index_or_a_database(tmp_path: Path, pg_url: str) -> None:
    """``data import --news-corpus`` takes the same specs; both give the same schedule."""
    fixtures = Path(__file__).parents[1] / "markets" / "fixtures" / "fb"
    root = tmp_path / "fb"
    shutil.copytree(fixtures, root)
    (root / "derived" / "questions.fixture.jsonl").rename(
        root / "derived" / "markets_resolved.jsonl"
    )
    (root / "derived" / "values.fixture.csv").rename(root / "derived" / "daily_values.csv")
    start = date(2025, 1, 20)
    docs = [  # a few documents on every day, unevenly
        {
            "id": f"n{d}-{i}",
            "timestamp": f"{start + timedelta(days=d)}T08:00:00Z",
            "title": "",
            "text": "x",
        }
        for d in range(70)
        for i in range(d * 7 % 11)
    ]
    src = tmp_path / "news.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in docs))
    index = tmp_path / "news"
    assert (
        runner.invoke(app, ["corpus", "build", f"jsonl:{src}", "--out", str(index)]).exit_code == 0
    )
    build = ["corpus", "build", f"jsonl:{src}", "--backend", "postgres", "--url", pg_url]
    assert runner.invoke(app, [*build, "--schema", "news"]).exit_code == 0
    steps = []
    for spec in (str(index), f"{pg_url}?schema=news", None):
        out = tmp_path / f"ds{len(steps)}"
        # dojo weighs each day's news; the default causal-dojo ignores news unless asked
        imp = ["data", "import", "forecastbench", str(root), "--out", str(out)]
        imp += ["--schedule", "dojo"]
        result = runner.invoke(app, imp + ([] if spec is None else ["--news-corpus", spec]))
        assert result.exit_code == 0, result.output
        steps.append(load_dataset(out).steps)
    assert steps[0] == steps[1] != steps[2]  # the news counts moved some forecast dates
    no_corpus = ["run", "--dataset", str(tmp_path / "ds0"), "--agent", "uniform"]
    result = runner.invoke(app, [*no_corpus, "--retrieval", "dense", "--out", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert "--retrieval dense needs a corpus with a dataset directory" in result.output
    bad = runner.invoke(
        app,
        ["data", "import", "forecastbench", str(root), "--out", str(tmp_path / "x")]
        + ["--news-corpus", str(tmp_path)],
    )
    assert bad.exit_code == 2 and "--news-corpus:" in bad.output and "not an index" in bad.output


def test_run_benchmark_records_the_backend_identity_or_the_one_given(tmp_path: Path) -> None:
    from pastcast.agents import agent_spec
    from pastcast.corpus.embedded import EmbeddedIndex
    from pastcast.runner import RunConfig, run_benchmark

    world = build_world(0)
    index = EmbeddedIndex.in_memory(world.documents)
    config = RunConfig(agents=(agent_spec("uniform"),), max_events=1)
    run_benchmark(world.dataset, index, config, tmp_path / "a.jsonl", progress=False)
    assert read_run_log(tmp_path / "a.jsonl").header.corpus == index.identity()
    given = index.identity().model_copy(update={"spec": "s3://bucket/world-0"})
    run_benchmark(world.dataset, index, config, tmp_path / "b.jsonl", progress=False, corpus=given)
    assert read_run_log(tmp_path / "b.jsonl").header.corpus == given
    run_benchmark(world.dataset, None, config, tmp_path / "c.jsonl", progress=False)
    assert read_run_log(tmp_path / "c.jsonl").header.corpus is None
