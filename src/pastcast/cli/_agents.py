"""`pastcast agents ...`: what can be passed to ``--agent``; `pastcast presets ...`: the papers'
defaults by name (``--preset``), and every value each one sets."""

from __future__ import annotations

import inspect
import json
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pastcast.agents import list_agents
from pastcast.app import AGENT_FORM, preset_settings
from pastcast.cli._common import JsonFlag, fail, print_json
from pastcast.errors import FieldError

app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)


@app.command("list")
def list_command(as_json: JsonFlag = False) -> None:
    """Registered agents with their role, arguments and description."""
    agents = []
    for info in list_agents():
        if info.name.startswith("test-"):
            continue
        params = inspect.signature(info.factory).parameters.values()
        args = [
            p.name if p.default is inspect.Parameter.empty else f"{p.name}={p.default!r}"
            for p in params
            if p.name != "setting"
        ]
        agents.append((info, args))
    if as_json:
        print_json(
            [
                {"name": i.name, "role": i.role, "market_access": i.market_access, "args": a}
                | {"description": i.description}
                for i, a in agents
            ]
        )
        return
    table = Table(title=escape(f"Agents: pass as --agent {AGENT_FORM} (see pastcast run --help)"))
    for col in ("name", "role", "arguments", "description"):
        table.add_column(col)
    for info, args in agents:
        table.add_row(info.name, info.role, escape(", ".join(args)), escape(info.description))
    Console().print(table)


presets_app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)


@presets_app.command("list")
def presets_list(as_json: JsonFlag = False) -> None:
    """Every preset: its name, paper and what it sets."""
    found = preset_settings()
    if as_json:
        print_json([p.model_dump(mode="json", exclude={"settings"}) for p in found])
        return
    for p in found:
        typer.echo(f"{p.name}\t{p.paper}\t{p.description}")


@presets_app.command("show")
def presets_show(
    name: Annotated[str, typer.Argument(help="A preset: pastcast presets list.")],
    as_json: JsonFlag = False,
) -> None:
    """Every setting of a preset: key, value, the stage it applies to and the paper's section.

    The `run` settings are plan fields (`pastcast run --preset NAME`, `preset = "NAME"` in a
    plan file); the others are what the paper did at that stage."""
    try:
        (found,) = preset_settings(name)
    except FieldError as exc:
        fail(f"NAME: {exc.reason}")
    if as_json:
        print_json(found.model_dump(mode="json"))
        return
    typer.echo(f"{found.name}: {found.description}")
    for s in found.settings:
        note = f"  ({s.note})" if s.note else ""
        value = json.dumps(s.value, ensure_ascii=False)
        typer.echo(f"{s.stage}\t{s.key} = {value}\t{s.source}{note}")
