"""Plan files (TOML, YAML, JSON): a workflow's record read from one (``load_record``) or written
to one (``write_record``). Reading refuses what would hang, recurse or be read silently wrong
(docs/runs.md, "Experiment plans"), in one line naming the file."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from pastcast import safejson
from pastcast.errors import FieldError
from pastcast.owned import check_new_file, write_new_file
from pastcast.records import Record
from pastcast.textfiles import read_text_file
from pastcast.validation import first_problem

R = TypeVar("R", bound=Record)


MAX_PLAN_DEPTH = 64
"""The deepest nesting of tables and lists a plan may have (a plan nests a few levels)."""
MAX_PLAN_VALUES = 100_000
"""The most values a plan may hold, counting each use of a YAML alias in full."""


class _PlanShapeError(ValueError):
    """A plan file that is refused before or while its syntax is read."""


def _load_yaml(text: str) -> Any:
    """YAML refused nested deeper than ``MAX_PLAN_DEPTH`` before it is composed (the composer
    recurses once per level) or with a key given twice (PyYAML keeps the last silently)."""
    import yaml  # here: a run from options reads no YAML (10 ms of its start-up)

    class UniqueKeyLoader(yaml.SafeLoader):
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

    try:
        depth = 0
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            depth += isinstance(event, yaml.CollectionStartEvent)
            depth -= isinstance(event, yaml.CollectionEndEvent)
            if depth > MAX_PLAN_DEPTH:
                raise _PlanShapeError(f"nested deeper than {MAX_PLAN_DEPTH} levels")
        return yaml.load(text, Loader=UniqueKeyLoader)  # a SafeLoader
    except yaml.YAMLError as exc:
        raise ValueError(str(exc)) from None


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
        return _load_yaml(text)
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
    except ValueError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise FieldError("", f"{path}: not valid {kind}: {first}") from None
    return raw


def load_record(kind: type[R], path: str | Path) -> R:
    """The record ``kind`` in the plan file at ``path``; ``FieldError`` naming the file and the
    field of the first problem (``plan.toml: field budgets.max_tool_calls: ...``)."""
    p = Path(path)
    raw = read_plan_file(p)
    if not isinstance(raw, dict):
        raise FieldError("", f"{p}: expected a table of settings at the top level")
    try:
        return kind.model_validate(raw)
    except ValidationError as exc:
        raise FieldError("", first_problem(exc, str(p))) from None


def pruned(value: Any, drop: Callable[[str, Any], bool]) -> Any:
    """A JSON value without the entries of its objects, at any depth, that ``drop(key, value)``."""
    if isinstance(value, dict):
        return {k: pruned(v, drop) for k, v in value.items() if not drop(k, v)}
    if isinstance(value, list):
        return [pruned(v, drop) for v in value]
    return value


def write_record(record: Record, path: str | Path) -> Path:
    """``record`` as a new plan file at ``path`` (JSON, YAML, else TOML by its suffix), every
    field written, so it reads back as the same record; TOML has no null, so a null field is
    left out and a record that then reads back otherwise is refused (``FieldError``)."""
    p = Path(path)
    check_new_file(p)
    data = record.model_dump(mode="json")
    if p.suffix == ".json":
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    elif p.suffix in (".yaml", ".yml"):
        import yaml

        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    else:
        import tomli_w

        text = tomli_w.dumps(pruned(data, lambda _, v: v is None))
        if type(record).model_validate(tomllib.loads(text)) != record:
            raise FieldError("", f"{p}: a null field of this record cannot be written as TOML")
    write_new_file(p, text.encode("utf-8"))
    return p
