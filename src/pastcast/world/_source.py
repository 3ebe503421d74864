"""The embedded world's documents as a corpus source (``pastcast corpus build world:SEED``).

The world sits above the corpus, so the corpus never imports it: the world registers this source
itself, by reference when it is imported (``pastcast.world``) and through pastcast's entry point
in the ``pastcast.sources`` group (``pyproject.toml``), which loads it the first time the sources
are listed or asked for it.
"""

from __future__ import annotations

from pathlib import Path

from pastcast.corpus.sources import SourceRun
from pastcast.errors import FieldError
from pastcast.world._spec import world_from_spec


def world_source(path: Path) -> SourceRun:
    """The embedded world's documents: ``world:SEED[,FIELD=VALUE...]``."""
    try:
        world = world_from_spec(f"world:{path}")
    except ValueError as exc:
        raise FieldError("", str(exc)) from None
    return SourceRun(iter(world.documents))
