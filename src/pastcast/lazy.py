"""Package names imported on first use.

A package facade that re-exports names from many modules takes its module ``__getattr__`` and
``__dir__`` from ``lazy_exports``, so importing the package loads none of those modules: ``from
pastcast.app import run_plan`` loads what ``run_plan`` needs, not every workflow beside it. A
name is imported when first asked for and then kept in the package, so later look-ups are plain
attribute reads.

Where each name lives is written once, in the facade's ``if TYPE_CHECKING:`` block: its
``from MODULE import NAME`` lines are what the type checker reads, and what is read here, on the
first look-up, as the map of a name to its module. A facade without its own ``__all__`` gets
those names as its ``__all__``.
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False  # not typing's: ``import pastcast`` uses this module and must stay light
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["lazy_exports", "type_checking_imports"]


def type_checking_imports(source: str) -> dict[str, str]:
    """name -> module of the ``from MODULE import NAME`` lines in the top-level ``if
    TYPE_CHECKING:`` blocks of ``source`` (a module's text)."""
    import ast  # read once, on a facade's first look-up: not with ``import pastcast``

    out: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for child in node.body:
                if isinstance(child, ast.ImportFrom) and child.module:
                    out.update({a.asname or a.name: child.module for a in child.names})
    return out


def lazy_exports(package: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``, whose ``TYPE_CHECKING``
    imports name the modules that define its lazy names."""
    found: dict[str, str] = {}

    def names() -> Mapping[str, str]:
        if not found:
            with open(sys.modules[package].__file__ or "", encoding="utf-8") as file:
                found.update(type_checking_imports(file.read()))
        return found

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            value: Any = sorted(names())
        elif (module := names().get(name)) is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        else:
            value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # later look-ups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names()))

    return __getattr__, __dir__
