"""At 80 columns (a narrow terminal, or a pipe with COLUMNS=80) every table row stays
distinguishable and every help text is whole: names are folded or the table is split into
blocks of columns, never cut short with an ellipsis."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from pastcast.cli._app import app
from pastcast.reports import TextTable, to_rich

runner = CliRunner()
NARROW = {"COLUMNS": "80"}
TWINS = ("heuristic:max_reads=2", "heuristic:max_reads=4")
"""Two agents whose names differ only after their 8th character (the 21st)."""


@pytest.fixture(scope="module")
def twins_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log = tmp_path_factory.mktemp("twins") / "run.jsonl"
    args = ["run", "--dataset", "world:0", "--max-events", "2", "--out", str(log)]
    ran = runner.invoke(app, [*args, "--agent", TWINS[0], "--agent", TWINS[1]])
    assert ran.exit_code == 0, ran.output
    return log


def _fits(text: str, width: int = 80) -> None:
    assert "…" not in text
    long = [line for line in text.splitlines() if len(line) > width]
    assert not long, long


def _names(text: str) -> list[str]:
    """The first cell of every table row in ``text`` (rich boxes), a name folded onto more
    lines joined: its row's next lines have nothing in the second column."""
    names: list[str] = []
    for line in text.splitlines():
        if line.startswith("│"):
            name, second = (c.strip() for c in line.split("│")[1:3])
            if names and not second:
                names[-1] += name
            else:
                names.append(name)
    return names


def test_score_at_80_columns_tells_the_twins_apart(twins_log: Path) -> None:
    res = runner.invoke(app, ["score", str(twins_log), "--bootstrap", "50"], env=NARROW)
    assert res.exit_code == 0, res.output
    _fits(res.stdout)
    names = _names(res.stdout)
    # every block of every table lists both agents by their whole names
    assert names.count(TWINS[0]) == names.count(TWINS[1]) >= 3
    assert set(names) == set(TWINS)


def test_compare_at_80_columns_tells_the_twins_apart(twins_log: Path) -> None:
    args = ["compare", str(twins_log), "--base-agent", TWINS[0], "--tuned-agent", TWINS[1]]
    res = runner.invoke(app, [*args, "--bootstrap", "50"], env=NARROW)
    assert res.exit_code == 0, res.output
    _fits(res.stdout)
    header = next(line for line in res.stdout.splitlines() if line.startswith("┃ metric"))
    assert TWINS[0] in header and TWINS[1] in header


def test_long_names_fold_whole_and_rows_are_ruled_apart() -> None:
    long = "market-maker-with-a-very-long-name:model=openai:gpt-4o-mini,top_k="
    cells = ("12", "0.274 [0.176, 0.370]", "0.775 [0.588, 0.939]", "0.465 [0.318, 0.599]")
    rows = tuple((long + k, "memory_free", *cells) for k in ("5", "6"))
    table = TextTable("t", ("agent", "setting", "n", "Brier", "accuracy", "log loss"), rows, 2, 2)
    out = io.StringIO()
    Console(width=80, file=out).print(to_rich(table, 80))
    _fits(out.getvalue())
    assert "├" in out.getvalue()  # folded rows are ruled apart
    names = _names(out.getvalue())
    assert names.count(long + "5") == names.count(long + "6") >= 2, names


def _commands(cmd: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out = [path]
    for name, sub in getattr(cmd, "commands", {}).items():
        out += _commands(sub, (*path, name))
    return out


def test_every_help_is_whole_at_80_columns() -> None:
    root = typer.main.get_command(app)
    paths = _commands(root)
    assert len(paths) > 30
    for path in paths:
        res = runner.invoke(app, [*path, "--help"], env=NARROW)
        assert res.exit_code == 0, (path, res.output)
        _fits(res.stdout)
        assert not re.search(r"\w\.\.\.$", res.stdout, re.M), (path, res.stdout)
        cmd = root
        for name in path:
            cmd = cmd.commands[name]  # type: ignore[attr-defined]
        for param in cmd.params:
            for opt in (*param.opts, *param.secondary_opts):
                if opt.startswith("--"):
                    assert opt in res.stdout, (path, opt)
