"""What a test registers is gone before the next test (the autouse fixture in conftest.py)."""

from __future__ import annotations

from pastcast.markets import schedules
from pastcast.models import knowledge_cutoffs, register_knowledge_cutoff
from pastcast.registry import Registry, all_registries

LEAK = "registered-by-an-earlier-test"


def _factory() -> str:
    return "built"


def test_a_test_registers_into_a_shared_registry() -> None:
    schedules.add(LEAK, _factory)  # type: ignore[arg-type]
    assert LEAK in schedules


def test_the_next_test_does_not_see_it() -> None:
    # Runs after the one above (file order): without the fixture the entry would still be here.
    assert LEAK not in schedules


def test_a_registry_restores_its_snapshot() -> None:
    registry: Registry[str] = Registry("probe_for_test")
    registry.add("kept", _factory)
    saved = registry.snapshot()
    registry.add("added", _factory)
    registry.remove("kept")
    registry.restore(saved)
    assert registry.names() == ("kept",) and registry in all_registries()


def test_a_test_registers_through_a_pastcast_helper() -> None:
    register_knowledge_cutoff("leaky-house-model", "2024-01-31")
    assert "leaky-house-model" in knowledge_cutoffs


def test_the_next_test_does_not_see_that_either() -> None:
    assert "leaky-house-model" not in knowledge_cutoffs
