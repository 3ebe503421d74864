"""The arena as a distribution on top of pastcast: every public name imports, its entry points
name what pastcast loads, and the root help lists `pastcast arena` without importing it."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import typer

import pastcast_arena

ARENA = Path(__file__).resolve().parents[1]


def test_every_public_name_imports() -> None:
    for name in pastcast_arena.__all__:
        assert getattr(pastcast_arena, name) is not None, name


def test_the_declared_entry_points_name_what_pastcast_loads() -> None:
    from pastcast_arena._cli import app
    from pastcast_arena._workflows import arena_sections

    project = tomllib.loads((ARENA / "pyproject.toml").read_text())["project"]
    groups = project["entry-points"]
    assert groups["pastcast.commands"] == {"arena": "pastcast_arena._cli:app"}
    assert groups["pastcast.report_sections"] == {
        "arena": "pastcast_arena._workflows:arena_sections"
    }
    assert isinstance(app, typer.Typer) and callable(arena_sections)
    # the root help's line is the distribution's summary: the group's own help, word for word
    assert project["description"] == app.info.help


def test_the_root_help_lists_the_arena_without_importing_it() -> None:
    code = (
        "import json, sys\n"
        "from pastcast.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, "--help"], capture_output=True, text=True, timeout=60
    )
    *help_lines, loaded = out.stdout.strip().splitlines()
    if "arena" not in "\n".join(help_lines):
        pytest.skip("the arena's entry points are not installed in this environment")
    assert not [m for m in json.loads(loaded) if m.startswith("pastcast_arena")]


def test_the_live_service_is_phases_given_one_context_not_mixins() -> None:
    """``LiveService`` composes its phases; none of them inherits another's fields, and each is
    built from the one ``LiveContext`` alone (a mixin base or a second argument fails here)."""
    import inspect

    from pastcast_arena._live import LiveService
    from pastcast_arena._live_context import LiveContext
    from pastcast_arena._live_forecast import Forecasting, Reveals
    from pastcast_arena._live_outcomes import Outcomes
    from pastcast_arena._live_rounds import Discovery

    assert LiveService.__bases__ == (object,)
    for phase in (Discovery, Forecasting, Reveals, Outcomes):
        assert phase.__bases__ == (object,), phase
        params = list(inspect.signature(phase).parameters.values())
        assert [(p.name, p.annotation) for p in params] == [("ctx", "LiveContext")], phase
    assert LiveContext.__dataclass_params__.frozen  # type: ignore[attr-defined]
