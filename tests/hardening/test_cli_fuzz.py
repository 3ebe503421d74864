"""Fuzz every CLI command, enumerated from the Typer app itself (a new command is fuzzed as soon
as it is registered): each parameter in turn gets nasty values of its type (truncated, non-UTF-8,
deeply nested and NUL-filled files, folders that only look like pastcast's, calendar-edge dates,
huge and non-finite numbers, absurd sizes, unknown options) while the others keep valid ones.

Every case must end within its time limit with exit 0, 1 or 2 and, unless it succeeded, one
``error:`` line; a usage error (exit 2) leaves no file or folder behind, in the case's working
folder or among the inputs; never a traceback (``PASTCAST_DEBUG=1`` lets any unanticipated exception
through, which fails the case), never an allocation beyond a few GiB (the address space is
capped while a case runs), and never a success on an input file that is invalid.

These are the core's commands; a plugin's are fuzzed by its own suite with this harness
(``fuzz_case``, ``cases``: the arena's in arena/tests/test_arena_cli_fuzz.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import shutil
import signal
import types
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer
from nasty import Workspace, build_workspace
from typer.testing import CliRunner, Result

from pastcast.cli import app
from pastcast.cli._app import COMMANDS as CORE

ROOT = typer.main.get_command(app)
Command = Any  # typer's command class


def _leaves(cmd: Command, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Command]]:
    subs = getattr(cmd, "commands", None)
    if subs:
        for name, sub in sorted(subs.items()):
            yield from _leaves(sub, (*path, name))
    else:
        yield path, cmd


COMMANDS = {path: cmd for name in CORE for path, cmd in _leaves(ROOT.commands[name], (name,))}

# -- valid values ---------------------------------------------------------------------------------
# For every command, the values its parameters keep while one of them is fuzzed: the required
# ones, and those whose defaults would reach outside (the network) or take long.
Skeleton = Callable[[Workspace, Path], dict[str, Any]]


def _copied(src: Path, dst: Path) -> Path:
    """A copy to change (an append), leaving the shared one alone."""
    if not dst.exists():
        shutil.copytree(src, dst)
    return dst


SKELETONS: dict[tuple[str, ...], Skeleton] = {
    ("audit", "construction"): lambda ws, t: {"datasets": [ws.good["dataset"]], "draws": "100"},
    ("audit", "run"): lambda ws, t: {"run_log": ws.good["run_log"]},
    ("corpus", "append"): lambda ws, t: {
        "source": f"jsonl:{ws.good['docs']}",
        "index": _copied(ws.good["index"], t / "idx"),
        "skip_duplicates": True,
    },
    ("corpus", "build"): lambda ws, t: {"source": f"jsonl:{ws.good['docs']}", "out": t / "idx"},
    ("corpus", "read"): lambda ws, t: {
        "target": ws.good["index"],
        "doc_id": "d0",
        "as_of": "2030-01-01",
    },
    ("corpus", "search"): lambda ws, t: {
        "target": ws.good["index"],
        "query": "some words",
        "as_of": "2030-01-01",
    },
    ("data", "import", "forecastbench"): lambda ws, t: {
        "path_or_url": ws.good["fb"],
        "out": t / "ds",
    },
    ("data", "import", "polymarket"): lambda ws, t: {
        "out": t / "ds",
        "base_url": "http://127.0.0.1:9",
        "clob_url": "http://127.0.0.1:9",
        "data_url": "http://127.0.0.1:9",
    },
    ("data", "info"): lambda ws, t: {"directory": ws.good["dataset"]},
    ("data", "curate"): lambda ws, t: {
        "dataset": ws.good["dataset"],
        "corpus": ws.good["index"],
        "judge": f"scripted:{_judge_file(t)}",
        "out": t / "curated",
        "retrieval": "bm25",
    },
    ("data", "show"): lambda ws, t: {"event": "ev-rocket", "dataset": str(ws.good["dataset"])},
    ("demo",): lambda ws, t: {"out": t / "demo"},
    ("run",): lambda ws, t: {
        "agent": ["uniform"],
        "dataset": ws.good["dataset"],
        "out": t / "runs" / "run.jsonl",
    },
    ("score",): lambda ws, t: {"run_logs": [ws.good["run_log"]], "bootstrap": "20"},
    ("stats", "coverage"): lambda ws, t: {"run_logs": [ws.good["run_log"]], "bootstrap": "20"},
    ("stats", "longitudinal"): lambda ws, t: {
        "run_logs": [ws.good["run_log"]],
        "bootstrap": "20",
    },
    ("stats", "memory-cost"): lambda ws, t: {
        "run_logs": [ws.good["run_log"]],
        "bootstrap": "20",
    },
    ("stats", "power"): lambda ws, t: {"alpha": "0.02"},
    ("export", "rewards"): lambda ws, t: {"run_logs": [ws.good["run_log"]], "out": t / "x"},
    ("export", "sft"): lambda ws, t: {"run_logs": [ws.good["run_log"]], "out": t / "x"},
    ("export", "table"): lambda ws, t: {"run_logs": [ws.good["run_log"]], "out": t / "x"},
    ("import", "inspect-log"): lambda ws, t: {"log": t / "inspect.eval"},
    ("plan",): lambda ws, t: {"file": _plan_file(ws, t)},
    ("report",): lambda ws, t: {"run_logs": [ws.good["run_log"]], "out": t / "report"},
    ("toolserver", "serve"): lambda ws, t: {"event": "e0"},
    ("train", "sft"): lambda ws, t: {
        "run_logs": [ws.good["run_log"]],
        "out": t / "study",
        "dataset": ws.good["dataset"],
    },
    ("view",): lambda ws, t: {"run_dirs": [ws.good["run_log"].parent]},
    ("audit", "dataset"): lambda ws, t: {"spec": ws.good["dataset"]},
    ("audit", "retrievals"): lambda ws, t: {
        "run_log": ws.good["run_log"],
        "judge": f"scripted:{_judge_file(t)}",
        "dataset": ws.good["dataset"],
        "corpus": ws.good["index"],
        "sample": "4",
        "positives": "2",
        "negatives": "2",
        "draws": "100",
    },
    ("compare",): lambda ws, t: {
        "base": ws.good["run_log"],
        "tuned": ws.good["run_log"],
        "bootstrap": "20",
    },
    ("corpus", "feed"): lambda ws, t: {
        "feeds": _feeds_file(t),
        "spool": t / "spool",
        "once": True,
    },
    ("export", "inspect"): lambda ws, t: {"run_logs": [ws.good["run_log"]], "out": t / "x"},
    ("models", "probe-cutoff"): lambda ws, t: {
        "model": f"scripted:{_judge_file(t)}",
        "corpus": ws.good["index"],
        "per_month": "2",
        "draws": "100",
        "cache": t / "probe",
        "registry": t / "cutoffs.json",
    },
    ("presets", "show"): lambda ws, t: {"name": "dojo"},
    ("stats", "recoveries"): lambda ws, t: {
        "run_logs": [ws.good["run_log"]],
        "a": "agent=uniform",
        "b": "agent=market",
    },
}


def _feeds_file(t: Path) -> Path:
    """One feed read from a file: an RSS channel with one dated item."""
    feed = t / "feed.xml"
    feed.write_text(
        '<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        "<item><title>A headline</title><guid>g1</guid>"
        "<pubDate>Tue, 05 Mar 2024 10:00:00 GMT</pubDate>"
        "<description>Some text of the item.</description></item></channel></rss>"
    )
    path = t / "feeds.toml"
    path.write_text(f'[[feed]]\nname = "local"\npath = "{feed}"\n')
    return path


def _judge_file(t: Path) -> Path:
    path = t / "judge.json"  # a judge whose every reply is off the schema: events are removed
    path.write_text('["{}"]')
    return path


def _plan_file(ws: Workspace, t: Path) -> Path:
    path = t / "plan.toml"
    path.write_text(f'dataset = "{ws.good["dataset"]}"\n[[agents]]\nname = "uniform"\n')
    return path


# Commands whose work is long or reaches outside even with valid values (the full demo, the
# network, the Solidity compiler, servers that run until stopped, an HTML report's figures, an
# Inspect log that only Inspect writes, a fine-tuning study): only values that must be refused
# before any work are tried.
HEAVY = {
    ("demo",),
    ("data", "import", "polymarket"),
    ("view",),
    ("toolserver", "serve"),
    ("report",),
    ("import", "inspect-log"),
    ("train", "sft"),
}
# Parameters never fuzzed, with the reason.
SKIP: dict[tuple[str, ...], str] = {}
# Path parameters that name something to write (the others are read).
OUTPUTS = {
    "out",
    "cache",
    "snapshot",
    "registry",
    "toolserver serve index_dir",
    "corpus feed spool",
    "corpus feed index",
}
# Inputs a command reads with a note rather than a refusal: a run log cut off by a crash.
NOTED = {"truncated_log"}
DATES = {"as_of", "start", "resolve_by", "since", "until", "corpus_end"}


# -- nasty values ---------------------------------------------------------------------------------
class Value(typing.NamedTuple):
    label: str
    value: Any  # str, Path, list (a repeatable option), True (a flag), or None (drop it)
    must_refuse: bool


def _paths(ws: Workspace, t: Path, output: bool) -> list[Value]:
    # Made for this case alone: a command may fill an empty folder or write over a file.
    a_file, empty = t / "a-file", t / "empty-dir"
    a_file.write_bytes(b"\x00junk\xff")
    empty.mkdir()
    common = [
        Value("missing", t / "no" / "such" / "thing", not output),
        Value("under a file", a_file / "below", True),
        Value("name too long", t / ("x" * 5000), True),
        Value("a file for a folder", a_file, output),
        Value("dev null", Path("/dev/null"), True),
        Value("empty dir", empty, not output),
    ]
    if output:
        return common
    return common + [Value(name, path, name not in NOTED) for name, path in sorted(ws.bad.items())]


_STRINGS = [
    ("empty", ""),
    ("unknown", "nosuch"),
    ("undecodable bytes", "caf\udce9\udcff"),
    ("absurd size", "x" * 200_000),
    ("deep json", "[" * 100_000),
    ("huge integer", "9" * 5000),
    ("calendar start", "0001-01-01"),
    ("calendar end", "9999-12-31"),
    ("beyond the calendar", "99999-01-01"),
    ("punctuation", "a,b,,=:@@,{"),
    ("database url", "postgresql://nobody@127.0.0.1:9/db"),
]


SOURCE_KINDS = ("jsonl", "wcep", "reddit", "parquet", "ccnews")
BAD_AGENTS = [
    ("deep argument", "uniform:x=" + "[" * 100_000),
    ("unloadable model", "no-tools:model=scripted:/nonexistent/script.json"),
    ("unknown setting", "uniform@nosuch"),
    ("huge argument", "heuristic:max_reads=" + "9" * 5000),
    ("unknown argument", "heuristic:max_redas=4"),
]


def _strings(name: str, ws: Workspace) -> list[Value]:
    if name == "source":  # corpus build KIND:PATH: every importer on every nasty file
        return [
            Value(f"{kind}:{label}", f"{kind}:{path}", label not in NOTED)
            for kind in SOURCE_KINDS
            for label, path in sorted(ws.bad.items())
        ]
    if name == "agent":
        return [Value(label, spec, True) for label, spec in BAD_AGENTS]
    if name == "path_or_url":  # an import from a folder: every nasty file and folder
        return [Value(label, path, True) for label, path in sorted(ws.bad.items())]
    out = [Value(label, text, False) for label, text in _STRINGS]
    if name in DATES:  # these must name a day or an instant on the calendar
        refused = {"empty", "unknown", "absurd size", "beyond the calendar", "huge integer"}
        out = [v._replace(must_refuse=v.label in refused) for v in out]
        out.append(Value("offset off the calendar", "0001-01-01T00:00:00+01:00", True))
    return out


_INTS = [("huge", "9" * 30, False), ("int64 + 1", str(2**63), False), ("negative", "-1", False)]
_INTS += [("zero", "0", False), ("not a number", "twelve", True)]
_FLOATS = [("nan", "nan", False), ("infinity", "inf", False), ("overflow", "1e309", False)]
_FLOATS += [("negative", "-1", False), ("not a number", "half", True)]


def kind_of(param: Any) -> tuple[Any, bool]:
    """The parameter's value type (Optional removed) and whether it is repeatable."""
    kind = param.type_descriptor.annotation
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        kind = next(a for a in typing.get_args(kind) if a is not type(None))
    if typing.get_origin(kind) is list:
        return typing.get_args(kind)[0], True
    return kind, False


