"""docs/plugins.md lists every registry of pastcast: its public name, kind and entry-point group.
The registries are found in the source (each ``Registry(...)`` assigned to a name), so a new one
fails here until the page lists it."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "pastcast"
PAGE = ROOT / "docs" / "plugins.md"
CELL = re.compile(r"(?<!\\)\|")


@dataclass(frozen=True)
class Declared:
    """A registry as the source makes it."""

    variable: str
    kind: str
    group: str
    where: str


@dataclass(frozen=True)
class Listed:
    """A registry as the page's table lists it."""

    name: str
    kind: str
    group: str


def _literal(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def declared_in(source: str, where: str = "") -> list[Declared]:
    """Every ``NAME = Registry("kind", group=...)`` (annotated or not) at a module's top level."""
    found = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if not (
            isinstance(target, ast.Name)
            and isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "Registry"
        ):
            continue
        kind = _literal(value.args[0]) if value.args else _keyword(value, "kind")
        group = _literal(value.args[1]) if len(value.args) > 1 else _keyword(value, "group")
        assert kind is not None, f"{where}: {target.id}: a registry's kind is a literal"
        found.append(Declared(target.id, kind, group or f"pastcast.{kind}s", where))
    return found


def _keyword(call: ast.Call, name: str) -> str | None:
    return next((_literal(k.value) for k in call.keywords if k.arg == name), None)


def declared() -> list[Declared]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "Registry(" in text:
            out += declared_in(text, str(path.relative_to(ROOT)))
    return out


def listed(page: str) -> list[Listed]:
    """The rows of the page's registry table: ``| `pastcast.x.name` | kind | `group` | ...``."""
    rows = []
    for line in page.splitlines():
        if line.startswith("| `pastcast."):
            name, kind, group = (c.strip().strip("`") for c in CELL.split(line)[1:4])
            rows.append(Listed(name, kind, group))
    return rows


def problems(found: list[Declared], rows: list[Listed]) -> list[str]:
    by_kind = {row.kind: row for row in rows}
    out = []
    for reg in found:
        row = by_kind.get(reg.kind)
        if row is None:
            out.append(f"{reg.where}: registry {reg.variable} ({reg.kind}) is not in the table")
        elif row.group != reg.group or row.name.rsplit(".", 1)[-1] != reg.variable:
            out.append(f"{reg.where}: {reg.variable} ({reg.kind}, {reg.group}) listed as {row}")
    kinds = {reg.kind for reg in found}
    out += [f"{row.name} ({row.kind}): no such registry" for row in rows if row.kind not in kinds]
    return out


def test_every_registry_is_on_the_plugins_page() -> None:
    found = declared()
    assert len(found) >= 14, "the scan found too few registries"
    assert problems(found, listed(PAGE.read_text(encoding="utf-8"))) == []


def test_the_check_sees_a_missing_or_wrong_row() -> None:
    source = (
        'widgets: Registry[int] = Registry("widget")\n'
        'gadgets = Registry("gadget", group="pastcast.gizmos")\n'
    )
    found = declared_in(source, "m.py")
    assert [(r.variable, r.kind, r.group) for r in found] == [
        ("widgets", "widget", "pastcast.widgets"),
        ("gadgets", "gadget", "pastcast.gizmos"),
    ]
    page = "| `pastcast.x.widgets` | widget | `pastcast.widgets` | `f() -> int \\| None` | |\n"
    assert problems(found, listed(page)) == ["m.py: registry gadgets (gadget) is not in the table"]
    wrong = page + "| `pastcast.x.gadgets` | gadget | `pastcast.gadgets` | | |\n"
    assert len(problems(found, listed(wrong))) == 1
    stale = page + "| `pastcast.x.gadgets` | gadget | `pastcast.gizmos` | | |\n"
    stale += "| `pastcast.x.olds` | old | `pastcast.olds` | | |\n"
    assert problems(found, listed(stale)) == ["pastcast.x.olds (old): no such registry"]
