"""The tiers from measured durations (tests/_tiers.py): which tests are slow, the fast tier's
time limit, and what a recording run writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from _tiers import DURATIONS, SLOW_S, Durations, load_factor, merged

TESTS = Path(__file__).resolve().parents[1]

_CONFTEST = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
pytest_plugins = ["_tiers"]
"""
_INI = "[pytest]\nmarkers =\n    slow: slow\n    train: train\n    waits: waits\n"
_MODULE = """
import os
import time
import pytest

@pytest.fixture(scope="module")
def server():
    time.sleep(0.6)
    return "up"

def test_quick():
    pass

def test_sleepy():
    time.sleep(float(os.environ.get("SLEEPY_S", "0.6")))

def test_first_user(server):
    assert server == "up"

def test_second_user(server):
    assert server == "up"

@pytest.mark.train
def test_a_kind_slow_whatever_it_measures():
    pass

def test_skipped():
    pytest.skip("not here")
"""


_WAITING = """
import pytest

def test_before():
    pass

@pytest.mark.waits
def test_waiting():
    pass

def test_between():
    pass

@pytest.mark.waits
def test_waiting_too():
    pass

def test_after():
    pass
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "conftest.py").write_text(_CONFTEST)
    (tmp_path / "pytest.ini").write_text(_INI)
    (tmp_path / "test_mod.py").write_text(textwrap.dedent(_MODULE))
    return tmp_path


def _pytest(project: Path, *args: str, sleepy_s: float = 0.6) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=project,
        # no third-party plugin (xdist, hypothesis, anyio...): their imports cost 1.5 s a run
        env={**os.environ, "SLEEPY_S": str(sleepy_s), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_recording_run_writes_own_times_and_shared_fixtures(tmp_path: Path) -> None:
    project = _project(tmp_path)
    file = project / "durations.json"
    file.write_text(json.dumps({"tests": {"test_mod.py::test_skipped": 9.0, "gone.py::t": 1.0}}))
    done = _pytest(project, "--record-durations", "--durations-file", str(file), "test_mod.py")
    assert done.returncode == 0, done.stdout + done.stderr
    written = Durations.read(file)
    # the sleeper and the module fixture are written down; the fixture's users are not charged
    # for it, the skipped test loses its entry, a test this run did not select keeps its own
    assert set(written.tests) == {"test_mod.py::test_sleepy", "gone.py::t"}
    assert SLOW_S <= written.tests["test_mod.py::test_sleepy"] < 1.1  # not its 0.6 s twice
    assert list(written.fixtures) == ["test_mod.py::server"]
    assert SLOW_S <= written.fixtures["test_mod.py::server"] < 1.1


def test_the_file_decides_the_slow_tier_and_the_fast_tier_has_a_time_limit(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    file = project / "durations.json"
    Durations({"test_mod.py::test_quick": 3.0}, {"test_mod.py::server": 2.5}).write(file)
    # the fast tier: what the file does not put in the slow one; the sleeper, measured fast
    # before, is over the limit now: it fails, naming the way out
    limit = 0.3
    over = limit * 3 * load_factor()  # past the limit however busy the machine gets meanwhile
    done = _pytest(
        project,
        "--durations-file",
        str(file),
        "-m",
        "not slow",
        f"--fast-limit={limit}",
        sleepy_s=over,
    )
    assert done.returncode == 1
    assert "1 failed, 1 skipped, 4 deselected" in done.stdout
    assert "test_mod.py::test_sleepy took" in done.stdout
    assert "--record-durations test_mod.py" in done.stdout


def test_the_nearest_definition_of_a_shared_fixture_decides() -> None:
    durations = Durations(
        {"tests/a/test_x.py::test_long": 2.5},
        {"::db": 3.0, "tests/a::db": 0.1, "tests/b/test_y.py::db": 4.0, "tests/c::cache": 9.0},
    )
    assert durations.is_slow("tests/a/test_x.py::test_long", [])
    assert not durations.is_slow("tests/a/test_x.py::test_short", ["db"])  # its conftest's db
    assert durations.is_slow("tests/d/test_z.py::test", ["db"])  # the root's
    assert durations.slow_fixtures("tests/b/test_y.py::test", ["db"]) == ["tests/b/test_y.py::db"]
    assert not durations.is_slow("tests/cd/test_z.py::test", ["cache"])  # not tests/c's


def test_a_whole_suite_run_writes_the_file_anew() -> None:
    before = Durations({"old::t": 3.0, "kept::t": 1.0}, {"old::f": 3.0})
    after = merged(before, {"kept::t": 0.2, "new::t": 2.26}, {"new::f": 0.7}, [], True)
    assert after == Durations({"new::t": 2.3}, {"new::f": 0.7})
    partial = merged(before, {"kept::t": 0.2}, {}, ["old::t"], False)
    assert partial == Durations({}, {"old::f": 3.0})


def test_the_checked_in_file_is_read_as_written() -> None:
    durations = Durations.read(DURATIONS)
    assert durations.tests and durations.fixtures, "tests/durations.json is missing or empty"
    assert all(value > 0 for value in [*durations.tests.values(), *durations.fixtures.values()])


def test_waiting_tests_come_first_and_go_to_one_worker(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / "test_wait.py").write_text(textwrap.dedent(_WAITING))
    listed = _pytest(project, "--collect-only", "test_mod.py", "test_wait.py")
    ids = [line for line in listed.stdout.splitlines() if "::" in line]
    waiting = ["test_wait.py::test_waiting", "test_wait.py::test_waiting_too"]
    assert ids[:2] == waiting and len(ids) == 11, listed.stdout
    assert [i for i in ids if "test_wait.py" in i][2:] == [
        "test_wait.py::test_before",
        "test_wait.py::test_between",
        "test_wait.py::test_after",
    ]
    # as `make test` runs them: xdist's first batches are consecutive tests
    xdist = ("-p", "xdist.plugin", "-p", "xdist.looponfail", "-n", "3", "-vv")  # -vv: -v past -q
    run = _pytest(project, *xdist, "test_mod.py", "test_wait.py")
    workers = {  # "[gw1] [ 50%] PASSED test_wait.py::test_waiting"
        line.split()[-1]: line.split()[0]
        for line in run.stdout.splitlines()
        if line.startswith("[gw") and " PASSED " in line
    }
    assert waiting[0] in workers and waiting[1] in workers, run.stdout + run.stderr
    assert workers[waiting[0]] == workers[waiting[1]], workers
