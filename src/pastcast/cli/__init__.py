"""The ``pastcast`` command line: a thin layer over the Python API."""

from pastcast.cli._app import app, main

__all__ = ["app", "main"]