def values_for(
    param: Any, ws: Workspace, t: Path, command: str = "", outputs: set[str] = OUTPUTS
) -> list[Value]:
    kind, _ = kind_of(param)
    if getattr(param, "is_flag", False):
        return [Value("on", True, False)]
    if kind is Path:
        return _paths(ws, t, param.name in outputs or f"{command} {param.name}" in outputs)
    if kind is int:
        return [Value(label, text, refuse) for label, text, refuse in _INTS]
    if kind is float:
        return [Value(label, text, refuse) for label, text, refuse in _FLOATS]
    if typing.get_origin(kind) is typing.Literal:
        return [Value("not a choice", "nosuch", True)]
    return _strings(param.name, ws)


# -- running a case -------------------------------------------------------------------------------
def argv(path: tuple[str, ...], cmd: Command, values: dict[str, Any]) -> list[str]:
    out = list(path)
    for param in cmd.params:
        if param.name not in values or values[param.name] is None:
            continue
        value = values[param.name]
        items = value if isinstance(value, list) else [value]
        if param.param_type_name == "argument":
            out += [str(v) for v in items]
        elif value is True:
            out.append(param.opts[0])
        else:
            for v in items:
                out += [param.opts[0], str(v)]
    return out


def _vm_size() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


@contextmanager
def _memory_cap(extra: int = 4 << 30) -> Iterator[None]:
    """Cap the address space while a case runs, so an absurd allocation is a MemoryError (a
    failed case) instead of the machine's memory."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _vm_size() + extra
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


CASE_SECONDS = 60


class CaseHung(BaseException):
    """Raised in a case that runs too long. Not a TimeoutError: that is an OSError, which the
    commands turn into a one-line error, so a blocking open would pass as a refusal."""


def _hang(signum: int, frame: Any) -> None:
    raise CaseHung(f"still running after {CASE_SECONDS} s")


@contextmanager
def _time_limit() -> Iterator[None]:
    """A case that hangs (a blocking open, an endless loop) fails with CaseHung."""
    previous = signal.signal(signal.SIGALRM, _hang)
    signal.setitimer(signal.ITIMER_REAL, CASE_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def invoke(args: list[str], cwd: Path) -> Result:
    runner = CliRunner()
    before = Path.cwd()
    os.chdir(cwd)  # a relative or empty path lands here, never in the checkout
    try:
        with _memory_cap(), _time_limit():
            return runner.invoke(app, args, env={"PASTCAST_DEBUG": "1", "COLUMNS": "200"})
    finally:
        os.chdir(before)


def check(result: Result, args: list[str], must_refuse: bool) -> None:
    shown = " ".join(a if len(a) < 60 else a[:57] + "..." for a in args)
    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        raise AssertionError(f"{type(exc).__name__}: {str(exc)[:300]} | pastcast {shown}") from exc
    assert result.exit_code in (0, 1, 2), f"pastcast {shown}: exit {result.exit_code}"
    assert "Traceback" not in result.output, f"pastcast {shown}: {result.output[-2000:]}"
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("error")]
    if result.exit_code != 0:
        assert errors and lines[-1] == errors[-1] and len(errors) == 1, (
            f"pastcast {shown}: not one error line: {result.stderr[-2000:]!r}"
        )
        assert errors[0] != "error: aborted", f"pastcast {shown}: an error that names nothing"
    else:
        assert not must_refuse, f"pastcast {shown}: exit 0 on an invalid input: {result.output}"
        if "--json" in args:
            json.loads(result.stdout)


def cases(commands: dict[tuple[str, ...], Command], skip: dict[tuple[str, ...], str]) -> list[Any]:
    """A case per command and parameter (``skip``: those never fuzzed), and an unknown option."""
    out = []
    for path, cmd in commands.items():
        out.append(pytest.param(path, None, "unknown option", id=f"{' '.join(path)}:--bogus"))
        for param in cmd.params:
            if (*path, param.name) in skip:
                continue
            out.append(pytest.param(path, param.name, None, id=f"{' '.join(path)}:{param.name}"))
    return out


# Files a command is documented to add beside a run log it reads (never over an input): the
# retrieval audit's result and its judgement cache.
# The columnar companion (``run.columns/``) is made by any reader of a log it does not cover;
# the dashboard keeps its first leaderboard beside the log (``run.dashboard-board.json``).
BESIDE_THE_LOG = (
    ".retrieval-audit.json",
    ".retrieval-judge-cache/",
    "run.columns/",
    ".dashboard-board.json",
)


def _beside_the_log(name: str) -> bool:
    return any(part in name for part in BESIDE_THE_LOG)


def _tree(*roots: Path) -> dict[str, bytes]:
    """Every file (its hash) and folder under ``roots``, those beside the log left out."""
    out: dict[str, bytes] = {}
    for root in roots:
        for p in root.rglob("*"):
            name = str(p)
            if _beside_the_log(name):
                continue
            out[name] = hashlib.sha256(p.read_bytes()).digest() if p.is_file() else b"dir"
    return out


def check_nothing_left(before: dict[str, bytes], after: dict[str, bytes], args: list[str]) -> None:
    """A usage error writes nothing: the tree is as it was before the command."""
    shown = " ".join(a if len(a) < 60 else a[:57] + "..." for a in args)
    made = sorted(k for k in after.keys() - before.keys())
    changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    assert not made and not changed, f"pastcast {shown}: exit 2 left {(made + changed)[:5]}"


def _fingerprint(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).digest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@contextmanager
def kept(ws: Workspace) -> Iterator[Workspace]:
    """``ws`` while the cases run, checked unchanged after them."""
    before = _fingerprint(ws.root)
    yield ws
    # Nothing destroyed: every input the cases read is as it was.
    after = _fingerprint(ws.root)
    changed = sorted(
        k
        for k in before.keys() | after.keys()
        if before.get(k) != after.get(k) and not (k not in before and _beside_the_log(k))
    )
    assert not changed, f"inputs changed by the fuzz cases: {changed[:10]}"


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    with kept(build_workspace(tmp_path_factory.mktemp("fuzz"))) as ws:
        yield ws


@pytest.fixture(autouse=True)
def _no_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """`view` (and a plugin's servers) would serve forever: their server returns at once here."""
    try:
        import uvicorn
    except ImportError:
        return
    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)
    monkeypatch.setattr(uvicorn.Server, "run", lambda *a, **k: None)


