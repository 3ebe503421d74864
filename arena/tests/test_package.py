"""The arena as a distribution on top of pastcast: its names load on first use (listing its
command in the root help imports nothing heavy), every public name imports, and its entry points
are those pastcast reads."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import pastcast_arena

ARENA = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "pydantic", "pyarrow", "scipy", "web3", "eth_account", "pastcast.app")


def _loaded(code: str) -> set[str]:
    probe = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_the_entry_points_load_nothing_heavy() -> None:
    loaded = _loaded("import pastcast_arena\nfrom pastcast_arena._entry import command")
    assert {m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY} == set()


def test_every_public_name_imports() -> None:
    for name in pastcast_arena.__all__:
        assert getattr(pastcast_arena, name) is not None, name
    assert set(pastcast_arena.__all__) <= set(dir(pastcast_arena))
    with pytest.raises(AttributeError):
        pastcast_arena.no_such_name  # noqa: B018


def test_the_declared_entry_points_name_what_pastcast_loads() -> None:
    from pastcast_arena import _entry

    project = tomllib.loads((ARENA / "pyproject.toml").read_text())["project"]
    groups = project["entry-points"]
    assert groups["pastcast.commands"] == {"arena": "pastcast_arena._entry:command"}
    assert groups["pastcast.report_sections"] == {"arena": "pastcast_arena._entry:report_sections"}
    group = _entry.command()
    assert sorted(c.name for c in group.registered_commands) == [
        "calibrate", "commit-hash", "compile", "live", "replay", "report", "serve", "simulate",
        "verify",
    ]  # fmt: skip
