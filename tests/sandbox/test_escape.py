"""Escape suite: model-written code must not reach files, network, processes or the host."""

from __future__ import annotations

import contextlib
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pastcast.sandbox import SandboxUnavailable, run_python, sandbox_available
from pastcast.sandbox import _run as run_module

REPO_ROOT = Path(__file__).resolve().parents[2]

available, why = sandbox_available()
needs_sandbox = pytest.mark.skipif(not available, reason=f"sandbox unavailable: {why}")


@pytest.fixture
def secret_file() -> Iterator[Path]:
    """A stand-in for a dataset file, outside /tmp so a tmpfs cannot hide it by accident."""
    folder = Path(tempfile.mkdtemp(prefix="pastcast-secret-", dir=REPO_ROOT))
    path = folder / "resolutions.jsonl"
    path.write_text('{"event_id": "e1", "label": "Yes"}\n')
    yield path
    shutil.rmtree(folder)


@needs_sandbox
def test_computation_works() -> None:
    res = run_python("import math, json\nprint(json.dumps({'x': math.comb(10, 3)}))")
    assert res.exit_code == 0, res.stderr
    assert res.stdout.strip() == '{"x": 120}'
    assert res.sandboxed and not res.timed_out and res.killed_reason is None


@needs_sandbox
def test_cannot_read_host_files(secret_file: Path) -> None:
    code = (
        "import os\n"
        f"for p in [{str(secret_file)!r}, {str(secret_file.parent)!r}, {str(REPO_ROOT)!r} + '/src',"
        " '/etc/passwd', '/root/.ssh', '/root/.bashrc', '/home']:\n"
        "    print(p, os.path.exists(p))\n"
    )
    res = run_python(code)
    assert res.exit_code == 0, res.stderr
    assert "True" not in res.stdout
    assert "Yes" not in res.stdout


@needs_sandbox
def test_root_holds_only_a_minimal_tree() -> None:
    res = run_python("import os, sys\nprint(sorted(os.listdir('/')), sys.executable)")
    listing, executable = res.stdout.rsplit(" ", 1)
    top = set(eval(listing))
    assert top <= {"usr", "lib", "lib64", "lib32", "libx32", "dev", "tmp", executable.split("/")[1]}
    # No /etc at all: no passwd, hosts, credentials or loader configuration.
    res = run_python(
        "import os\nprint([p for p in ('/etc', '/proc', '/sys', '/root') if os.path.exists(p)])"
    )
    assert res.stdout.strip() == "[]"


@needs_sandbox
def test_writes_only_in_scratch(secret_file: Path) -> None:
    targets = ["/etc/x", "/usr/x", "/x", str(secret_file), str(secret_file.parent / "new")]
    code = (
        "import os\n"
        f"for p in {targets!r}:\n"
        "    try:\n"
        "        open(p, 'w').write('pwned')\n"
        "        print('WROTE', p)\n"
        "    except OSError as e:\n"
        "        print('denied', p, e.errno)\n"
        "open('/tmp/scratch.txt', 'w').write('ok')\n"
        "print(open('/tmp/scratch.txt').read())\n"
    )
    res = run_python(code)
    assert res.exit_code == 0, res.stderr
    assert "WROTE" not in res.stdout
    assert res.stdout.strip().endswith("ok")
    assert secret_file.read_text().startswith('{"event_id"')
    assert not (secret_file.parent / "new").exists()
    # The scratch directory is private to one run.
    again = run_python("import os\nprint(os.path.exists('/tmp/scratch.txt'))")
    assert again.stdout.strip() == "False"


@needs_sandbox
def test_no_network_even_to_loopback() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    accepted: list[object] = []
    server.settimeout(3)

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(server.accept())

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    code = (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        "    print('CONNECTED')\n"
        "except OSError as e:\n"
        "    print('blocked', e)\n"
        "try:\n"
        "    socket.getaddrinfo('example.com', 80)\n"
        "    print('RESOLVED')\n"
        "except OSError as e:\n"
        "    print('no dns', e)\n"
    )
    res = run_python(code)
    t.join()
    server.close()
    assert "blocked" in res.stdout and "no dns" in res.stdout, res
    assert not accepted


@needs_sandbox
def test_fork_bomb_is_contained() -> None:
    code = (
        "import os\n"
        "n = 0\n"
        "try:\n"
        "    while True:\n"
        "        if os.fork() == 0:\n"
        "            while True: pass\n"
        "        n += 1\n"
        "except OSError as e:\n"
        "    print('fork refused after', n)\n"
        "import subprocess\n"
        "try:\n"
        "    subprocess.run(['true'])\n"
        "except OSError:\n"
        "    print('spawn refused')\n"
    )
    res = run_python(code, timeout_s=3)
    assert "fork refused after 0" in res.stdout, res
    assert "spawn refused" in res.stdout
    # Threads are still allowed for ordinary computation.
    res = run_python(
        "import threading\nts=[threading.Thread(target=sum, args=([1],)) for _ in range(4)]\n"
        "[t.start() for t in ts]; [t.join() for t in ts]; print('threads ok')"
    )
    assert res.stdout.strip() == "threads ok", res.stderr


@needs_sandbox
def test_memory_bomb_is_contained() -> None:
    code = (
        "blocks = []\n"
        "try:\n"
        "    while True:\n"
        "        blocks.append(bytearray(32 * 1024 * 1024))\n"
        "except MemoryError:\n"
        "    print('memory limit after', len(blocks) * 32, 'MB')\n"
    )
    res = run_python(code, memory_mb=256)
    assert "memory limit after" in res.stdout, res
    assert int(res.stdout.split()[3]) < 256


@needs_sandbox
def test_infinite_loop_is_stopped() -> None:
    res = run_python("while True:\n    pass\n", timeout_s=1)
    assert res.killed_reason in ("timeout", "cpu_limit")
    assert res.elapsed_s < 5


@needs_sandbox
def test_sleeping_code_hits_wall_clock() -> None:
    res = run_python("import time\ntime.sleep(60)", timeout_s=1)
    assert res.timed_out and res.killed_reason == "timeout" and res.exit_code is None
    assert res.elapsed_s < 5


@needs_sandbox
def test_huge_output_is_capped() -> None:
    res = run_python("import sys\nwhile True:\n    sys.stdout.write('x' * 65536)", max_output=5000)
    assert res.killed_reason == "output_limit" and res.truncated
    assert len(res.stdout) + len(res.stderr) <= 5000
    assert res.elapsed_s < 5


@needs_sandbox
def test_huge_file_is_refused() -> None:
    res = run_python("open('/tmp/big', 'wb').write(b'x' * (200 << 20))")
    assert res.exit_code != 0
    assert "File too large" in res.stderr or "No space" in res.stderr or "MemoryError" in res.stderr


@needs_sandbox
def test_parent_environment_does_not_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    res = run_python("import os\nprint(dict(os.environ))")
    assert "sk-test-secret" not in res.stdout


def test_refuses_without_isolation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_module, "find_bwrap", lambda: None)
    run_module._self_test.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="bubblewrap"):
            run_python("print(1)")
        res = run_python("print(1 + 1)", allow_unsafe=True)
        assert res.stdout.strip() == "2" and not res.sandboxed
    finally:
        run_module._self_test.cache_clear()
