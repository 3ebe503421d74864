"""Text inputs named on the command line: a FIFO or a folder is refused at once, not waited on."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from pastcast.textfiles import NotRegularFile, read_text_file


def test_a_regular_file_is_read(tmp_path: Path) -> None:
    p = tmp_path / "plan.toml"
    p.write_text("name = 'caf\u00e9'\n", encoding="utf-8")
    assert read_text_file(p) == "name = 'caf\u00e9'\n"


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    got: list[BaseException] = []
    reader = threading.Thread(target=lambda: _capture(fifo, got), daemon=True)
    reader.start()
    reader.join(timeout=5)
    if reader.is_alive():  # unblock the reader, then fail: it waited for a writer
        with open(fifo, "w"):
            pass
        pytest.fail("reading a FIFO waited for a writer")
    assert len(got) == 1 and isinstance(got[0], NotRegularFile)
    assert got[0].strerror == "not a regular file"


def test_a_folder_and_a_missing_file_are_os_errors(tmp_path: Path) -> None:
    with pytest.raises(NotRegularFile, match="a folder"):
        read_text_file(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_text_file(tmp_path / "missing.toml")


def _capture(path: Path, got: list[BaseException]) -> None:
    try:
        read_text_file(path)
    except BaseException as exc:  # recorded for the test's thread
        got.append(exc)
