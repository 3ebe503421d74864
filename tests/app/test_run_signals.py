"""SIGTERM or SIGINT to `pastcast run` mid-run stops it the way the README promises: the local
model server it started is gone, the run log holds every finished step intact, and the same
command resumes and completes. The llama.cpp server is a stand-in (``fake_llama_server.py``,
put first on the run's PYTHONPATH as ``llama_cpp.server``), so no model is needed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pastcast.runlog import read_run_log

WORLD = "world:0,n_events=2,n_documents=60"  # 7 forecast steps
HERE = Path(__file__).parent


def _fake_llama(root: Path) -> Path:
    server = root / "llama_cpp" / "server"
    server.mkdir(parents=True)
    (root / "llama_cpp" / "__init__.py").write_text("")
    (server / "__init__.py").write_text("")
    shutil.copy(HERE / "fake_llama_server.py", server / "__main__.py")
    return root


def _alive(pid: int) -> bool:
    """A process that runs (a zombie waiting for its parent does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _start(tmp_path: Path, delay: float) -> subprocess.Popen[str]:
    model = tmp_path / "fake.gguf"
    model.touch()
    pids = tmp_path / "pids"
    pids.mkdir(exist_ok=True)
    fake = tmp_path / "fake"
    if not fake.exists():
        _fake_llama(fake)
    paths = [str(fake), os.environ.get("PYTHONPATH", "")]
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "FAKE_LLAMA_PIDS": str(pids),
        "FAKE_LLAMA_DELAY": str(delay),
        "PASTCAST_DEBUG": "",
    }
    agent = f'no-tools:model=local:{model},model_options={{"timeout_s": 30}}'
    command = [
        sys.executable, "-c", "from pastcast.cli import main; main()",
        "run", "--dataset", WORLD, "--agent", agent, "--workers", "2",
        "--out", str(tmp_path / "run" / "run.jsonl"),
    ]  # fmt: skip
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _servers(tmp_path: Path) -> list[int]:
    return [int(p.name) for p in (tmp_path / "pids").iterdir()]


def _steps_written(log: Path) -> int:
    try:
        return log.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_stops_the_run_and_its_model_server(tmp_path: Path, signum: int) -> None:
    log = tmp_path / "run" / "run.jsonl"
    proc = _start(tmp_path, delay=1.0)
    try:
        deadline = time.monotonic() + 120
        while _steps_written(log) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, proc.communicate()
        assert _steps_written(log) >= 2, "the run wrote nothing in 120 s"
        started = _servers(tmp_path)
        assert started and all(_alive(p) for p in started)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
        assert [p for p in started if _alive(p)] == [], "a model server outlived its run"
        assert proc.returncode == 128 + signum, err
        last = err.strip().splitlines()[-1]
        assert last.startswith(f"error: stopped by {signal.Signals(signum).name}: "), err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in _servers(tmp_path):  # whatever leaked must not outlive the test
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    kept = read_run_log(log)
    assert not kept.truncated_tail and 2 <= len(kept.steps) < 7
    again = _start(tmp_path, delay=0.0)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    steps = read_run_log(log).steps
    assert len(steps) == 7 and len({s.key for s in steps}) == 7
    assert f"{7 - len(kept.steps)} steps written, {len(kept.steps)} resumed" in out
    assert [p for p in _servers(tmp_path) if _alive(p)] == []
