"""Every ``pastcast.x.y`` (and the arena's ``pastcast_arena.x``) name the docs mention exists: a
moved or renamed function fails here instead of leaving the docs pointing at nothing. Read from
the source, not imported, so the check is quick and needs none of the extras (nor the arena
installed: its sources are in arena/src)."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = (ROOT / "src", ROOT / "arena" / "src")
DOCS = sorted([*(ROOT / "docs").rglob("*.md"), ROOT / "README.md", ROOT / "ARCHITECTURE.md"])
NAME = re.compile(r"(?<![\w./-])pastcast(?:_arena)?(?:\.[A-Za-z_]\w*)+")
FROM_IMPORT = re.compile(r"^\s*from (pastcast[\w.]*) import ([\w, ]+)$", re.MULTILINE)
REGISTRY = re.compile(r'Registry\(\s*"([^"]+)"(?:\s*,\s*(?:group=)?"([^"]+)")?')
GROUP = re.compile(r'_GROUP\s*=\s*"(pastcast\.\w+)"')  # a group read without a registry
PLACEHOLDERS = {"pastcast.X._y"}  # the package rule's own example


def _module_file(dotted: str) -> Path | None:
    for src in SOURCES:
        base = src.joinpath(*dotted.split("."))
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if path.is_file():
                return path
    return None


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _defined(path: Path, name: str) -> ast.AST | str | None:
    """The top-level definition of ``name`` in a module: the node, the module it is imported
    from (to look in next), or None."""
    for node in _tree(path).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name:
            return node
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return node
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return f"{node.module}.{alias.name}"
        if isinstance(node, ast.If):  # names defined under a condition (TYPE_CHECKING, ...)
            for child in ast.walk(node):
                if isinstance(child, ast.ImportFrom) and child.module:
                    for alias in child.names:
                        if (alias.asname or alias.name) == name:
                            return f"{child.module}.{alias.name}"
    return None


def _has_member(cls: ast.ClassDef, name: str) -> bool:
    for node in cls.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name:
            return True
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return not all(isinstance(b, ast.Name) and b.id in {"Record", "object"} for b in cls.bases)


def _resolves(dotted: str, depth: int = 0) -> bool:
    """Whether ``dotted`` names a pastcast module, a name defined in one, or a member of a class
    defined in one."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = _module_file(".".join(parts[:cut]))
        if path is None:
            continue
        rest = parts[cut:]
        if not rest:
            return True
        found = _defined(path, rest[0])
        if isinstance(found, str):  # imported: look where it comes from
            if not found.startswith("pastcast") or depth > 5:
                return True
            return _resolves(".".join([found, *rest[1:]]), depth + 1)
        if found is None:
            return False
        if len(rest) == 1 or not isinstance(found, ast.ClassDef):
            return True  # an attribute of a value (a registry's method, say) is not checked
        return _has_member(found, rest[1])
    return False


def _entry_point_groups() -> set[str]:
    """Registry entry-point groups (``pastcast.agents``...): names of groups, not modules."""
    out = set()
    for path in (p for src in SOURCES for p in src.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for kind, group in REGISTRY.findall(text):
            out.add(group or f"pastcast.{kind}s")
        out.update(GROUP.findall(text))
    return out


def _mentions() -> list[tuple[str, str]]:
    out = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        names = set(NAME.findall(text))
        for module, imported in FROM_IMPORT.findall(text):  # the examples' imports
            names |= {f"{module}.{n.strip()}" for n in imported.split(",") if n.strip()}
        out += [(path.name, name.rstrip(".")) for name in sorted(names)]
    return out


def test_every_pastcast_name_in_the_docs_exists() -> None:
    skip = _entry_point_groups() | PLACEHOLDERS
    missing = [f"{doc}: {name}" for doc, name in _mentions() if name not in skip]
    assert [m for m in missing if not _resolves(m.partition(": ")[2])] == []


def test_the_check_sees_a_name_that_does_not_exist() -> None:
    assert _resolves("pastcast.models.knowledge_cutoff")  # re-exported from a private module
    assert _resolves("pastcast.dataset.Dataset.event_at")  # a method
    assert _resolves("pastcast.corpus.embedded")  # a package
    assert not _resolves("pastcast.models.no_such_function")
    assert not _resolves("pastcast.markets.save_dataset")  # where the docs once put it
    assert not _resolves("pastcast.dataset.Dataset.no_such_method")
    assert _resolves("pastcast_arena.LiveService")  # the arena's, from its own sources
    assert not _resolves("pastcast.arena.LiveService")  # where the arena once was
