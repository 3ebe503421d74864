"""`pastcast presets ...`: the papers' defaults by name, and every value each one sets."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from pastcast.app import preset_settings
from pastcast.cli._common import JsonFlag, fail, print_json
from pastcast.errors import FieldError

app = typer.Typer(no_args_is_help=True)  # its help: COMMANDS (_app)


@app.command("list")
def list_command(as_json: JsonFlag = False) -> None:
    """Every preset: its name, paper and what it sets."""
    found = preset_settings()
    if as_json:
        print_json([p.model_dump(mode="json", exclude={"settings"}) for p in found])
        return
    for p in found:
        typer.echo(f"{p.name}\t{p.paper}\t{p.description}")


@app.command("show")
def show_command(
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
