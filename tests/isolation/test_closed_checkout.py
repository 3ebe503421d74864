"""Isolated agents run from a checkout inside a folder other users cannot enter (what
``mktemp -d`` makes, or a home): the sandbox's user cannot reach it, so the sandbox binds a
readable mirror of it at the same path."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

_RUN = """\
import json, sys
from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.agents import agent_spec
from pastcast.runlog import read_run_log
from pastcast.runner import RunConfig, run_benchmark
spec = agent_spec("isolated", agent="cheater", plugin=sys.argv[2], label="cheater-isolated")
config = RunConfig(agents=(spec,), max_events=1)
run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), config, sys.argv[1], progress=False)
steps = list(read_run_log(sys.argv[1]).steps)
print(json.dumps([[s.episode.error, s.forecast.rationale] for s in steps]))
"""


def test_an_isolated_agent_runs_from_a_checkout_closed_to_others(
    bindable_environment: None,
) -> None:
    if os.getuid() != 0:
        pytest.skip("only a root caller runs the sandbox as another user")
    closed = Path(tempfile.mkdtemp(prefix="pastcast-closed-"))
    try:
        assert stat.S_IMODE(closed.stat().st_mode) == 0o700
        checkout = closed / "pastcast"
        shutil.copytree(REPO / "src", checkout / "src", ignore=shutil.ignore_patterns("*.pyc"))
        (checkout / "tests").mkdir()
        shutil.copy(REPO / "tests" / "_tiny.py", checkout / "tests")
        shutil.copy(REPO / "tests" / "isolation" / "_cheater.py", checkout / "tests")
        env = {**os.environ, "PYTHONPATH": f"{checkout / 'src'}:{checkout / 'tests'}"}
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                _RUN,
                str(closed / "run.jsonl"),
                str(checkout / "tests" / "_cheater.py"),
            ],
            capture_output=True,
            text=True,
            env=env,
            cwd=checkout,
            timeout=120,
            check=False,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        steps = json.loads(out.stdout.strip().splitlines()[-1])
        # The agent ran (its code was bound), and found nothing of the run (it was isolated).
        assert steps == [[None, "found nothing"], [None, "found nothing"]], out.stderr[-2000:]
    finally:
        shutil.rmtree(closed)
