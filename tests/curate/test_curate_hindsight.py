"""The embedded world with planted hindsight rewrites, end to end through the command line: the
content screen flags every rewrite when the corpus is built, `data curate` (scripted judge) gives
its funnel without ever showing the judge one, and a run on the curated dataset shows agents none
of them. Each check is paired with the same pipeline on a corpus built with --include-flagged,
where the rewrites do get through: the screen is what keeps them out."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from curate_judges import world_judge
from typer.testing import CliRunner

from pastcast.agents import agent_spec
from pastcast.audit import audit_run
from pastcast.cli import app
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.dataset import Dataset, load_dataset, save_dataset
from pastcast.models import ChatRequest, ScriptedModel, providers, register_provider
from pastcast.runlog import RunLog, StepColumns, read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.world import World, WorldConfig, build_world

runner = CliRunner()

# What the scripted judge makes of this world (seed 0, 30% of its events with a planted rewrite).
FUNNEL = [
    ("input", 0, 50),
    ("forecast dates", 0, 50),
    ("query decomposition", 0, 50),
    ("evidence judge", 29, 21),
    ("coverage probe", 14, 7),
    ("outcome and topic balance", 3, 4),
]


@dataclass(frozen=True)
class Built:
    world: World
    root: Path
    dataset: Path
    build_output: dict[str, str]  # corpus name -> `corpus build` output
    requests: dict[str, list[ChatRequest]]  # corpus name -> what the judge was sent
    funnels: dict[str, list[tuple[str, int, int]]]

    def planted_titles(self) -> set[str]:
        return {d.title for d in self.world.documents if d.id in self.world.hindsight_ids}


CORPORA = {"screened": [], "unscreened": ["--include-flagged"]}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    world = build_world(0, WorldConfig(hindsight_fraction=0.3))
    root = tmp_path_factory.mktemp("planted")
    docs = world.write_jsonl(root / "docs.jsonl")
    dataset = save_dataset(world.dataset, root / "dataset")
    models: list[ScriptedModel] = []

    def factory(rest: str) -> ScriptedModel:
        models.append(ScriptedModel(responder=world_judge, name=f"curate-hindsight:{rest}"))
        return models[-1]

    register_provider("curate-hindsight")(factory)
    outputs, requests, funnels = {}, {}, {}
    try:
        for name, extra in CORPORA.items():
            args = ["corpus", "build", f"jsonl:{docs}", "--out", str(root / name), *extra]
            result = runner.invoke(app, args)
            assert result.exit_code == 0, result.output
            outputs[name] = result.output
            args = ["data", "curate", str(dataset), "--corpus", str(root / name)]
            args += ["--judge", "curate-hindsight:w", "--retrieval", "bm25"]
            result = runner.invoke(app, [*args, "--out", str(root / f"curated-{name}"), "--json"])
            assert result.exit_code == 0, result.stderr
            report = json.loads(result.stdout)
            funnels[name] = [(s["stage"], s["removed"], s["remaining"]) for s in report["funnel"]]
            requests[name] = list(models[-1].requests)
        yield Built(world, root, dataset, outputs, requests, funnels)
    finally:
        providers.remove("curate-hindsight")


def _ids(index: Path) -> set[str]:
    opened = EmbeddedIndex.open(index)
    return {opened.read_ordinal(i).id for i in range(len(opened))}


def test_the_content_screen_flags_every_planted_rewrite_when_the_corpus_is_built(
    built: Built,
) -> None:
    planted = built.world.hindsight_ids
    assert len(planted) == 15
    assert "content screen: 15 documents removed" in built.build_output["screened"]
    screened = _ids(built.root / "screened")
    assert len(screened) == len(built.world.documents) - 15 and not screened & planted
    assert planted <= _ids(built.root / "unscreened")


def _sent_planted(built: Built, corpus: str) -> int:
    titles = built.planted_titles()
    return sum(
        any(t in m.content for m in r.messages for t in titles) for r in built.requests[corpus]
    )


def test_the_curation_funnel_and_a_judge_never_shown_a_planted_rewrite(built: Built) -> None:
    assert built.funnels["screened"] == FUNNEL
    assert len(built.requests["screened"]) > 100
    assert _sent_planted(built, "screened") == 0
    assert _sent_planted(built, "unscreened") > 0  # retrieval finds them when they are there


def _run(built: Built, corpus: str, curated: Dataset) -> RunLog:
    out = built.root / f"run-{corpus}.jsonl"
    specs = (
        agent_spec("heuristic"),
        agent_spec("heuristic", setting="memory_on", label="heuristic-memory"),
    )
    run_benchmark(
        curated,
        EmbeddedIndex.open(built.root / corpus),
        RunConfig(agents=specs),
        out,
        progress=False,
    )
    return read_run_log(out)


def test_a_run_on_the_curated_dataset_shows_agents_none_of_them(built: Built) -> None:
    world = built.world
    curated = load_dataset(built.root / "curated-screened")
    texts = [d.text for d in world.documents if d.id in world.hindsight_ids]
    planted_events = {e.id for e in curated.events if any(e.title in t for t in texts)}
    assert planted_events  # the curated events include some with a planted rewrite

    log = _run(built, "screened", curated)
    calls = [c for r in log.steps for c in r.episode.tool_calls]
    seen = {d for c in calls for d in c.doc_ids}
    assert seen and not seen & world.hindsight_ids
    titles = built.planted_titles()
    assert not any(t in c.result for c in calls for t in titles)
    audit = audit_run(StepColumns.held(log), documents=world.documents, dataset=curated)
    assert audit.findings == (), [f.line() for f in audit.findings[:5]]

    leaky = _run(built, "unscreened", curated)
    seen = {d for r in leaky.steps for c in r.episode.tool_calls for d in c.doc_ids}
    assert seen & world.hindsight_ids  # dated before the cutoff, only the screen stops them
    leaky_log = StepColumns.held(leaky)
    counts = audit_run(leaky_log, documents=world.documents, dataset=curated).counts()
    assert counts.get("flagged_document", 0) > 0
