"""Phrase pools of the news generator, the question templates and the parts of invented names:
data in ``phrases.toml`` beside this module, read once here. The cue phrases follow one fixed
convention (docs/world.md, "Cue convention") so that simple readers can rely on plain English
cues.
"""

from __future__ import annotations

from typing import Any

from pastcast.textfiles import package_toml

_TEXT = package_toml("pastcast.world", "phrases.toml")
_NEWS = _TEXT["news"]


def _pairs(rows: list[list[str]]) -> tuple[tuple[str, str], ...]:
    return tuple((a, b) for a, b in rows)


POSITIVE_CUES: tuple[str, ...] = tuple(_TEXT["cues"]["positive"])
NEGATIVE_CUES: tuple[str, ...] = tuple(_TEXT["cues"]["negative"])
BINARY_POS: tuple[str, ...] = tuple(_NEWS["binary_pos"])
BINARY_NEG: tuple[str, ...] = tuple(_NEWS["binary_neg"])
MULTI_POS: tuple[str, ...] = tuple(_NEWS["multi_pos"])
MULTI_NEG: tuple[str, ...] = tuple(_NEWS["multi_neg"])
HEADLINE_SUFFIXES: tuple[str, ...] = tuple(_NEWS["headline_suffixes"])
ATTRIBUTIONS: tuple[str, ...] = tuple(_NEWS["attributions"])
FILLERS: tuple[str, ...] = tuple(_NEWS["fillers"])
DISTRACTORS = _pairs(_NEWS["distractors"])
"""Unrelated stories with fresh invented names: (title, text)."""
LOOKALIKES = _pairs(_NEWS["lookalikes"])
"""Stories that reuse an event's proper name ``{E}`` but are about something else."""
SOURCES = _pairs(_NEWS["sources"])
"""Fictional outlets: (name, url host)."""
BINARY_TEMPLATES: tuple[dict[str, Any], ...] = tuple(_TEXT["binary"])
MULTI_TEMPLATES: tuple[dict[str, Any], ...] = tuple(_TEXT["multi"])
NAME_PARTS: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in _TEXT["names"].items()}
"""Syllables and word endings of invented names (``_names``)."""
