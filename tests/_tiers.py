"""The test tiers, decided by measured durations (a pytest plugin, loaded by conftest.py).

``tests/durations.json`` holds what the suite last measured: each test's own seconds (setup,
call and teardown, less the shared fixtures it set up) and each shared fixture's (scope above
function) set-up seconds, for those that took at least ``SLOW_S``. A test is slow when its
own time is written there, when it uses a shared fixture whose set-up is (whichever test comes
first pays it), or when it is of a kind that is slow whatever it checks (a real model server, a
fine-tuning run). ``make test-fast`` leaves the slow ones out.

In the fast tier's run (``-m "not slow"``, ``make test-fast``), a test that takes more than
``--fast-limit`` seconds (5 by default; its set-up and call; stretched by the machine's load where
its cores are asked for more than once) fails, saying so (the whole suite's run only measures):
a test that became slow, or a new one that is, is caught by the fast run that sees it, and
``pytest --record-durations`` (``make durations``) measures again.

``--record-durations`` writes the file from the run: the tests that ran replace their entries,
skipped ones lose theirs (their time is not known here); a run of the whole suite with no
selection writes the file anew, any other keeps the entries of the tests it did not run.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

DURATIONS = Path(__file__).resolve().parent / "durations.json"
SLOW_S = 0.5
"""A test (or a shared fixture's set-up) measured at this or more is in the slow tier, and only
such times are written down: what the file does not name took less. The bar is low so that the
fast tier runs in about three minutes on two cores (README's Development section)."""
FAST_LIMIT_S = 5.0
"""A test outside the slow tier fails past this (its set-up and call), unless told otherwise."""
SLOW_KINDS = ("local_llm", "remote_llm", "train")
"""Marks of tests that are slow whatever they check: a real model server, a fine-tuning run."""
WAITS = "waits"
"""The mark of a test that spends minutes waiting on the wall clock with its core idle (a live
service on a scaled clock). Such tests come first in the collection, so that xdist's first batch
of consecutive tests gives them all to one worker, which waits through them while the others,
one per core (``make test`` starts one worker more than the cores), keep the cores busy. Last in
the collection, they held a worker idle at the end of the run."""


@dataclass(frozen=True)
class Durations:
    """What the file holds: seconds by test node id, and by shared fixture (``BASEID::NAME``,
    the base id being where the fixture is defined: a conftest's folder or a module)."""

    tests: Mapping[str, float] = field(default_factory=dict)
    fixtures: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> Durations:
        if not path.is_file():
            return cls()
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(dict(data.get("tests", {})), dict(data.get("fixtures", {})))

    def write(self, path: Path) -> None:
        data = {
            "about": "measured by `make durations` (pytest --record-durations); tests/_tiers.py",
            "tests": {k: self.tests[k] for k in sorted(self.tests)},
            "fixtures": {k: self.fixtures[k] for k in sorted(self.fixtures)},
        }
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")

    def slow_fixtures(self, nodeid: str, fixturenames: Iterable[str]) -> list[str]:
        """The shared fixtures of ``SLOW_S`` or more that a test using these fixture names sets
        up (the definition nearest the test where several share a name)."""
        found = []
        for name in fixturenames:
            keys = [k for k in self.fixtures if k.rpartition("::")[2] == name]
            visible = [k for k in keys if _encloses(k.rpartition("::")[0], nodeid)]
            if visible:
                nearest = max(visible, key=len)
                if self.fixtures[nearest] >= SLOW_S:
                    found.append(nearest)
        return found

    def is_slow(self, nodeid: str, fixturenames: Iterable[str]) -> bool:
        return self.tests.get(nodeid, 0.0) >= SLOW_S or bool(
            self.slow_fixtures(nodeid, fixturenames)
        )


def load_factor() -> float:
    """How many times over the machine's cores are asked for (the 1-minute load average over the
    core count), at least 1: on a shared machine every test takes that much longer, so the fast
    tier's limit stretches by it rather than failing tests for other people's work."""
    try:
        return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
    except OSError:  # no load average on this platform
        return 1.0


def _encloses(baseid: str, nodeid: str) -> bool:
    """Whether a fixture defined at ``baseid`` (a folder, a module, a class) is seen by the test."""
    return baseid == "" or nodeid == baseid or nodeid.startswith((baseid + "/", baseid + "::"))


def merged(
    before: Durations,
    tests: Mapping[str, float],
    fixtures: Mapping[str, float],
    skipped: Iterable[str],
    whole_suite: bool,
) -> Durations:
    """The file after a recording run: ``tests`` and ``fixtures`` measured by it (every one
    that ran, whatever its time), ``skipped`` the tests it skipped."""
    kept_tests = {} if whole_suite else dict(before.tests)
    kept_fixtures = {} if whole_suite else dict(before.fixtures)
    for nodeid in [*skipped, *tests]:
        kept_tests.pop(nodeid, None)
    for key in fixtures:
        kept_fixtures.pop(key, None)
    kept_tests.update({k: round(v, 1) for k, v in tests.items() if v >= SLOW_S})
    kept_fixtures.update({k: round(v, 1) for k, v in fixtures.items() if v >= SLOW_S})
    return Durations(kept_tests, kept_fixtures)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tiers", "test tiers by measured durations (tests/_tiers.py)")
    group.addoption(
        "--record-durations",
        action="store_true",
        help=f"write the measured durations to {DURATIONS.name} (no time limit is enforced)",
    )
    group.addoption(
        "--durations-file",
        type=Path,
        default=DURATIONS,
        metavar="PATH",
        help=f"the durations read and written (default: tests/{DURATIONS.name})",
    )
    group.addoption(
        "--fast-limit",
        type=float,
        default=FAST_LIMIT_S,
        metavar="SECONDS",
        help="fail a test outside the slow tier that takes longer (0: no limit; "
        f"default {FAST_LIMIT_S:g})",
    )


class _Recorder:
    """Times every test's phases and every shared fixture's set-up during the session."""

    def __init__(self) -> None:
        self.own: dict[str, float] = {}
        self.shared: dict[str, float] = {}
        self.skipped: set[str] = set()
        self.in_setup: dict[str, float] = {}  # shared fixture seconds inside each test's set-up
        self.current: str | None = None

    def fixture(self, fixturedef: Any, seconds: float) -> None:
        if fixturedef.scope == "function":
            return
        key = f"{fixturedef.baseid}::{fixturedef.argname}"
        self.shared[key] = max(self.shared.get(key, 0.0), seconds)
        if self.current is not None:
            self.in_setup[self.current] = self.in_setup.get(self.current, 0.0) + seconds

    def report(self, report: pytest.TestReport) -> None:
        if report.skipped and report.when in ("setup", "call"):
            self.skipped.add(report.nodeid)
        self.own[report.nodeid] = self.own.get(report.nodeid, 0.0) + report.duration
        if report.when == "setup":
            self.own[report.nodeid] -= self.in_setup.pop(report.nodeid, 0.0)

    def measured(self) -> dict[str, float]:
        return {k: max(v, 0.0) for k, v in self.own.items() if k not in self.skipped}


_RECORDER = pytest.StashKey[_Recorder]()
_SETUP_STARTED = pytest.StashKey[float]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_RECORDER] = _Recorder()


@pytest.hookimpl(tryfirst=True)  # before -m deselects by the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    durations = Durations.read(config.getoption("durations_file"))
    for item in items:
        kind = any(item.get_closest_marker(k) for k in SLOW_KINDS)
        if kind or durations.is_slow(item.nodeid, getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
    items.sort(key=lambda item: item.get_closest_marker(WAITS) is None)  # stable: waits first


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(
    fixturedef: Any, request: pytest.FixtureRequest
) -> Generator[None, Any, Any]:
    start = time.perf_counter()
    try:
        return (yield)
    finally:
        request.config.stash[_RECORDER].fixture(fixturedef, time.perf_counter() - start)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    recorder = item.config.stash[_RECORDER]
    recorder.current = item.nodeid
    item.stash[_SETUP_STARTED] = time.perf_counter()
    try:
        return (yield)
    finally:
        recorder.current = None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    item.config.stash[_RECORDER].report(report)
    limit = item.config.getoption("fast_limit")
    fast_run = "not slow" in (item.config.getoption("markexpr") or "")
    if (
        report.when == "call"
        and fast_run
        and report.passed
        and limit
        and not item.config.getoption("record_durations")
        and item.get_closest_marker("slow") is None
    ):
        took = time.perf_counter() - item.stash.get(_SETUP_STARTED, time.perf_counter())
        busy = load_factor()
        if took > limit * busy:
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} took {took:.1f} s (set-up and call), over the fast tier's "
                f"{limit:g} s (x {busy:.1f} for the machine's load), and is not in the slow tier: "
                f"measure it again with `pytest --record-durations {item.nodeid.split('::')[0]}` "
                "(tests/_tiers.py), or make it faster"
            )
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    config = session.config
    if not config.getoption("record_durations") or getattr(config, "workerinput", None):
        return
    recorder = config.stash[_RECORDER]
    selected = config.option.file_or_dir or config.option.keyword or config.option.markexpr
    interrupted = session.shouldfail or session.shouldstop or config.option.maxfail
    whole = not (selected or interrupted or getattr(config.option, "deselect", None))
    path = config.getoption("durations_file")
    before = Durations.read(path)
    merged(before, recorder.measured(), recorder.shared, recorder.skipped, whole).write(path)
