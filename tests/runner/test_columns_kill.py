"""`kill -9` of a real run of the embedded world while it writes its run log and companion, then
resume: the companion equals the step file, record for record and byte span for byte span."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from pastcast.runlog import read_run_log, read_step_columns

# Small parts, so the run is killed between parts, inside one and while merging them.
_CHILD = (
    "import sys, pastcast.runlog._companion as c; c.PART_ROWS = 7; c._MERGE_AT = 4; "
    "from pastcast.cli import main; sys.exit(main())"
)


def _run(out: Path) -> subprocess.Popen[bytes]:
    args = ["run", "--agent", "uniform", "--agent", "base-rate", "--agent", "market"]
    args += ["--agent", "base-rate@memory_on", "--out", str(out)]
    return subprocess.Popen(
        [sys.executable, "-c", _CHILD, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=os.environ | {"PASTCAST_DEBUG": ""},
    )


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def _rows_of_records(log: Path) -> list[tuple[object, ...]]:
    data, pos, out = log.read_bytes(), 0, []
    for step in read_run_log(log).steps:
        end = data.index(b"\n", pos)
        out.append((step.key, step.forecast.probs, step.scores.brier, pos, end - pos))
        pos = end + 1
    return out


def _rows_of_columns(log: Path, *, trusted: bool = True) -> list[tuple[object, ...]]:
    cols = read_step_columns(log, update=False)
    assert cols.notes == () or not trusted, cols.notes
    t = cols.table.to_pydict()
    return [
        (
            (t["agent"][i], t["setting"][i], t["event_id"][i], t["step_index"][i], t["rollout"][i]),
            {d["label"]: d["p"] for d in t["probs"][i]},
            t["brier"][i],
            t["offset"][i],
            t["length"][i],
        )
        for i in range(cols.table.num_rows)
    ]


def test_the_companion_equals_the_step_file_after_kill_9_and_resume(tmp_path: Path) -> None:
    out = tmp_path / "run" / "run.jsonl"
    for kill_after in (30, 120):  # lines in the log when the run is killed
        proc = _run(out)
        deadline = time.monotonic() + 120
        while _lines(out) < kill_after and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        killed = proc.poll() is None
        if killed:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert killed, "the run finished before it could be killed"
        # The killed run's companion covers a prefix; the rest is read from the JSONL (a part
        # the kill left unrecorded is not trusted, and said so).
        assert _rows_of_columns(out, trusted=False) == _rows_of_records(out)
    proc = _run(out)  # resume to the end
    assert proc.wait(timeout=300) == 0, proc.stderr.read().decode() if proc.stderr else ""
    cols = read_step_columns(out, update=False)
    assert cols.tail_rows == 0 and cols.parts  # the writer covered everything by its close
    assert _rows_of_columns(out) == _rows_of_records(out)
    keys = [row[0] for row in _rows_of_records(out)]
    assert len(keys) == len(set(keys))  # nothing written twice
