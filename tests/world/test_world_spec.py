"""``world[:SEED][,FIELD=VALUE...]``: one parser for every place a world is named as text; the
planted hindsight rewrites reachable from the command line, screened out of the world's corpus
unless asked for, and reported by ``audit run`` when they reach an agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pastcast.app import open_dataset, shared_replay
from pastcast.cli import app
from pastcast.corpus import content_digest
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.world import WorldConfig, build_world, is_world_spec, parse_world_spec

runner = CliRunner()
PLANTED = "world:0,hindsight_fraction=0.5,n_events=8,n_documents=400"


def test_the_seed_and_any_field_are_read() -> None:
    assert parse_world_spec("world") == (0, WorldConfig())
    assert parse_world_spec("world:7") == (7, WorldConfig())
    seed, config = parse_world_spec("world:3, hindsight_fraction=0.2 ,n_events=9,start=2024-02-01")
    assert seed == 3
    assert config.overrides() == {
        "hindsight_fraction": 0.2,
        "n_events": 9,
        "start": "2024-02-01",
    }


@pytest.mark.parametrize(
    ("spec", "names"),
    [
        ("world:x", "seed must be an integer"),
        ("world:1,hindsight=0.2", "'hindsight=0.2' is not FIELD=VALUE"),
        ("world:1,n_events", "'n_events' is not FIELD=VALUE"),
        ("world:1,n_events=2.5", "n_events='2.5' is not an integer"),
        ("world:1,start=June", "start='June' is not an ISO date"),
        ("world:1,hindsight_fraction=3", "hindsight_fraction must lie in [0, 1]"),
        ("world:1,n_events=3,n_events=4", "n_events is set twice"),
        ("worlds", "does not name the embedded world"),
    ],
)
def test_a_wrong_part_is_named(spec: str, names: str) -> None:
    with pytest.raises(ValueError, match=None) as err:
        parse_world_spec(spec)
    assert names in str(err.value) and repr(spec) in str(err.value)


def test_paths_that_start_with_world_are_not_worlds() -> None:
    assert is_world_spec("world") and is_world_spec("world:2") and is_world_spec("world,n_events=9")
    assert not any(map(is_world_spec, ("worlds", "world-data/", "./world", "world.jsonl")))


def test_every_entry_point_builds_the_same_world() -> None:
    planted = build_world(0, WorldConfig(hindsight_fraction=0.5, n_events=8, n_documents=400))
    assert planted.hindsight_ids
    assert open_dataset(PLANTED).id == planted.dataset.id != build_world(0).dataset.id
    replay = shared_replay(PLANTED)
    assert replay.dataset.id == planted.dataset.id
    # The world's own corpus is screened: the planted rewrites are not in it.
    assert replay.corpus is not None
    assert replay.corpus.content_sha256 == content_digest(planted.corpus_documents)
    assert len(planted.corpus_documents) == len(planted.documents) - len(planted.hindsight_ids)
    with pytest.raises(ValueError, match="n_events='x' is not an integer"):
        open_dataset("world:0,n_events=x")


def _ids(index_dir: Path) -> set[str]:
    index = EmbeddedIndex.open(index_dir)
    return {index.read_ordinal(i).id for i in range(len(index))}


def test_planted_rewrites_from_the_command_line(tmp_path: Path) -> None:
    planted = build_world(0, WorldConfig(hindsight_fraction=0.5, n_events=8, n_documents=400))
    screened, unscreened = tmp_path / "screened", tmp_path / "unscreened"
    built = runner.invoke(app, ["corpus", "build", PLANTED, "--out", str(screened)])
    assert built.exit_code == 0, built.output
    assert f"{len(planted.hindsight_ids)} documents removed" in built.output
    assert not _ids(screened) & planted.hindsight_ids
    built = runner.invoke(
        app, ["corpus", "build", PLANTED, "--out", str(unscreened), "--include-flagged"]
    )
    assert built.exit_code == 0, built.output
    assert planted.hindsight_ids <= _ids(unscreened)

    # A corpus of another world is refused, naming the world.
    other = runner.invoke(
        app,
        ["run", "--agent", "heuristic", "--dataset", "world:0,n_events=8,n_documents=400"]
        + ["--corpus", str(screened), "--out", str(tmp_path / "other.jsonl")],
    )
    assert other.exit_code == 2 and "holds other documents than world:0,n_events=8" in other.output

    for corpus in (screened, unscreened):
        log = tmp_path / corpus.name / "run.jsonl"
        ran = runner.invoke(
            app,
            ["run", "--agent", "heuristic", "--dataset", PLANTED, "--corpus", str(corpus)]
            + ["--out", str(log)],
        )
        assert ran.exit_code == 0, ran.output
        audited = runner.invoke(
            app,
            ["audit", "run", str(log), "--dataset", PLANTED, "--corpus", str(unscreened)]
            + ["--json"],
        )
        findings = json.loads(audited.stdout)["findings"]
        flagged = {f["detail"].split()[0] for f in findings if f["check"] == "flagged_document"}
        if corpus is screened:
            assert audited.exit_code == 0 and findings == []
            # Without --corpus, the world --dataset names gives the documents: every check runs.
            alone = runner.invoke(app, ["audit", "run", str(log), "--dataset", PLANTED, "--json"])
            assert alone.exit_code == 0, alone.output
            report = json.loads(alone.stdout)
            assert report["findings"] == [] and "flagged_document" in report["checks"]
        else:  # the heuristic agent searches its event's title: the rewrites reach it
            assert audited.exit_code == 1 and flagged and flagged <= planted.hindsight_ids


def test_audit_run_reads_a_directory_dataset_even_for_a_world_log(tmp_path: Path) -> None:
    from pastcast.dataset import save_dataset

    log = tmp_path / "run.jsonl"
    ran = runner.invoke(app, ["run", "--agent", "uniform", "--max-events", "1", "--out", str(log)])
    assert ran.exit_code == 0, ran.output
    other = tmp_path / "other"
    save_dataset(build_world(1, WorldConfig(n_events=8, n_documents=400)).dataset, other)
    audited = runner.invoke(app, ["audit", "run", str(log), "--dataset", str(other)])
    assert audited.exit_code == 2 and "but" in audited.output and "ran on" in audited.output
