"""Every ``pastcast.x.y`` name the docs mention exists: a moved or renamed function fails here
instead of leaving the docs pointing at nothing."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([*(ROOT / "docs").glob("*.md"), ROOT / "README.md", ROOT / "ARCHITECTURE.md"])
NAME = re.compile(r"(?<![\w./-])pastcast(?:\.[A-Za-z_]\w*)+")
PLACEHOLDERS = {"pastcast.X._y"}  # the package rule's own example
FROM_IMPORT = re.compile(r"^\s*from (pastcast[\w.]*) import ([\w, ]+)$", re.MULTILINE)


def _entry_point_groups() -> set[str]:
    """Registry entry-point groups (``pastcast.agents``...): names of groups, not modules."""
    importlib.import_module("pastcast")
    for module in ("agents", "corpus", "corpus.dense", "curate", "markets", "models", "runner"):
        importlib.import_module(f"pastcast.{module}")
    importlib.import_module("pastcast.arena")
    importlib.import_module("pastcast.reports.figures")
    from pastcast.registry import all_registries

    return {r.group for r in all_registries()}


def _resolves(dotted: str) -> bool | None:
    """Whether ``dotted`` names a module or an attribute of one; None where an optional
    dependency it needs is not installed."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            value: object = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and not exc.name.startswith("pastcast"):
                return None  # an extra that is not installed here
            continue
        for attr in parts[cut:]:
            if not hasattr(value, attr):
                return False
            value = getattr(value, attr)
        return True
    return False


def _mentions() -> list[tuple[str, str]]:
    out = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        names = set(NAME.findall(text))
        for module, imported in FROM_IMPORT.findall(text):  # the examples' imports
            names |= {f"{module}.{n.strip()}" for n in imported.split(",") if n.strip()}
        for name in sorted(names):
            out.append((path.name, name.rstrip(".")))
    return out


def test_every_pastcast_name_in_the_docs_exists() -> None:
    groups = _entry_point_groups()
    missing = []
    for doc, name in _mentions():
        if name in groups or name in PLACEHOLDERS:
            continue
        if _resolves(name) is False:
            missing.append(f"{doc}: {name}")
    assert missing == []


def test_the_check_sees_a_name_that_does_not_exist() -> None:
    assert _resolves("pastcast.models.knowledge_cutoff") is True
    assert _resolves("pastcast.models.no_such_function") is False
    with pytest.raises(AssertionError):
        assert _resolves("pastcast.dataset.load_from_nowhere")
