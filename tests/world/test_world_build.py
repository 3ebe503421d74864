"""Determinism, sizes, configuration and record validity of the built world."""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import pytest

from pastcast.records import DailyBelief, Document, Event, Resolution, StepSpec
from pastcast.world import World, WorldConfig, build_world


def _all_json(w: World) -> str:
    ds = w.dataset
    parts = [ds.id]
    parts += [e.model_dump_json() for e in ds.events]
    parts += [ds.resolutions[e.id].model_dump_json() for e in ds.events]
    parts += [b.model_dump_json() for e in ds.events for b in ds.beliefs[e.id]]
    parts += [s.model_dump_json() for s in ds.steps]
    parts += [d.model_dump_json() for d in w.documents]
    parts += sorted(w.canary_ids)
    return "\n".join(parts)


def test_same_seed_gives_identical_records(world: World) -> None:
    assert _all_json(build_world(0)) == _all_json(world)


def test_different_seed_differs(world: World) -> None:
    other = build_world(1)
    assert other.dataset.id == "world-v2:seed=1"
    assert [e.title for e in other.dataset.events] != [e.title for e in world.dataset.events]
    assert _all_json(other) != _all_json(world)


def test_default_world_builds_fast() -> None:
    # this process's CPU time: a busy machine stretches the wall clock, not the work
    t0 = time.process_time()
    build_world(7)
    assert time.process_time() - t0 < 3.0


def test_counts_in_range(world: World) -> None:
    ds = world.dataset
    assert ds.id == "world-v2:seed=0"
    assert len(ds.events) == 50
    kinds = Counter(e.kind for e in ds.events)
    assert 12 <= kinds["multi"] <= 18 and kinds["binary"] + kinds["multi"] == 50
    assert len({e.category for e in ds.events}) >= 5
    assert len({e.title for e in ds.events}) == 50
    for e in ds.events:
        life = (e.close_time - e.open_time).days
        assert 7 <= life <= 121, e.id
        assert e.open_time.year == 2024 and e.close_time.year == 2024
        assert e.tags and e.category and e.description and e.resolution_criteria
        assert ds.resolutions[e.id].label in e.labels
        assert ds.resolutions[e.id].resolved_at <= e.close_time
        if e.kind == "multi":
            assert 3 <= len(e.labels) <= 5
    lifetimes = [(e.close_time - e.open_time).days for e in ds.events]
    assert min(lifetimes) < 20 and max(lifetimes) > 80  # both short and long questions
    assert any(ds.resolutions[e.id].resolved_at < e.close_time for e in ds.events)
    assert abs(len(world.documents) - 5000) <= 250
    assert len({d.id for d in world.documents}) == len(world.documents)
    assert 12 <= len(world.canary_ids) <= 22
    n_evidence = sum(len(v) for v in world.evidence.values())
    assert 0.6 <= n_evidence / len(world.documents) <= 0.75
    assert all(world.evidence[e.id] for e in ds.events)


def test_duplicates_are_republished_later_by_another_source(world: World) -> None:
    by_text: dict[str, list[Document]] = {}
    for d in world.documents:
        by_text.setdefault(d.text.split(" This article first appeared")[0], []).append(d)
    repeats = [g for g in by_text.values() if len(g) > 1]
    n_repeated = sum(len(g) - 1 for g in repeats)
    assert 0.02 * len(world.documents) <= n_repeated <= 0.08 * len(world.documents)
    for group in repeats:
        assert len({d.source for d in group}) > 1 or len(group) > 2


def test_config_changes_are_part_of_the_id() -> None:
    small = WorldConfig(n_events=10, n_documents=400)
    w = build_world(3, small)
    assert w.dataset.id.startswith("world-v2:seed=3:config=")
    assert len(w.dataset.events) == 10
    assert abs(len(w.documents) - 400) <= 40
    other = build_world(3, WorldConfig(n_events=10, n_documents=500))
    assert other.dataset.id != w.dataset.id
    assert WorldConfig().short_hash() is None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_events": 0},
        {"multi_fraction": 1.5},
        {"min_lifetime_days": 3},
        {"accuracy_end": 1.0},
        {"max_options": 2},
    ],
)
def test_bad_config_is_rejected(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="invalid WorldConfig"):
        WorldConfig(**kwargs)  # type: ignore[arg-type]


def test_records_revalidate_from_json(world: World) -> None:
    ds = world.dataset
    for e in ds.events:
        assert Event.model_validate_json(e.model_dump_json()) == e
        res = ds.resolutions[e.id]
        assert Resolution.model_validate_json(res.model_dump_json()) == res
        for b in ds.beliefs[e.id]:
            assert DailyBelief.model_validate_json(b.model_dump_json()) == b
    for s in ds.steps:
        assert StepSpec.model_validate_json(s.model_dump_json()) == s
    for d in world.documents[::50]:
        assert Document.model_validate_json(d.model_dump_json()) == d


def test_write_jsonl_round_trips(world: World, tmp_path: Path) -> None:
    path = world.write_jsonl(tmp_path / "sub" / "docs.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(world.documents)
    assert not list(path.parent.glob("*.tmp"))
    for line, doc in zip(lines, world.documents, strict=True):
        row = json.loads(line)
        assert set(row) == {"id", "timestamp", "title", "text", "url", "source"}
        assert row["timestamp"].endswith("Z")
        assert Document(**row) == doc


def test_summary_is_consistent(world: World) -> None:
    s = world.summary()
    assert s["events"] == 50
    assert sum(s["by_kind"].values()) == 50
    assert sum(s["by_category"].values()) == 50
    assert sum(s["binary_labels"].values()) == s["by_kind"]["binary"]
    assert s["documents"] == s["evidence_documents"] + s["other_documents"] + s["canaries"]
    assert s["steps"] == len(world.dataset.steps)
    assert s["market_brier_at_steps"] < s["uniform_brier_at_steps"]
    json.dumps(s)
