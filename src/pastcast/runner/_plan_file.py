"""Reading a plan file (TOML, YAML, JSON) into plain values, refusing in one line naming the file
what would hang, recurse or be read silently wrong: a key given twice (YAML, JSON; TOML refuses it
itself), nesting deeper than ``MAX_PLAN_DEPTH`` levels, YAML aliases expanding to more than
``MAX_PLAN_VALUES`` values."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import yaml

from pastcast import safejson
from pastcast.errors import FieldError
from pastcast.textfiles import read_text_file

__all__ = ["MAX_PLAN_DEPTH", "MAX_PLAN_VALUES", "FieldError", "read_plan_file"]


MAX_PLAN_DEPTH = 64
"""The deepest nesting of tables and lists a plan may have (a plan nests a few levels)."""
MAX_PLAN_VALUES = 100_000
"""The most values a plan may hold, counting each use of a YAML alias in full."""


class _PlanShapeError(ValueError):
    """A plan file that is refused before or while its syntax is read."""


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML whose mappings refuse a key given twice (PyYAML keeps the last silently)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # "<<: *defaults": merged keys may be overridden
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:
                continue  # an unhashable key: refused by PyYAML itself
            if duplicate:
                line = key_node.start_mark.line + 1
                raise _PlanShapeError(f"key {key!r} is given twice (line {line})")
        return super().construct_mapping(node, deep=deep)


def _yaml_depth(text: str) -> None:
    """Refuse YAML nested deeper than ``MAX_PLAN_DEPTH`` before it is composed (the composer
    recurses once per level)."""
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_PLAN_DEPTH:
                raise _PlanShapeError(f"nested deeper than {MAX_PLAN_DEPTH} levels")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _PlanShapeError(f"key {key!r} is given twice")
        out[key] = value
    return out


def _check_shape(value: Any) -> None:
    """Depth and size of a loaded plan, walked without recursion (YAML aliases share values,
    which validating would copy out in full)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    count = 0
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > MAX_PLAN_VALUES:
            raise _PlanShapeError(f"holds more than {MAX_PLAN_VALUES} values")
        if depth > MAX_PLAN_DEPTH:
            raise _PlanShapeError(f"nested deeper than {MAX_PLAN_DEPTH} levels")
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)


def _parse(path: Path, text: str) -> Any:
    if path.suffix in (".yaml", ".yml"):
        _yaml_depth(text)
        return yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader
    if path.suffix == ".json":
        return safejson.loads(text, object_pairs_hook=_unique_pairs)
    return tomllib.loads(text)  # TOML itself refuses a key given twice


def read_plan_file(path: Path) -> Any:
    """The plan file's values (not yet validated); ``FieldError`` naming the file otherwise."""
    try:
        text = read_text_file(path)
    except OSError as exc:
        raise FieldError("", f"{path}: cannot read the plan ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise FieldError("", f"{path}: not UTF-8 text (byte {exc.start})") from None
    kind = path.suffix.lstrip(".").upper() or "TOML"
    try:
        raw = _parse(path, text)
        _check_shape(raw)
    except _PlanShapeError as exc:
        raise FieldError("", f"{path}: not a plan: {exc}") from None
    except RecursionError:
        raise FieldError("", f"{path}: not a plan: nested too deeply") from None
    except (ValueError, yaml.YAMLError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FieldError("", f"{path}: not valid {kind}: {first}") from None
    return raw
