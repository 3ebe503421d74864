"""`pastcast agents ...`: what can be passed to ``--agent``."""

from __future__ import annotations

import inspect

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pastcast.agents import list_agents
from pastcast.app import AGENT_FORM
from pastcast.cli._common import JsonFlag, print_json

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
