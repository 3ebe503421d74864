"""The world's corpus source: the world registers it (the corpus never imports the world), on
import and through the entry point pyproject declares, which loads it in a process that imported
only the corpus."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _declared_sources() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    sources: dict[str, str] = project.get("entry-points", {}).get("pastcast.sources", {})
    return sources


def test_pyproject_declares_the_world_source() -> None:
    from pastcast.corpus.sources import sources
    from pastcast.world import world_source

    value = _declared_sources().get("world")
    assert value == "pastcast.world:world_source"
    loaded = EntryPoint("world", value, "pastcast.sources").load()
    assert loaded is world_source and sources.get("world").factory is world_source


def test_the_world_source_loads_through_its_entry_point(tmp_path: Path) -> None:
    # The distribution as an install would describe it, from pyproject (installed metadata of an
    # editable install lags behind pyproject until it is installed again).
    info = tmp_path / "pastcast_declared-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pastcast-declared\nVersion: 0\n")
    lines = "\n".join(f"{k} = {v}" for k, v in _declared_sources().items())
    (info / "entry_points.txt").write_text(f"[pastcast.sources]\n{lines}\n")
    script = (
        "import sys\n"
        "from pastcast.corpus.sources import open_source\n"
        "assert 'pastcast.world' not in sys.modules\n"
        "run = open_source('world', '0,n_events=2,n_documents=30', screen=False)\n"
        "print(sum(1 for _ in run.documents))\n"
    )
    path = os.pathsep.join([str(tmp_path), str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 0


def test_the_installed_metadata_declares_the_world_source() -> None:
    # The editable install reads entry points from its installed metadata, not from pyproject.
    installed = {ep.name: ep.value for ep in entry_points(group="pastcast.sources")}
    missing = {k: v for k, v in _declared_sources().items() if installed.get(k) != v}
    assert not missing, (
        f"the installed pastcast lacks the entry points {missing} that pyproject.toml declares: "
        "install the checkout again (pip install -e .)"
    )
