"""Prompt audit: on the whole embedded world, nothing a model-driven agent sends to its model
reveals the future (resolutions, hindsight canaries, documents dated at or after the step's
cutoff) or market prices without market access.

Every request is recorded by the scripted model, split into steps by the run log's per-step
model-call counts (the run is sequential), and compared with that step's cutoff. Document text
is matched by word 8-grams that occur only in documents dated at or after the cutoff (and not in
the question itself), so a leaked snippet is caught as well as a whole text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from agent_scripts import BUILT, Scripted, use

from pastcast.agents import agent_spec, prompts_for
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.models import ChatRequest
from pastcast.records import Event, Message
from pastcast.runlog import read_run_log
from pastcast.runner import RunConfig, run_benchmark
from pastcast.world import World

_N = 8
_WORD = re.compile(r"[a-z0-9]+")
_DOC_ID = re.compile(r"doc-\d+")

CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("tool-agent", "memory_free", {"action_mode": "json"}),
    ("tool-agent", "memory_on", {"action_mode": "json"}),
    ("tool-agent", "no_tools", {"action_mode": "json"}),
    ("tool-agent", "memory_free", {"action_mode": "native"}),
    ("tool-agent", "memory_on", {"action_mode": "native"}),
    ("tool-agent-market", "memory_free", {"action_mode": "json"}),
    ("no-tools", "memory_free", {}),
    ("two-stage", "memory_free", {"expand": 3}),
    ("two-stage", "no_tools", {}),
    ("two-stage-hindcast", "memory_free", {"expand": 3, "rounds": 2}),
    ("zero-shot", "memory_free", {}),
]


def _words(text: str) -> list[str]:
    return _WORD.findall(text.replace("\\n", " ").replace('\\"', '"').casefold())


def _shingles(text: str) -> set[tuple[str, ...]]:
    w = _words(text)
    if len(w) < _N:
        return {tuple(w)} if w else set()
    return {tuple(w[i : i + _N]) for i in range(len(w) - _N + 1)}


def _blob(requests: Iterable[ChatRequest]) -> str:
    parts: set[str] = set()
    for r in requests:
        for m in r.messages:
            parts.add(m.content)
            parts.update(json.dumps(c.arguments, ensure_ascii=False) for c in m.tool_calls)
        parts.update(f"{t.name} {t.description}" for t in r.tools)
        parts.add(json.dumps(r.response_schema, ensure_ascii=False))
    return "\n".join(sorted(parts))


def _future_text(
    blob: str, event: Event, cutoff: datetime, first_seen: dict[tuple[str, ...], datetime]
) -> set[tuple[str, ...]]:
    """8-grams of ``blob`` found only in documents dated at or after ``cutoff``."""
    question = _shingles(
        f"Question: {event.title}\nDescription: {event.description}\n"
        f"Resolution criteria: {event.resolution_criteria}"
    )
    return {
        sh for sh in _shingles(blob) - question if sh in first_seen and first_seen[sh] >= cutoff
    }


@pytest.fixture(scope="module")
def first_seen(world: World) -> dict[tuple[str, ...], datetime]:
    """Each 8-gram of the corpus with the earliest instant a document containing it appeared."""
    out: dict[tuple[str, ...], datetime] = {}
    for d in world.documents:
        for sh in _shingles(f"{d.title}. {d.text}") | _shingles(d.title) | _shingles(d.text):
            if sh not in out or d.timestamp < out[sh]:
                out[sh] = d.timestamp
    return out


@pytest.fixture(scope="module")
def audit_run(
    world: World, world_index: EmbeddedIndex, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, list[ChatRequest]]]:
    specs = []
    for i, (name, setting, args) in enumerate(CASES):
        model = use(f"audit{i}", Scripted())
        label = f"{name}-{i}"
        specs.append(agent_spec(name, setting=setting, label=label, model=model, **args))  # type: ignore[arg-type]
    out = tmp_path_factory.mktemp("audit") / "run.jsonl"
    cfg = RunConfig(agents=tuple(specs))
    run_benchmark(world.dataset, world_index, cfg, out, prompts=prompts_for(specs), progress=False)
    return out, {f"audit{i}": list(BUILT[f"audit{i}"].requests) for i in range(len(CASES))}


def test_no_request_reveals_the_future_or_prices(
    world: World,
    audit_run: tuple[Path, dict[str, list[ChatRequest]]],
    first_seen: dict[tuple[str, ...], datetime],
) -> None:
    path, requests = audit_run
    log = read_run_log(path)
    docs = {d.id: d for d in world.documents}
    # A canary reveals an event's outcome after it resolved (as in the world's own audit); one of
    # another event that resolved before the cutoff is public history, not a leak.
    canaries: dict[str, list[str]] = {}
    for cid in world.canary_ids:
        for ev_id, res in world.dataset.resolutions.items():
            if res.label in docs[cid].text and docs[cid].timestamp > res.resolved_at:
                canaries.setdefault(ev_id, []).append(cid)
    assert canaries
    cursor = dict.fromkeys(requests, 0)
    leaks: list[str] = []
    prices_seen = 0
    searched = 0
    for rec in log.steps:
        index = int(rec.agent.rsplit("-", 1)[1])
        name = CASES[index][0]
        key = f"audit{index}"
        n = rec.episode.usage.model_calls
        step_requests = requests[key][cursor[key] : cursor[key] + n]
        cursor[key] += n
        assert len(step_requests) == n >= 1
        blob = _blob(step_requests)
        where = f"{rec.agent}/{rec.event_id}#{rec.step_index}"
        future = _future_text(blob, world.dataset.event(rec.event_id), rec.cutoff, first_seen)
        if future:
            leaks.append(f"{where}: future text {' '.join(next(iter(future)))!r}")
        for doc_id in set(_DOC_ID.findall(blob)):
            if docs[doc_id].timestamp >= rec.cutoff:
                leaks.append(f"{where}: future document id {doc_id}")
        searched += bool(_DOC_ID.search(blob))
        for cid in canaries.get(rec.event_id, []):
            if cid in blob or docs[cid].text in blob:
                leaks.append(f"{where}: canary {cid}")
        resolution = world.dataset.resolutions[rec.event_id]
        if "resolved_at" in blob or resolution.resolved_at.isoformat() in blob:
            leaks.append(f"{where}: resolution record")
        prices = {
            repr(p)
            for b in world.dataset.beliefs_before(rec.event_id, resolution.resolved_at)
            for p in b.probs.values()
            if len(repr(p)) > 6
        }
        shown = sum(p in blob for p in prices)
        if name == "tool-agent-market":
            prices_seen += shown
        elif shown:
            leaks.append(f"{where}: {shown} market prices without market access")
    assert not leaks, "\n".join(leaks[:20])
    assert all(cursor[k] == len(v) for k, v in requests.items())
    # The audit audited something: documents were retrieved and the market agent saw prices.
    assert searched > len(log.steps) // 3
    assert prices_seen > 0


def test_audit_detects_a_leak(first_seen: dict[tuple[str, ...], datetime], world: World) -> None:
    """The check is not vacuous: a late document's snippet in a tool result is flagged at an
    earlier cutoff, and not at a cutoff after it."""
    late = sorted(world.documents, key=lambda d: d.timestamp)[-10]
    event = world.dataset.event(world.dataset.event_ids_with_steps()[0])
    result = json.dumps([{"id": late.id, "snippet": late.text[20:200]}], ensure_ascii=False)
    request = ChatRequest(messages=(Message(role="tool", content=result, tool_call_id="c"),))
    blob = _blob([request])
    early = min(d.timestamp for d in world.documents)
    assert _future_text(blob, event, early, first_seen)
    assert not _future_text(blob, event, late.timestamp.replace(year=2100), first_seen)
