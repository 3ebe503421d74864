"""Fixtures for the curation tests: the embedded world, its index on disk, a scripted judge
registered as a model provider (so the command line can name it)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from curate_judges import world_judge

from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.models import ScriptedModel, providers, register_provider
from pastcast.world import World, build_world


@pytest.fixture(scope="session")
def world() -> World:
    return build_world(0)


@pytest.fixture(scope="session")
def world_index_dir(world: World, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("world-index") / "index"
    EmbeddedIndex.build(world.documents, out)
    return out


@pytest.fixture
def judge_provider() -> Iterator[list[ScriptedModel]]:
    """``curate-test:world`` builds a scripted judge; the models built are listed."""
    built: list[ScriptedModel] = []

    def factory(rest: str) -> ScriptedModel:
        model = ScriptedModel(responder=world_judge, name=f"curate-test:{rest}")
        built.append(model)
        return model

    register_provider("curate-test")(factory)
    yield built
    providers.remove("curate-test")
