"""The CLI: every command documented; bad arguments give one-line errors and exit 2."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner

from pastcast.cli import app

runner = CliRunner()


def _commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        assert cmd is not None
        out.append((*prefix, name))
        if isinstance(cmd, click.Group):
            out.extend(_commands(cmd, (*prefix, name)))
    return out


def test_every_command_has_help_text() -> None:
    root = typer.main.get_command(app)
    assert isinstance(root, click.Group)
    commands = _commands(root)
    assert ("demo",) in commands and ("run",) in commands and ("score",) in commands
    for path in commands:
        ctx = click.Context(root)
        cmd: click.Command | None = root
        for part in path:
            assert isinstance(cmd, click.Group)
            cmd = cmd.get_command(ctx, part)
        assert cmd is not None and (cmd.help or "").strip(), f"undocumented: {' '.join(path)}"
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--agent", "nope"], "unknown agent 'nope'"),
        (["--agent", "heuristic@sleepy"], "unknown setting 'sleepy'"),
        (["--agent", "heuristic:max_reads"], "expected key=value"),
        (["--agent", "uniform", "--dataset", "/no/such/dir"], "not a dataset directory"),
        (["--agent", "uniform", "--dataset", "world:x"], "seed must be an integer"),
        (["--agent", "uniform", "--agent", "uniform"], "given twice"),
    ],
)
def test_run_rejects_bad_arguments(tmp_path: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["run", *args, "--out", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2
    assert message in result.output
    assert not (tmp_path / "r.jsonl").exists()
