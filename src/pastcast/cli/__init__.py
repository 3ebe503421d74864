"""The ``pastcast`` command line: a thin layer over the Python API; with the helpers a plugin's
commands share with the core's (one-line errors naming the option, JSON output, notes, output
folders pastcast owns, a workflow's record built from the options given)."""

from pastcast.cli._app import app, main
from pastcast.cli._common import (
    fail,
    fail_app,
    field_help,
    note,
    options_record,
    output_dir,
    print_json,
    undone_on_usage_error,
)

__all__ = [
    "app",
    "fail",
    "fail_app",
    "field_help",
    "main",
    "note",
    "options_record",
    "output_dir",
    "print_json",
    "undone_on_usage_error",
]
