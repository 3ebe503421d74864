"""Startup: ``import pastcast`` and ``pastcast --help`` load none of the heavy libraries, every
public name still imports, and the root help's lines match the commands' own help."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import typer

import pastcast
from pastcast.cli import app
from pastcast.cli._app import COMMANDS, load_command, plugin_commands

HEAVY = ("numpy", "pydantic", "pyarrow", "scipy", "numba", "openai", "typer", "rich", "click")

PROBE = """
import json, sys
{code}
print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}})))
"""


_RUN: dict[str, Any] = {"capture_output": True, "text": True, "timeout": 60, "check": True}


def _loaded(code: str, *args: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(code=code), *args], **_RUN)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_import_pastcast_loads_no_heavy_library() -> None:
    assert _loaded("import pastcast") & set(HEAVY) == set()


def test_the_root_help_loads_no_command_module() -> None:
    code = "from pastcast.cli import main\ntry:\n    main()\nexcept SystemExit:\n    pass"
    loaded = _loaded(code, "--help")
    assert loaded & {"numpy", "pydantic", "pyarrow", "scipy", "numba", "openai"} == set()


def test_a_corpus_search_imports_only_what_searching_needs(tmp_path: Path) -> None:
    # the first search's start-up: the build, curation, runner and report workflows (and
    # pyarrow, theirs) cost seconds before it and are not imported
    from pastcast.corpus.embedded import EmbeddedIndex
    from pastcast.records import Document

    at = datetime(2024, 5, 1, tzinfo=UTC)
    EmbeddedIndex.build([Document(id="a", timestamp=at, text="rain in spain")], tmp_path / "ix")
    code = (
        "import sys\nfrom pastcast.cli import main\ntry:\n    main()\nexcept SystemExit:\n"
        "    pass\nprint(json.dumps(sorted(sys.modules)))"
    )
    args = ["corpus", "search", str(tmp_path / "ix"), "rain", "--as-of", "2024-06-01", "--json"]
    out = subprocess.run([sys.executable, "-c", "import json\n" + code, *args], **_RUN)
    *hits, loaded = out.stdout.strip().splitlines()
    assert [h["id"] for h in json.loads("\n".join(hits))] == ["a"]  # the search ran
    unneeded = ("pyarrow", "pastcast.app._plans", "pastcast.curate", "pastcast.runner")
    assert [m for m in json.loads(loaded) if m.startswith(unneeded + ("pastcast.reports",))] == []


def test_every_public_name_imports() -> None:
    for name in pastcast.__all__:
        assert getattr(pastcast, name) is not None, name
    assert set(pastcast.__all__) <= set(dir(pastcast))
    with pytest.raises(AttributeError):
        pastcast.no_such_name  # noqa: B018


def test_the_root_help_lines_start_each_commands_own_help() -> None:
    root = typer.main.get_command(app)
    # the core's commands, then those installed plugins add (the arena's)
    assert list(root.commands) == [*COMMANDS, *plugin_commands()]  # type: ignore[attr-defined]
    for name, line in COMMANDS.items():
        own = " ".join((load_command(name).help or "").split())
        assert own.startswith(" ".join(line.split())), name


def test_a_lazy_command_runs() -> None:
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["agents", "list", "--json"])
    assert result.exit_code == 0, result.output
    assert "heuristic" in result.output


def test_a_run_loads_no_pandas_yaml_or_arrow_compute(tmp_path: Path) -> None:
    """A run and its log's columnar companion are built without pandas (half a second of
    imports): Arrow's conversion of Python rows, the easy way to the companion, imports it.
    Nor does a run from options import PyYAML (plan files) or pyarrow.compute (a cast of a
    dataset's table already of the format): 40 ms of its start-up."""
    from pastcast.dataset import Dataset, save_dataset
    from pastcast.records import Event, Resolution, StepSpec

    t0, end = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 3, 1, tzinfo=UTC)
    event = Event(id="e", title="Will it rain", kind="binary", labels=("Yes", "No"),
                  open_time=t0, close_time=end)  # fmt: skip
    step = StepSpec(event_id="e", step_index=0, cutoff=datetime(2024, 2, 1, tzinfo=UTC))
    resolution = {"e": Resolution(event_id="e", label="Yes", resolved_at=end)}
    data = save_dataset(Dataset("d-v1", (event,), resolution, {}, (step,)), tmp_path / "data")
    out = tmp_path / "r.jsonl"
    code = "from pastcast.cli import main\ntry:\n    main()\nexcept SystemExit as e:\n"
    code += "    assert not e.code, e\nprint(json.dumps(sorted(sys.modules)))"
    args = ["run", "--dataset", str(data), "--agent", "uniform", "--out", str(out)]
    done = subprocess.run([sys.executable, "-c", "import json, sys\n" + code, *args], **_RUN)
    loaded = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert any((tmp_path / "r.columns").iterdir())  # the companion was written
    assert "pyarrow" in loaded  # the dataset's tables were read
    assert {"pandas", "yaml", "pyarrow.compute"} & loaded == set()


def test_a_command_is_imported_without_the_collector_which_comes_back_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gc
    import importlib

    seen: list[bool] = []
    real = importlib.import_module

    def probe(name: str, package: str | None = None) -> Any:
        if name.startswith("pastcast.cli._"):
            seen.append(gc.isenabled())
        if name == "pastcast.cli._score":
            raise ImportError("a dependency is missing")
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", probe)
    assert gc.isenabled()
    load_command("stats")
    with pytest.raises(ImportError):
        load_command("score")
    assert seen == [False, False] and gc.isenabled()
    gc.disable()  # a caller's own choice is kept
    try:
        load_command("stats")
        assert not gc.isenabled()
    finally:
        gc.enable()