@dataclass(frozen=True)
class Suite:
    """The commands one suite fuzzes, with their valid values, the heavy ones, and the path
    parameters that name something to write."""

    commands: dict[tuple[str, ...], Command]
    skeletons: dict[tuple[str, ...], Skeleton]
    heavy: set[tuple[str, ...]]
    outputs: set[str]


CORE_SUITE = Suite(COMMANDS, SKELETONS, HEAVY, OUTPUTS)


def fuzz_case(
    suite: Suite,
    path: tuple[str, ...],
    name: str | None,
    special: str | None,
    workspace: Workspace,
    tmp_path: Path,
) -> None:
    """One case: the command's parameter ``name`` given each nasty value in turn (or, with
    ``special`` "unknown option", an option it does not have)."""
    cmd = suite.commands[path]
    base = suite.skeletons.get(path, lambda ws, t: {})
    if special == "unknown option":
        args = [*argv(path, cmd, base(workspace, tmp_path)), "--bogus-option", "1"]
        before = _tree(tmp_path, workspace.root)
        check(invoke(args, tmp_path), args, must_refuse=True)
        check_nothing_left(before, _tree(tmp_path, workspace.root), args)
        return
    param = next(p for p in cmd.params if p.name == name)
    _, repeatable = kind_of(param)
    failures = []
    tried = values_for(param, workspace, tmp_path, " ".join(path), suite.outputs)
    for i, case in enumerate(tried):
        if path in suite.heavy and not case.must_refuse:
            continue
        scratch = tmp_path / f"case{i}"
        scratch.mkdir()
        values = base(workspace, scratch)
        values[param.name] = [case.value] if repeatable and case.value is not True else case.value
        args = argv(path, cmd, values)
        before = _tree(tmp_path, workspace.root)
        try:
            result = invoke(args, scratch)
            check(result, args, case.must_refuse)
            if result.exit_code == 2:
                check_nothing_left(before, _tree(tmp_path, workspace.root), args)
        except AssertionError as exc:  # every value is tried; all problems are reported
            failures.append(f"[{case.label}] {str(exc).splitlines()[0][:600]}")
        except CaseHung as exc:
            failures.append(f"[{case.label}] {exc} | pastcast {' '.join(args)[:300]}")
    assert not failures, "\n".join(failures)


def check_skeletons(suite: Suite) -> None:
    """Every command with required parameters has valid values, for commands that exist."""
    for path, cmd in suite.commands.items():
        required = [p.name for p in cmd.params if p.required]
        if required:
            assert path in suite.skeletons, f"pastcast {' '.join(path)}: add it to SKELETONS"
    assert set(suite.skeletons) <= set(suite.commands), "SKELETONS names no command"


@pytest.mark.timeout(600, method="thread")  # the signal is taken by each case
@pytest.mark.parametrize(("path", "name", "special"), cases(COMMANDS, SKIP))
@pytest.mark.slow
def test_fuzz(
    path: tuple[str, ...],
    name: str | None,
    special: str | None,
    workspace: Workspace,
    tmp_path: Path,
) -> None:
    fuzz_case(CORE_SUITE, path, name, special, workspace, tmp_path)


def test_every_command_with_required_parameters_has_valid_values() -> None:
    check_skeletons(CORE_SUITE)
