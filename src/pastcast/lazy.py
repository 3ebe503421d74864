"""Package names imported on first use.

A package facade that re-exports names from many modules lists where each lives (``_WHERE``:
name -> module) and takes its module ``__getattr__`` and ``__dir__`` from ``lazy_exports``, so
importing the package loads none of those modules: ``from pastcast.app import run_plan`` loads
what ``run_plan`` needs, not every workflow beside it. A name is imported when first asked for
and then kept in the package, so later look-ups are plain attribute reads.
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False  # not typing's: ``import pastcast`` uses this module and must stay light
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, where: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package``, whose names ``where`` maps to
    the modules that define them."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # later look-ups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__
