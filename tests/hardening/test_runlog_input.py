"""Run logs: any text a model returns can be written; a bad log is a one-line FieldError naming
the file and line; a truncated log is reported as such by the commands that read it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.agents import agent_spec
from pastcast.cli import app
from pastcast.errors import FieldError
from pastcast.runlog import RunLogWriter, header_path, read_run_log
from pastcast.runner import RunConfig, run_benchmark

runner = CliRunner()


@pytest.fixture
def log(tmp_path: Path) -> Path:
    out = tmp_path / "run.jsonl"
    cfg = RunConfig(agents=(agent_spec("uniform"),))
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), cfg, out, progress=False)
    return out


def test_text_utf8_cannot_encode_is_written_with_replacement_characters(log: Path) -> None:
    existing = read_run_log(log)
    first = existing.steps[0]
    odd = "a\ud800b\udfff\x00c"  # lone surrogates (a model's JSON may carry them) and a NUL
    forecast = first.forecast.model_copy(update={"raw_text": odd, "rationale": odd})
    step = first.model_copy(update={"forecast": forecast, "rollout": 7})
    with RunLogWriter(log, existing.header) as writer:
        writer.write(step)
    again = read_run_log(log)
    written = [s for s in again.steps if s.rollout == 7]
    assert [s.forecast.raw_text for s in written] == ["a\ufffdb\ufffd\x00c"]
    assert len(again.steps) == len(existing.steps) + 1


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"a": "caf\xe9"}\n', "not UTF-8 text"),
        (b"[" * 100_000 + b"\n", "nested deeper than"),
        (b'{"a": 1' + b"0" * 5000 + b"}\n", "digits"),
        (b"\x00\x00\x00\n", "not valid JSON"),
    ],
)
def test_a_bad_line_is_a_one_line_error_naming_the_file_and_line(
    log: Path, line: bytes, reason: str
) -> None:
    with log.open("ab") as fh:
        fh.write(line)
    lineno = len(log.read_bytes().splitlines())
    with pytest.raises(FieldError, match=reason) as err:
        read_run_log(log)
    assert str(err.value).startswith(f"{log}:{lineno}: ")
    result = runner.invoke(app, ["score", str(log)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {log}:{lineno}: ") and result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "content", [b"\xff\xfe{}", b"[" * 100_000, b'{"schema_version": 2' + b"0" * 5000 + b"}"]
)
def test_a_bad_header_is_a_one_line_error_naming_it(log: Path, content: bytes) -> None:
    header_path(log).write_bytes(content)
    with pytest.raises(FieldError, match=r"run\.header\.json: ") as err:
        read_run_log(log)
    assert "\n" not in str(err.value)


def test_a_truncated_log_is_reported_by_the_commands_that_read_it(log: Path) -> None:
    with log.open("a", encoding="utf-8") as fh:
        fh.write('{"run_id": "cut off mid-wri')
    assert read_run_log(log).truncated_tail
    for command in (["score"], ["stats", "coverage"], ["stats", "longitudinal"]):
        result = runner.invoke(app, [*command, str(log), "--bootstrap", "10", "--json"])
        assert result.exit_code == 0, result.output
        assert f"{log}: the last line is incomplete" in result.stderr
        json.loads(result.stdout)  # the note stays off stdout
