"""Every ``pastcast`` command the README and the docs show names a command that exists, with
options that command takes and no more positional arguments than it accepts: a renamed option or
a removed command fails here, before a reader finds it. (The README tour is also run, whole, by
``tests/docs/test_readme_tour.py``.)"""

from __future__ import annotations

from typing import Any

import click
import pytest
import typer
from _doc_commands import DocCommand, doc_commands, documented_pages, shell_lines

from _plugins import ARENA_MISSING, plugin_command
from pastcast.cli import app

ROOT_COMMAND = typer.main.get_command(app)
COMMANDS = [c for page in documented_pages() for c in doc_commands(page)]


def _is_group(command: Any) -> bool:
    # typer's own click classes are not click's: look at the shape, not the type
    return hasattr(command, "get_command") and hasattr(command, "commands")


def resolve(words: list[str]) -> tuple[Any, list[str]]:
    """The click command the words name, and the words left for it."""
    command: Any = ROOT_COMMAND
    rest = list(words)
    ctx = click.Context(command)
    while _is_group(command) and rest and not rest[0].startswith("-"):
        sub = command.get_command(ctx, rest[0])
        if sub is None:
            raise LookupError(f"no command {rest[0]!r} under {command.name!r}")
        command, rest = sub, rest[1:]
        ctx = click.Context(command, parent=ctx)
    return command, rest


def check(command: Any, rest: list[str]) -> list[str]:
    """What is wrong with the words for this command (unknown options, too many arguments)."""
    options: dict[str, Any] = {}
    for param in command.params:
        if param.param_type_name == "option":
            for name in (*param.opts, *param.secondary_opts):
                options[name] = param
    arguments = [p for p in command.params if p.param_type_name == "argument"]
    variadic = any(a.nargs == -1 for a in arguments)
    problems: list[str] = []
    positional = 0
    i = 0
    while i < len(rest):
        word = rest[i]
        if word.startswith("--") or (word.startswith("-") and len(word) == 2):
            name = word.split("=", 1)[0]
            option = options.get(name)
            if option is None and name not in ("--help",):
                problems.append(f"unknown option {name}")
            elif option is not None and not option.is_flag and "=" not in word:
                i += 1  # its value
            i += 1
            continue
        positional += 1
        i += 1
    if not variadic and positional > sum(max(a.nargs, 1) for a in arguments):
        problems.append(f"{positional} positional arguments, the command takes {len(arguments)}")
    return problems


@pytest.mark.parametrize("doc", COMMANDS, ids=lambda c: f"{c.page}:{c.line}")
def test_documented_command_exists_with_its_options(doc: DocCommand) -> None:
    if doc.words[:1] == ["arena"] and not plugin_command("arena"):
        pytest.skip(ARENA_MISSING)
    try:
        command, rest = resolve(doc.words)
    except LookupError as exc:
        pytest.fail(f"{doc.page}:{doc.line}: {doc.text}: {exc}")
    if _is_group(command):
        pytest.fail(f"{doc.page}:{doc.line}: {doc.text}: names a group, not a command")
    problems = check(command, rest)
    assert not problems, f"{doc.page}:{doc.line}: {doc.text}: {'; '.join(problems)}"


def test_pages_show_commands() -> None:
    pages = {c.page for c in COMMANDS}
    assert "README.md" in pages and len(COMMANDS) > 50, "the extraction found too few commands"


def test_the_check_can_fail() -> None:
    command, rest = resolve(["score", "run.jsonl", "--by", "agent", "--no-such-option"])
    assert check(command, rest) == ["unknown option --no-such-option"]
    with pytest.raises(LookupError):
        resolve(["no-such-command"])
    command, rest = resolve(["compare", "a", "b", "c"])
    assert any("positional" in p for p in check(command, rest))


def test_shell_lines_join_continuations_and_drop_comments() -> None:
    block = "# a comment\npastcast run --a 1 \\\n    --b 2   # trailing\npastcast x '#not' # c\n"
    assert shell_lines(block, 1) == [(2, "pastcast run --a 1 --b 2"), (4, "pastcast x '#not'")]
