"""A conversing sandboxed process: lines answered in order, limits enforced by the supervisor,
nothing left running, and a handler's failure ends it."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from pastcast.sandbox import Reply, run_sandboxed, sandbox_interpreter


def _children() -> set[str]:
    out = set()
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            ppid = re.search(r"^PPid:\s+(\d+)", status.read_text(), re.M)
        except OSError:
            continue
        if ppid and int(ppid.group(1)) == os.getpid():
            out.add(status.parent.name)
    return out


def _python(code: str) -> list[str]:
    return [sandbox_interpreter(), "-I", "-c", code]


def test_lines_are_answered_in_order_and_nothing_is_left(sandbox: None) -> None:
    before = _children()
    code = (
        "import sys\n"
        "for i in range(3):\n"
        "    print(i, flush=True)\n"
        "    print('got', sys.stdin.readline().strip(), file=sys.stderr, flush=True)\n"
    )
    seen: list[bytes] = []

    def answer(line: bytes) -> Reply:
        seen.append(line)
        return Reply(b"re-" + line + b"\n")

    res = run_sandboxed(_python(code), on_line=answer, timeout_s=30)
    assert seen == [b"0", b"1", b"2"]
    assert res.stderr.split("\n")[:3] == ["got re-0", "got re-1", "got re-2"]
    assert res.exit_code == 0 and res.killed_reason is None and res.stdout == ""
    assert _children() == before


def test_a_silent_process_is_stopped_at_the_wall_clock(sandbox: None) -> None:
    started = time.monotonic()
    res = run_sandboxed(
        _python("import time; time.sleep(60)"), on_line=lambda _: Reply(), timeout_s=1.5
    )
    assert res.killed_reason == "timeout" and res.timed_out and res.exit_code is None
    assert time.monotonic() - started < 15


def test_a_line_without_end_is_stopped_at_its_limit(sandbox: None) -> None:
    code = "import sys\nwhile True:\n    sys.stdout.write('x' * 4096); sys.stdout.flush()\n"
    res = run_sandboxed(_python(code), on_line=lambda _: Reply(), timeout_s=30, max_line=100_000)
    assert res.killed_reason == "output_limit"


def test_after_the_last_reply_a_lingering_process_is_ended(sandbox: None) -> None:
    code = "print('bye', flush=True)\nimport time\ntime.sleep(60)\n"
    started = time.monotonic()
    res = run_sandboxed(_python(code), on_line=lambda _: Reply(b"ok\n", done=True), timeout_s=60)
    assert res.killed_reason is None and not res.timed_out  # not a failure: it had answered
    assert time.monotonic() - started < 15


def test_a_flood_of_unread_replies_stays_bounded(sandbox: None) -> None:
    code = "while True:\n    print('q', flush=True)\n"  # never reads a reply
    calls = 0

    def answer(_: bytes) -> Reply:
        nonlocal calls
        calls += 1
        return Reply(b"r" * 10_000 + b"\n")

    res = run_sandboxed(_python(code), on_line=answer, timeout_s=2)
    assert res.killed_reason in ("timeout", "cpu_limit")
    # Replies wait in a bounded buffer (a pipe's worth are read): requests wait behind them.
    assert calls < 200


def test_a_failing_handler_ends_the_process(sandbox: None) -> None:
    before = _children()

    def broken(_: bytes) -> Reply:
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        run_sandboxed(_python("print(1, flush=True)\ninput()\n"), on_line=broken, timeout_s=30)
    assert _children() == before


def test_binds_are_checked_before_anything_starts(sandbox: None, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no such file"):
        run_sandboxed(["x"], on_line=lambda _: Reply(), binds=[(str(tmp_path / "no"), "/no")])
    with pytest.raises(ValueError, match="is relative"):
        run_sandboxed(["x"], on_line=lambda _: Reply(), binds=[(str(tmp_path), "rel")])
