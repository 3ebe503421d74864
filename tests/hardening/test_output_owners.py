"""Writers that never overwrite the user's files: `report --out` writes only into a folder
pastcast made for a report (or an empty one), `toolserver serve --record` only where nothing is,
and the one place that serves web apps refuses an address it cannot listen on before anything is
made. Each refusal is one `error:` line, exit 2, with the user's files as they were."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.agents import agent_spec
from pastcast.cli import app
from pastcast.dataset import save_dataset
from pastcast.owned import MARKER, check_new_file, claim_dir, mark, write_new_file
from pastcast.runner import RunConfig, run_benchmark
from pastcast.serving import listen

runner = CliRunner()


def _snapshot(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def _refused(args: list[str], *names: str, code: int = 2, stdin: str | None = None) -> None:
    result = runner.invoke(app, args, input=stdin)
    assert result.exit_code == code, result.output
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    for name in names:
        assert name in result.stderr


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run") / "run.jsonl"
    cfg = RunConfig(agents=(agent_spec("uniform"),))
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), cfg, out, progress=False)
    return out


def _report(log: Path, out: Path) -> list[str]:
    return ["report", str(log), "--out", str(out), "--bootstrap", "0", "--figure", "reliability"]


# -- report --out --


def test_report_never_writes_into_a_users_folder(log: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "report.html").write_bytes(b"my own report, years of work")
    (mine / "tables.md").write_bytes(b"my tables")
    before = _snapshot(mine)
    _refused(_report(log, mine), str(mine), "not made by pastcast")
    assert _snapshot(mine) == before


def test_report_never_writes_into_a_folder_pastcast_made_for_something_else(
    log: Path, tmp_path: Path
) -> None:
    index = tmp_path / "index"
    index.mkdir()
    mark(index, "index")
    (index / "vocab.json").write_text("[]")
    before = _snapshot(index)
    _refused(_report(log, index), "holds a pastcast index")
    assert _snapshot(index) == before


def test_report_refuses_a_file_as_its_folder(log: Path, tmp_path: Path) -> None:
    mine = tmp_path / "notes.txt"
    mine.write_bytes(b"notes")
    _refused(_report(log, mine), "not a folder")
    assert mine.read_bytes() == b"notes"


def test_report_refuses_a_link_to_a_users_folder(log: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_bytes(b"years of work")
    link = tmp_path / "link"
    link.symlink_to(mine, target_is_directory=True)
    _refused(_report(log, link), "not made by pastcast")
    assert _snapshot(mine) == {"thesis.tex": b"years of work"}


def test_report_writes_into_an_empty_folder_and_again_into_its_own(
    log: Path, tmp_path: Path
) -> None:
    out = tmp_path / "empty"
    out.mkdir()
    for _ in range(2):
        result = runner.invoke(app, _report(log, out))
        assert result.exit_code == 0, result.output
    assert (out / "report.html").is_file() and json.loads((out / MARKER).read_text())["kind"] == (
        "report"
    )


# -- toolserver serve --record --


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ds") / "ds"
    save_dataset(tiny_dataset(), path)
    return path


FORECAST = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "pastcast/forecast",
        "params": {"forecast": {"probs": {"Yes": 0.6, "No": 0.4}}},
    }
)


def _serve(dataset_dir: Path, record: Path) -> list[str]:
    return ["toolserver", "serve", "--event", "ev-rocket", "--dataset", str(dataset_dir)] + [
        "--record",
        str(record),
    ]


def test_record_never_replaces_an_existing_file(dataset_dir: Path, tmp_path: Path) -> None:
    mine = tmp_path / "notes.json"
    mine.write_bytes(b"my notes")
    _refused(_serve(dataset_dir, mine), str(mine), "exists", stdin=FORECAST + "\n")
    assert mine.read_bytes() == b"my notes"


def test_record_never_writes_through_a_link(dataset_dir: Path, tmp_path: Path) -> None:
    link = tmp_path / "record.json"
    link.symlink_to(tmp_path / "elsewhere.json")  # to nothing: writing would make the target
    _refused(_serve(dataset_dir, link), "exists", stdin=FORECAST + "\n")
    assert not (tmp_path / "elsewhere.json").exists()


def test_record_refuses_a_fifo(dataset_dir: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "record.json"
    os.mkfifo(fifo)
    _refused(_serve(dataset_dir, fifo), "exists", stdin=FORECAST + "\n")


def test_record_is_written_where_nothing_was(dataset_dir: Path, tmp_path: Path) -> None:
    record = tmp_path / "new" / "record.json"
    result = runner.invoke(app, _serve(dataset_dir, record), input=FORECAST + "\n")
    assert result.exit_code == 0, result.output
    assert json.loads(record.read_text())["forecast"]["probs"] == {"Yes": 0.6, "No": 0.4}
    assert sorted(p.name for p in record.parent.iterdir()) == ["record.json"]


def test_a_file_that_appears_meanwhile_is_kept_and_so_is_the_record(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    check_new_file(path)
    path.write_bytes(b"theirs")  # written by someone else while the episode ran
    with pytest.raises(FileExistsError, match=r"appeared while .*kept in "):
        write_new_file(path, b"ours")
    assert path.read_bytes() == b"theirs"
    kept = [p for p in tmp_path.iterdir() if p.name != "record.json"]
    assert [p.read_bytes() for p in kept] == [b"ours"]


def test_claiming_a_folder_refuses_what_is_not_ours(tmp_path: Path) -> None:
    (tmp_path / "user").mkdir()
    (tmp_path / "user" / "a.txt").write_text("a")
    with pytest.raises(FileExistsError, match="not made by pastcast"):
        claim_dir(tmp_path / "user", "report")
    assert claim_dir(tmp_path / "fresh" / "deep", "report").is_dir()


# -- serving on an address --


@pytest.fixture
def busy_port() -> Iterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def test_listen_names_a_busy_port_and_an_unresolvable_host(busy_port: int) -> None:
    with pytest.raises(ValueError, match=f"cannot listen on 127.0.0.1:{busy_port}: "):
        listen("127.0.0.1", busy_port)
    with pytest.raises(ValueError, match="does not resolve"):
        listen("no-such-host.invalid", 8000)
    with listen("127.0.0.1", 0) as sock:
        assert sock.getsockname()[1] > 0


def test_view_on_a_busy_port_is_one_error_line(log: Path, busy_port: int) -> None:
    _refused(["view", str(log), "--port", str(busy_port)], f"127.0.0.1:{busy_port}")


def test_view_on_an_unresolvable_host_is_one_error_line(log: Path) -> None:
    _refused(["view", str(log), "--host", "no-such-host.invalid"], "does not resolve")


# -- read-only folders --


def test_report_into_a_read_only_folder_is_one_error_line(log: Path, read_only_disk: Path) -> None:
    _refused(_report(log, read_only_disk / "inside" / "report"), "cannot", code=1)


def test_record_in_a_read_only_folder_is_refused_before_serving(
    dataset_dir: Path, read_only_disk: Path
) -> None:
    record = read_only_disk / "inside" / "record.json"
    _refused(_serve(dataset_dir, record), "cannot write there", stdin=FORECAST + "\n")
