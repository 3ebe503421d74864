"""`kill -9` of the whole `pastcast run --config` process at random moments, then resume: no
finished step lost, none duplicated, final scores identical to an uninterrupted run; and a second
process on a log being written is refused."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from scale_world import outcomes, synthetic_backend, synthetic_dataset
from scripted_provider import ProviderState

from pastcast.app import open_dataset
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.dataset import save_dataset
from pastcast.runlog import RunLogWriter, read_run_log
from pastcast.runner import load_plan, run_benchmark
from pastcast.scoring import summarize, table_from_records

STEPS = 12 * 3 * 3  # events x dates x agents
KILLS = 3
EPISODES = 16
"""Steps in flight: the most records one batch writes."""


def _plan(tmp_path: Path, url: str) -> Path:
    data, index = tmp_path / "dataset", tmp_path / "index"
    if not data.exists():
        save_dataset(synthetic_dataset(), data)
        EmbeddedIndex.build(synthetic_backend().docs.values(), index)
    plan = tmp_path / "plan.toml"
    plan.write_text(
        f"""
dataset = "{data}"
out = "{tmp_path / "run" / "run.jsonl"}"
settings = ["memory_free", "memory_on"]

[corpus]
spec = "{index}"

[[models]]
spec = "openai-compatible:scripted@{url}"
options = {{ timeout_s = 5.0 }}

[[agents]]
name = "heuristic"
setting = "memory_on"

[concurrency]
episodes = {EPISODES}

[retries]
base_delay_s = 0.01
max_delay_s = 0.05
"""
    )
    return plan


def _start(plan: Path, *args: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-c", "from pastcast.cli import main; main()"]
    return subprocess.Popen(
        [*cmd, "run", "--config", str(plan), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ | {"PASTCAST_DEBUG": ""},
    )


def _run_in_process(plan_file: Path, out: Path) -> None:
    plan = load_plan(plan_file)
    run_benchmark(
        open_dataset(plan.dataset),
        EmbeddedIndex.open(str(plan.corpus.spec)),
        plan.run_config(),
        out,
        execution=plan.execution(),
        progress=False,
    )


def _lines(log: Path) -> int:
    return log.read_bytes().count(b"\n") if log.exists() else 0


def test_kill_9_at_random_moments_then_resume_loses_and_repeats_nothing(
    tmp_path: Path, provider: ProviderState
) -> None:
    provider.latency_s = 0.06  # a run outlasts the first random kill (0.5-4 s) on a quiet machine
    plan = _plan(tmp_path, provider.url)
    reference = tmp_path / "reference" / "run.jsonl"
    _run_in_process(plan, reference)  # the same plan, uninterrupted
    log = tmp_path / "run" / "run.jsonl"
    rng = random.Random(20240611)
    killed_at: list[int] = []
    for n in range(KILLS):
        proc = _start(plan)
        if n % 2 == 0:  # a moment in time: start-up, the header, the first steps or later
            # ... but before the run's last batch of records, however fast the machine.
            kill_at = time.monotonic() + rng.uniform(0.5, 4.0)
            near_end = STEPS - 2 * EPISODES
            while time.monotonic() < kill_at and _lines(log) < near_end and proc.poll() is None:
                time.sleep(0.005)
        else:  # a moment in the work: after some steps were written
            target = _lines(log) + rng.randint(1, STEPS // KILLS)
            deadline = time.monotonic() + 60
            while _lines(log) < target and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.005)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
        killed_at.append(_lines(log))
        if killed_at[-1] >= STEPS:
            break
    assert any(0 < k < STEPS for k in killed_at), killed_at  # some kill landed mid-run
    last = _start(plan, "--resume", "--json")
    stdout, stderr = last.communicate(timeout=300)
    assert last.returncode == 0, stderr
    assert json.loads(stdout)["resumed"] == killed_at[-1] - (killed_at[-1] > _lines(log))
    raw = log.read_text().splitlines()
    keys = [tuple(json.loads(line)[k] for k in ("agent", "setting", "event_id", "step_index",
                                                "rollout")) for line in raw]  # fmt: skip
    assert len(keys) == len(set(keys)) == STEPS  # nothing lost, nothing written twice
    steps = read_run_log(log).steps
    expected = read_run_log(reference).steps
    assert outcomes(steps) == outcomes(expected)
    assert _board(steps) == _board(expected)


def _board(steps: tuple) -> str:  # type: ignore[type-arg]
    """The leaderboard as JSON text (NaN included), from the steps in one order."""
    ordered = sorted(steps, key=lambda s: s.key)
    summaries = summarize(table_from_records(ordered), by=("agent", "setting"), bootstrap=0)
    return json.dumps([s.as_dict() for s in summaries])


def test_a_second_process_on_a_log_being_written_is_refused(
    tmp_path: Path, provider: ProviderState
) -> None:
    plan = _plan(tmp_path, provider.url)
    log = tmp_path / "run" / "run.jsonl"
    _run_in_process(plan, log)
    before = log.read_bytes()
    with RunLogWriter(log, read_run_log(log).header):  # this process is writing the log
        second = _start(plan)
        _, stderr = second.communicate(timeout=120)
    assert second.returncode == 2
    assert f"is being written by another process (pid {os.getpid()})" in stderr
    not_warnings = [ln for ln in stderr.strip().splitlines() if not ln.startswith("warning:")]
    assert len(not_warnings) == 1, stderr  # one error line, no traceback
    assert log.read_bytes() == before
