"""The run log under concurrent writers, torn endings and retried failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.agents import agent_spec
from pastcast.errors import FieldError
from pastcast.runlog import RunLogWriter, read_run_log
from pastcast.runner import RunConfig, run_benchmark

UNIFORM = RunConfig(agents=(agent_spec("uniform"),))


def _run(out: Path, config: RunConfig = UNIFORM) -> None:
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), config, out, progress=False)


def test_a_second_writer_on_the_same_log_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    _run(out)
    header = read_run_log(out).header
    with RunLogWriter(out, header):
        with pytest.raises(FieldError, match=r"run.jsonl is being written by another process"):
            RunLogWriter(out, header)
        with pytest.raises(FieldError, match="another process"):
            _run(out)
    RunLogWriter(out, header).close()  # released when the first one closes


def test_a_complete_last_record_without_its_newline_survives_the_next_append(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run.jsonl"
    _run(out)
    lines = out.read_bytes().splitlines(keepends=True)
    assert len(lines) == 4
    # A crash after the record but before its newline: three whole records, the last unended.
    out.write_bytes(b"".join(lines[:3]).rstrip(b"\n"))
    _run(out)
    log = read_run_log(out)
    assert len(log.steps) == 4 and not log.truncated_tail
    assert len({s.key for s in log.steps}) == 4
    assert all(json.loads(line) for line in out.read_text().splitlines())
