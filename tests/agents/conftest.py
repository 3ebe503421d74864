"""Fixtures for the model-driven agent tests: the embedded world and a clean model registry."""

from __future__ import annotations

from collections.abc import Iterator

import agent_scripts
import pytest

from pastcast.agents import clear_models
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.world import World, build_world


@pytest.fixture(scope="session")
def world() -> World:
    return build_world(0)


@pytest.fixture(scope="session")
def world_index(world: World) -> EmbeddedIndex:
    return EmbeddedIndex.in_memory(world.documents)


@pytest.fixture(autouse=True)
def _fresh_models() -> Iterator[None]:
    clear_models()
    yield
    clear_models()
    agent_scripts.RESPONDERS.clear()
    agent_scripts.BUILT.clear()
