"""The embedded default world: a seeded simulation of forecasting questions, markets and news.

``build_world(seed)`` returns the events with their resolutions, daily market beliefs and a
default forecast schedule (a ``Dataset``), plus a dated news corpus in which articles carry the
latent evidence, distractors and re-publications add noise, and planted hindsight articles
(``canary_ids``) let leak audits check that nothing dated after a resolution reaches an agent.
See docs/world.md for what is simulated and how.

Importing the package registers the world's corpus source (``world:SEED``, by reference) and
loads the simulation only when a world is first built or one of its names below is first used.
"""

from __future__ import annotations

from pastcast.corpus.sources import sources
from pastcast.lazy import lazy_exports
from pastcast.world._config import WORLD_VERSION, WorldConfig
from pastcast.world._spec import (
    WORLD_SPEC,
    is_world_spec,
    parse_world_spec,
    world_from_spec,
    world_named_by,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pastcast.world._build import build_world
    from pastcast.world._phrases import NEGATIVE_CUES, POSITIVE_CUES
    from pastcast.world._source import world_source
    from pastcast.world._steps import default_steps
    from pastcast.world._world import World

__all__ = [
    "NEGATIVE_CUES",
    "POSITIVE_CUES",
    "WORLD_SPEC",
    "WORLD_VERSION",
    "World",
    "WorldConfig",
    "build_world",
    "default_steps",
    "is_world_spec",
    "parse_world_spec",
    "world_from_spec",
    "world_named_by",
    "world_source",
]

# The world sits above the corpus, so it registers its own source (see ``_source``).
sources.add("world", "pastcast.world._source:world_source")

__getattr__, __dir__ = lazy_exports(__name__)
