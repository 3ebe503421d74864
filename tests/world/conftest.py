from __future__ import annotations

import pytest

from pastcast.world import World, build_world


@pytest.fixture(scope="session")
def world() -> World:
    """The default world (seed 0), built once for the whole session."""
    return build_world(0)
