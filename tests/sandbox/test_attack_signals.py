"""Attacks on the supervisor: signals, timing, output, forged kill reasons and code that cannot
be encoded. The run must stop when the supervisor says so, for the reason it observed, and leave
nothing alive (``run_attack``)."""

from __future__ import annotations

import pytest
from _attack import fields, needs_sandbox, run_attack

from pastcast.sandbox import _supervise as supervise_module
from pastcast.sandbox import run_python

pytestmark = needs_sandbox


def test_ignoring_every_catchable_signal_does_not_outlive_the_timeout() -> None:
    res = run_attack(
        """
        import signal
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU, signal.SIGALRM):
            signal.signal(sig, signal.SIG_IGN)
        print("ignoring", flush=True)
        while True:
            pass
        """,
        timeout_s=1,
    )
    assert res.killed_reason in ("timeout", "cpu_limit") and "ignoring" in res.stdout, res
    assert res.elapsed_s < 4


def test_killing_its_parents_changes_nothing() -> None:
    res = run_attack(
        """
        import signal
        for target in (os.getppid(), 1, 0, -1):
            show(f"kill{target}", attempt(os.kill, target, signal.SIGKILL))
        show("alive", os.getpid())
        """
    )
    got = fields(res)
    # The interpreter is its namespace's init: nothing above it is visible, and signals it
    # sends itself without a handler are dropped.
    assert got["alive"] == "1" and res.exit_code == 0 and res.killed_reason is None, res


def test_closing_its_output_does_not_end_supervision() -> None:
    res = run_attack(
        """
        import time
        os.close(1)
        os.close(2)
        time.sleep(60)
        """,
        timeout_s=1,
    )
    assert res.timed_out and res.killed_reason == "timeout" and res.exit_code is None
    assert 0.9 < res.elapsed_s < 4


def test_a_thread_that_never_ends_is_stopped() -> None:
    res = run_attack(
        """
        import threading, time
        threading.Thread(target=time.sleep, args=(60,)).start()  # the interpreter waits for it
        show("main", "done")
        """,
        timeout_s=1,
    )
    assert fields(res) == {"main": "done"} and res.killed_reason == "timeout", res


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_output_flood_without_newlines_is_cut(stream: str) -> None:
    res = run_attack(
        f"while True:\n    sys.{stream}.write('x' * 65536)\n    sys.{stream}.flush()",
        max_output=5000,
    )
    assert res.killed_reason == "output_limit" and res.truncated, res.killed_reason
    assert len(res.stdout) + len(res.stderr) <= 5000
    assert res.elapsed_s < 4


@pytest.mark.parametrize(
    ("code", "exit_code"),
    [
        ("raise SystemExit(137)", 137),  # what bubblewrap reports for SIGKILL
        ("raise SystemExit(152)", 152),  # ... for SIGXCPU
        ("print('killed_reason=timeout'); sys.stderr.write('Killed\\n'); os._exit(124)", 124),
    ],
)
def test_exit_status_and_output_cannot_forge_a_kill_reason(code: str, exit_code: int) -> None:
    res = run_attack(code)
    assert res.exit_code == exit_code
    assert res.killed_reason is None and not res.timed_out and not res.truncated


def test_cpu_limit_is_what_the_kernel_accounted() -> None:
    res = run_attack("while True:\n    pass", timeout_s=30, cpu_s=1)
    assert res.killed_reason == "cpu_limit" and not res.timed_out, res
    assert res.exit_code is None and res.elapsed_s < 20


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("print('\ud800')", "not valid Unicode"),
        ("print(1)\0print(2)", "NUL character at character 8"),
        ("#" * (2 << 20), "larger than max_code_bytes"),
        ("#" + "é" * 600, "larger than max_code_bytes=1000 (1201 bytes)"),
        (b"print(1)", "code must be text, got bytes"),
    ],
)
def test_code_that_cannot_be_encoded_is_refused_cleanly(code: object, message: str) -> None:
    options = {"max_code_bytes": 1000} if "é" in str(code) else {}
    res = run_python(code, **options)  # type: ignore[arg-type]
    assert res.error is not None and message in res.error and message in res.stderr
    assert res.exit_code is None and res.stdout == "" and res.elapsed_s == 0.0


def test_a_sandbox_that_cannot_start_is_a_clean_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting as the sandbox's user fails once its task limit is spent (e.g. by a concurrent
    thread bomb): the call reports it instead of raising."""

    def spent(*args: object, **kwargs: object) -> None:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(supervise_module.subprocess, "Popen", spent)
    res = run_python("print(1)")
    assert res.error is not None and "could not start" in res.error and res.exit_code is None


def test_output_that_is_not_utf8_is_replaced() -> None:
    res = run_attack("sys.stdout.buffer.write(b'ok \\xff\\xfe\\n')")
    assert res.exit_code == 0 and res.stdout == "ok \ufffd\ufffd\n"


@pytest.mark.parametrize(
    ("option", "value"),
    [("timeout_s", 0), ("memory_mb", 1), ("max_output", -1), ("scratch_mb", 0), ("cpu_s", 0)],
)
def test_bad_options_are_refused_by_name(option: str, value: int) -> None:
    with pytest.raises(ValueError, match=f"option {option}={value}"):
        run_python("print(1)", **{option: value})  # type: ignore[arg-type]
