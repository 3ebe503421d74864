"""The text that names an embedded world wherever a dataset or corpus is given as text: the
command line, plans, the integrations. ``world[:SEED][,FIELD=VALUE...]``: the seed (0 when
omitted) and any ``WorldConfig`` field, e.g. ``world:3,hindsight_fraction=0.2,n_events=80``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import date

from pastcast.world._config import WORLD_VERSION, WorldConfig

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pastcast.world._world import World

WORLD_SPEC = "world[:SEED][,FIELD=VALUE...]"

_PARSERS: dict[str, tuple[Callable[[str], object], str]] = {
    "int": (int, "an integer"),
    "float": (float, "a number"),
    "date": (date.fromisoformat, "an ISO date (YYYY-MM-DD)"),
}


def is_world_spec(spec: str) -> bool:
    """Whether ``spec`` names the embedded world (and not a path or another source)."""
    return spec == "world" or spec.startswith(("world:", "world,"))


def parse_world_spec(spec: str) -> tuple[int, WorldConfig]:
    """The seed and configuration ``spec`` names; ``ValueError`` with one line naming the part
    that is wrong."""
    head, *settings = spec.split(",")
    if head != "world" and not head.startswith("world:"):
        raise ValueError(f"{spec!r} does not name the embedded world ({WORLD_SPEC})")
    seed_text = head.partition(":")[2] or "0"
    try:
        seed = int(seed_text)
    except ValueError:
        raise ValueError(f"{spec!r}: the world seed must be an integer (e.g. world:3)") from None
    fields = {f.name: str(f.type) for f in dataclasses.fields(WorldConfig)}
    values: dict[str, object] = {}
    for item in settings:
        name, eq, text = (part.strip() for part in item.partition("="))
        if not eq or name not in fields:
            raise ValueError(
                f"{spec!r}: {item!r} is not FIELD=VALUE of a world setting "
                f"({', '.join(fields)}; docs/world.md)"
            )
        if name in values:
            raise ValueError(f"{spec!r}: {name} is set twice")
        parse, what = _PARSERS[fields[name]]
        try:
            values[name] = parse(text)
        except ValueError:
            raise ValueError(f"{spec!r}: {name}={text!r} is not {what}") from None
    try:
        config = WorldConfig(**values)  # type: ignore[arg-type]
    except ValueError as exc:
        raise ValueError(f"{spec!r}: {exc}") from None
    return seed, config


def world_from_spec(spec: str) -> World:
    """The embedded world ``spec`` names, built (``ValueError`` as ``parse_world_spec``)."""
    from pastcast.world._build import build_world  # the simulation loads when a world is built

    seed, config = parse_world_spec(spec)
    return build_world(seed, config)


def world_named_by(dataset_id: str) -> World | None:
    """The world a dataset id names (``world-v2:seed=N``, as a run log records it), rebuilt; None
    for any other id, a world with a changed configuration included (its id holds only a hash
    of the settings, so it must be named with ``world_from_spec``)."""
    from pastcast.world._build import build_world  # the simulation loads when a world is built

    prefix = f"{WORLD_VERSION}:seed="
    seed = dataset_id.removeprefix(prefix)
    return build_world(int(seed)) if seed != dataset_id and seed.isdigit() else None
