"""Install a real third-party plugin for a test: a package and its ``*.dist-info`` directory
(with ``entry_points.txt``) under a temporary folder put on ``sys.path``, exactly as pip would
leave an installed distribution."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest


def install_plugin(
    root: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    dist: str,
    modules: Mapping[str, str],
    entry_points: Mapping[str, Mapping[str, str]],
    summary: str = "",
) -> None:
    """Write ``modules`` (dotted name -> source) and a distribution ``dist`` declaring
    ``entry_points`` (group -> name -> ``module:attr``) and its one-line ``summary``, then put
    ``root`` first on sys.path."""
    for dotted, source in modules.items():
        parts = dotted.split(".")
        folder = root.joinpath(*parts[:-1])
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(1, len(parts)):
            init = root.joinpath(*parts[:i], "__init__.py")
            if not init.exists():
                init.write_text("")
        (folder / f"{parts[-1]}.py").write_text(textwrap.dedent(source))
    info = root / f"{dist}-0.1.dist-info"
    info.mkdir()
    described = f"Summary: {summary}\n" if summary else ""
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n{described}"
    )
    sections = []
    for group, names in entry_points.items():
        lines = "\n".join(f"{name} = {value}" for name, value in names.items())
        sections.append(f"[{group}]\n{lines}\n")
    (info / "entry_points.txt").write_text("\n".join(sections))
    monkeypatch.syspath_prepend(str(root))


ARENA_MISSING = "the arena is not installed (its distribution in arena/: pip install -e arena)"


def plugin_command(name: str) -> bool:
    """Whether an installed plugin adds the command ``name`` to the CLI (``arena``: the arena's
    distribution; the core's tests run without it, skipping what needs it)."""
    from importlib.metadata import entry_points

    return any(ep.name == name for ep in entry_points(group="pastcast.commands"))
