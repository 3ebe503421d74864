"""The README's tour, run as a reader would run it: every command of its shell block in order, in
a fresh folder beside ../shared, through bash and the installed ``pastcast``; each must succeed,
and each figure the README quotes about what a command prints must be what it prints now.

A few commands are not run here, each for a stated reason (a local model at minutes a step, a
remote judge); ``tests/docs/test_doc_commands.py`` still checks their shape.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from _doc_commands import ROOT, DocCommand, tour_commands

from _plugins import ARENA_MISSING, plugin_command

SHARED = ROOT.parent / "shared"
pytestmark = [
    pytest.mark.shared_data,
    pytest.mark.timeout(3600),  # the whole tour, about four minutes on an idle 2-core machine
    pytest.mark.skipif(
        not (SHARED / "data" / "forecastbench").is_dir(),
        reason="the tour imports ../shared/data/forecastbench, absent here",
    ),
]

# the commands of the tour this test does not run, by their start, with the reason
NOT_RUN: dict[str, str] = {
    "pastcast run --agent 'tool-agent:model=local:smollm2": "a local model at minutes a step: "
    "tests/models runs it (local_llm)",
    "pastcast export sft runs/llm/": "reads the local model's run above",
    "pastcast data curate world:0 --corpus runs/world-idx --judge openai:": "a remote judge "
    "(OPENAI_API_KEY): tests/curate runs curation with scripted judges",
}
if not plugin_command("arena"):  # the tour's arena commands come with the arena's distribution
    NOT_RUN["pastcast arena "] = ARENA_MISSING
SERVED = "pastcast view "  # runs until stopped: started on a free port, asked for a page
needs_arena = pytest.mark.skipif(not plugin_command("arena"), reason=ARENA_MISSING)


@dataclass(frozen=True)
class Ran:
    command: DocCommand
    stdout: str
    stderr: str


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PASTCAST_DEBUG"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "200"  # tables unwrapped, so figures read on one line
    return env


def _write_docs(folder: Path) -> None:
    """The tour's ``docs.jsonl``: a reader brings their own; here the embedded world's news."""
    from pastcast.world import build_world

    with (folder / "docs.jsonl").open("w", encoding="utf-8") as out:
        for doc in build_world(seed=0).documents:
            row = {"id": doc.id, "timestamp": doc.timestamp.isoformat(), "title": doc.title}
            out.write(json.dumps({**row, "text": doc.text, "source": doc.source}) + "\n")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve_and_fetch(command: str, cwd: Path) -> str:
    port = _free_port()
    proc = subprocess.Popen(
        ["bash", "-c", f"exec {command} --port {port}"],
        cwd=cwd,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as reply:
                    return str(reply.read().decode("utf-8"))
            except OSError:
                if proc.poll() is not None:
                    out = proc.stdout.read() if proc.stdout else ""
                    pytest.fail(f"{command}: exited {proc.returncode}: {out[-2000:]}")
                time.sleep(0.5)
        pytest.fail(f"{command}: served nothing within 120 s")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def tour(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Ran]]:
    base = tmp_path_factory.mktemp("tour")
    folder = base / "checkout"
    folder.mkdir()
    (base / "shared").symlink_to(SHARED)  # the README's ../shared/data paths
    _write_docs(folder)
    ran: dict[str, Ran] = {}
    last_search = ""
    for doc in tour_commands():
        text = doc.text
        if text.startswith("source "):
            continue  # the environment is the test's own
        if any(text.startswith(prefix) for prefix in NOT_RUN):
            continue
        if text.startswith(SERVED):
            page = _serve_and_fetch(text, folder)
            ran[text] = Ran(doc, page, "")
            continue
        if "DOC_ID" in text:
            hits = json.loads(last_search)
            text = text.replace("DOC_ID", hits[0]["id"] if isinstance(hits, list) else "")
        result = subprocess.run(
            ["bash", "-c", text],
            cwd=folder,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert result.returncode == 0, (
            f"README.md:{doc.line}: {text}: exit {result.returncode}\n"
            f"{result.stderr[-3000:]}\n{result.stdout[-2000:]}"
        )
        if "corpus search" in text and "--json" in text:
            last_search = result.stdout
        ran[doc.text] = Ran(doc, result.stdout, result.stderr)
    yield ran
    shutil.rmtree(base, ignore_errors=True)


def _output(tour: dict[str, Ran], start: str) -> str:
    found = [r for text, r in tour.items() if text.startswith(start)]
    assert found, f"the tour no longer runs a command starting {start!r}"
    return found[0].stdout + found[0].stderr


def _quoted(pattern: str) -> re.Match[str]:
    match = re.search(pattern, _readme())
    assert match, f"the README no longer says {pattern!r}: update this test with it"
    return match


def test_every_tour_command_runs(tour: dict[str, Ran]) -> None:
    expected = [
        c.text
        for c in tour_commands()
        if not c.text.startswith("source ") and not any(c.text.startswith(p) for p in NOT_RUN)
    ]
    assert list(tour) == expected
    assert len(expected) >= 25


def test_not_run_commands_are_still_in_the_tour() -> None:
    texts = [c.text for c in tour_commands()]
    for prefix in NOT_RUN:
        assert any(t.startswith(prefix) for t in texts), f"{prefix!r} left the tour: drop it here"


def test_dashboard_serves_the_demo(tour: dict[str, Ran]) -> None:
    page = _output(tour, SERVED)
    assert "<html" in page.lower() and "heuristic" in page


def test_the_demo_world_is_as_described() -> None:
    from pastcast.world import build_world

    match = _quoted(r"~(\d+) resolved events, ~(\d+)k dated news documents")
    world = build_world(seed=0)
    events, thousands = int(match.group(1)), int(match.group(2))
    assert abs(len(world.dataset.events) - events) <= events * 0.1
    assert abs(len(world.documents) - thousands * 1000) <= thousands * 100


@needs_arena
def test_the_arena_replay_gives_the_rounds_the_readme_promises(tour: dict[str, Ran]) -> None:
    promised = int(_quoted(r"then (\d+) commit-reveal rounds replayed").group(1))
    printed = _output(tour, "pastcast arena replay")
    match = re.search(r"(\d+) rounds, market Brier", printed)
    assert match, printed[-2000:]
    assert int(match.group(1)) == promised
    verified = _output(tour, "pastcast arena verify")
    assert f"{promised} rounds" in verified and ": OK" in verified


def test_the_coverage_figure_is_what_data_info_prints(tour: dict[str, Ran]) -> None:
    match = _quoted(r"The archive ends on (\d{4}-\d\d-\d\d): (\d+)% of this split's eval steps")
    printed = _output(tour, "pastcast data info runs/fb --corpus runs/wcep")
    warning = re.search(r"eval: \d+ of \d+ steps \((\d+)%\) have no document", printed)
    assert warning, printed[-2000:]
    assert warning.group(1) == match.group(2)
    assert f".. {match.group(1)}" in printed


def test_the_question_shown_by_id_prefix_is_found(tour: dict[str, Ran]) -> None:
    printed = _output(tour, "pastcast data show polymarket:")
    prefix = re.search(r"pastcast data show (polymarket:0x[0-9a-f]+)", _readme())
    assert prefix and prefix.group(1) in printed


@needs_arena
def test_the_simulation_prints_the_papers_tables(tour: dict[str, Ran]) -> None:
    printed = _output(tour, "pastcast arena simulate")
    assert "The paper's Tables 5-7" in printed
    for table in ("5", "6", "7"):  # the side-by-side rows of each table
        assert re.search(rf"^\W {table} +\W", printed, re.M), table


def test_the_construction_audit_figures_are_what_it_prints(tmp_path: Path) -> None:
    events = _quoted(r"ten worlds pooled: (\d+) binary events")
    figures = _quoted(
        r"gives AUC (0\.\d+) against a permutation null of median (0\.\d+), p = (0\.\d+)"
    )
    result = subprocess.run(
        ["bash", "-c", "pastcast audit construction world:{0..9}"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"{events.group(1)} binary events" in result.stdout
    row = re.search(
        r"^\s*dataset\s+\d+\s+\d+\s+\d+\s+(\S+)\s+\[.*?\]\s+(\S+)\s+(\S+)", result.stdout, re.M
    )
    assert row, result.stdout
    auc, null, p = row.groups()
    assert (auc, null) == (figures.group(1), figures.group(2))
    assert round(float(p), 3) == float(figures.group(3))
