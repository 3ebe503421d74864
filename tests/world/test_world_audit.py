"""The product's promise on the whole embedded world: no agent ever sees the future."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from pastcast.agents import agent_spec, list_agents
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.runlog import read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.world import World, build_world


def _needs_arguments(factory: object) -> bool:
    params = inspect.signature(factory).parameters.values()  # type: ignore[arg-type]
    return any(p.default is inspect.Parameter.empty and p.name != "setting" for p in params)


@pytest.fixture(scope="module")
def world() -> World:
    return build_world(0)


@pytest.fixture(scope="module")
def audited_log(world: World, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("audit")
    index = EmbeddedIndex.build(world.documents, root / "index")
    # pastcast's own agents: those that need a model (an argument without default) are audited
    # with scripted models in tests/agents/test_prompt_audit.py; agents other tests register
    # (a cheater that walks the interpreter's heap at every step) are not the product.
    agents = [
        agent_spec(a.name)
        for a in list_agents()
        if a.factory.__module__.startswith("pastcast.") and not _needs_arguments(a.factory)
    ]
    agents.append(agent_spec("heuristic", setting="memory_on"))
    out = root / "run.jsonl"
    run_benchmark(world.dataset, index, RunConfig(agents=tuple(agents)), out, progress=False)
    return out


def test_every_document_seen_is_dated_before_its_steps_cutoff(
    world: World, audited_log: Path
) -> None:
    docs = {d.id: d for d in world.documents}
    log = read_run_log(audited_log)
    seen = 0
    for rec in log.steps:
        for call in rec.episode.tool_calls:
            for doc_id in call.doc_ids:
                assert docs[doc_id].timestamp < rec.cutoff, (rec.agent, rec.event_id, doc_id)
                seen += 1
    assert seen > 1000


def test_no_hindsight_canary_reaches_the_event_it_reveals(world: World, audited_log: Path) -> None:
    canary_event = {}
    docs = {d.id: d for d in world.documents}
    for cid in world.canary_ids:
        # A canary is dated after its event's resolution; find the event by resolution time.
        for ev_id, res in world.dataset.resolutions.items():
            if res.label in docs[cid].text and docs[cid].timestamp > res.resolved_at:
                canary_event.setdefault(cid, set()).add(ev_id)
    assert canary_event
    for rec in read_run_log(audited_log).steps:
        agent_side = rec.model_dump_json(include={"forecast", "episode"})
        for cid, events in canary_event.items():
            if rec.event_id in events:
                assert cid not in agent_side


def test_no_resolved_label_in_what_agents_were_told(world: World, audited_log: Path) -> None:
    for rec in read_run_log(audited_log).steps:
        for msg in rec.episode.messages:
            assert "resolved_at" not in msg.content
        for call in rec.episode.tool_calls:
            if call.name == "market_history":
                assert rec.role == "reference"
                for day in json.loads(call.result or "[]"):
                    assert day["day"] < rec.cutoff.date().isoformat()


def test_research_agent_beats_uniform_and_market_is_listed_as_reference(
    audited_log: Path,
) -> None:
    from pastcast.scoring import summarize, table_from_records

    steps = read_run_log(audited_log).steps
    summaries = {
        (s.group[0], s.group[1]): s
        for s in summarize(table_from_records(steps), by=("agent", "setting"), bootstrap=200)
    }
    heuristic = summaries[("heuristic", "memory_free")].metrics["brier"].mean
    uniform = summaries[("uniform", "memory_free")].metrics["brier"].mean
    assert heuristic < uniform - 0.05
    assert summaries[("market", "memory_free")].role == "reference"
