"""The real data's common first steps (``shared_data_dir``): ForecastBench's Polymarket questions
imported by the command line, and an index of the Wikipedia current-events corpus."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from typer.testing import CliRunner

from pastcast.cli import app
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.corpus.sources import read_wcep


def import_polymarket(shared: Path, out: Path, *options: str) -> Path:
    """``pastcast data import forecastbench`` of the Polymarket questions into ``out`` (with
    ``options``), checked to succeed."""
    imported = CliRunner().invoke(
        app,
        [
            "data",
            "import",
            "forecastbench",
            str(shared / "forecastbench"),
            "--out",
            str(out),
            "--source",
            "polymarket",
            *options,
        ],
    )
    assert imported.exit_code == 0, imported.output
    return out


def wcep_index(shared: Path, out: Path, since: date, until: date) -> Path:
    """An embedded index at ``out`` of the current-events corpus from ``since`` to ``until``."""
    docs = read_wcep(shared / "wcep", since=since, until=until)
    EmbeddedIndex.build(docs, out)
    return out
