"""Writers under hostile outputs. The run log's: one writer per file whatever name it is reached
by (hard links, symbolic links, another route to the folder), no lock file of its own, nothing
left behind by a refused or failed open (a full disk included), and outputs that are not files.
An index build's: a full disk leaves no work directory behind."""

from __future__ import annotations

import errno
import os
import threading
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.agents import agent_spec
from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.errors import FieldError
from pastcast.records import Document
from pastcast.runlog import RunHeader, RunLogWriter, header_path, read_run_log
from pastcast.runner import RunConfig, run_benchmark

UNIFORM = RunConfig(agents=(agent_spec("uniform"),))


def _run(out: Path, config: RunConfig = UNIFORM) -> None:
    run_benchmark(tiny_dataset(), ListBackend(tiny_documents()), config, out, progress=False)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    out = tmp_path / "a" / "run.jsonl"
    _run(out)
    return out


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def test_a_hard_link_to_a_log_being_written_is_refused(log: Path, tmp_path: Path) -> None:
    other = tmp_path / "b" / "run.jsonl"
    other.parent.mkdir()
    os.link(log, other)
    os.link(header_path(log), header_path(other))
    header = read_run_log(log).header
    busy = rf"being written by another process \(pid {os.getpid()}\)"
    with RunLogWriter(log, header), pytest.raises(FieldError, match=busy):
        RunLogWriter(other, header)
    RunLogWriter(other, header).close()  # free once the first writer is done


def test_a_symbolic_link_to_a_log_being_written_is_refused(log: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.jsonl"
    link.symlink_to(log)
    header_path(link).symlink_to(header_path(log))
    header = read_run_log(log).header
    with RunLogWriter(link, header), pytest.raises(FieldError, match="another process"):
        RunLogWriter(log, header)


def test_another_route_to_the_folder_is_refused(log: Path, tmp_path: Path) -> None:
    route = tmp_path / "route"
    route.symlink_to(log.parent, target_is_directory=True)
    header = read_run_log(log).header
    with RunLogWriter(log, header), pytest.raises(FieldError, match="another process"):
        RunLogWriter(route / ".." / "a" / "run.jsonl", header)


def test_a_users_lock_named_file_beside_the_log_is_never_touched(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    mine = tmp_path / "run.lock"
    mine.write_bytes(b"my notes about locks\n")
    _run(out)
    _run(out)  # and a resume
    assert mine.read_bytes() == b"my notes about locks\n"


def test_no_lock_file_is_made_beside_the_log(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    _run(out)
    # the header, the step file and its columnar companion's folder, and no lock file
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["run.columns", "run.header.json", "run.jsonl"]
    assert (tmp_path / "run.columns").is_dir()
    assert not [p for p in (tmp_path / "run.columns").iterdir() if "lock" in p.name]


def test_a_refused_resume_leaves_the_folder_as_it_was(log: Path) -> None:
    before = _listing(log.parent)
    other = RunConfig(agents=(agent_spec("heuristic"),))
    with pytest.raises(FieldError, match="write the run to a new run log"):
        _run(log, other)
    assert _listing(log.parent) == before


def test_a_refused_resume_of_a_header_without_steps_makes_no_step_file(log: Path) -> None:
    log.unlink()
    before = _listing(log.parent)
    with pytest.raises(FieldError):
        _run(log, RunConfig(agents=(agent_spec("heuristic"),)))
    assert _listing(log.parent) == before


def test_a_fifo_as_the_log_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "run.jsonl"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so a writer's open cannot block
    try:
        with pytest.raises(FieldError, match="not a regular file"):
            _run(fifo)
    finally:
        os.close(reader)
    assert not header_path(fifo).exists()


def test_a_folder_as_the_log_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "run.jsonl"
    folder.mkdir()
    with pytest.raises(FieldError, match=r"run.jsonl: cannot open it for writing"):
        _run(folder)
    assert list(folder.iterdir()) == [] and not header_path(folder).exists()


def test_a_symbolic_link_to_nothing_is_refused_and_its_target_not_made(tmp_path: Path) -> None:
    link = tmp_path / "run.jsonl"
    link.symlink_to(tmp_path / "elsewhere" / "target.jsonl")
    with pytest.raises(FieldError, match="symbolic link to nothing"):
        _run(link)
    assert not (tmp_path / "elsewhere").exists() and not header_path(link).exists()


def test_a_full_disk_while_writing_the_header_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.fsync

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError, match="No space left"):
        _run(tmp_path / "run.jsonl")
    monkeypatch.setattr(os, "fsync", real)
    assert list(tmp_path.iterdir()) == []


def test_a_run_on_a_full_tmpfs_leaves_nothing_behind(tiny_disk: Path) -> None:
    with pytest.raises(OSError):
        _run(tiny_disk / "run.jsonl")
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["filler"]


def test_a_resume_that_drops_a_torn_line_keeps_the_file_locked(log: Path, tmp_path: Path) -> None:
    with log.open("ab") as fh:
        fh.write(b'{"agent": "unif')  # a crash mid-record
    other = tmp_path / "hard.jsonl"
    os.link(log, other)
    os.link(header_path(log), header_path(other))
    header = read_run_log(log).header
    with RunLogWriter(log, header) as writer:
        assert not read_run_log(log).truncated_tail
        with pytest.raises(FieldError, match="another process"):
            RunLogWriter(other, header)
        assert len(writer.done) == 4


def test_a_retry_that_rewrites_the_log_locks_the_new_file(log: Path) -> None:
    lines = log.read_text().splitlines()
    failed = lines[0].replace('"usable":true', '"usable":false', 1)
    failed = failed.replace('"failure_reason":null', '"failure_reason":"provider_error"', 1)
    assert failed != lines[0]
    log.write_text("\n".join([failed, *lines[1:]]) + "\n")
    header = read_run_log(log).header
    with RunLogWriter(log, header, retry_failed=True) as writer:
        assert len(writer.attempts) == 1
        with pytest.raises(FieldError, match="another process"):
            RunLogWriter(log, header)  # the renamed-in step file is locked too
    assert len(read_run_log(log).steps) == 3


# -- an index build on a full disk --


def _docs(n: int) -> list[Document]:
    return [
        Document(
            id=f"d{i}",
            timestamp=datetime(2024, 3, 1 + i % 20, tzinfo=UTC),
            title="t",
            text="word " * 50,
        )
        for i in range(n)
    ]


def test_an_index_build_on_a_full_disk_leaves_no_work_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "save", full)
    with pytest.raises(OSError, match="No space left"):
        EmbeddedIndex.build(iter(_docs(30)), tmp_path / "idx")
    assert list(tmp_path.iterdir()) == []


def test_an_index_build_on_a_full_tmpfs_leaves_no_work_directory(tiny_disk: Path) -> None:
    with pytest.raises(OSError):
        EmbeddedIndex.build(iter(_docs(300)), tiny_disk / "idx")
    assert sorted(p.name for p in tiny_disk.iterdir()) == ["filler"]


def test_an_interrupted_index_build_still_keeps_its_partitions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def stopped(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "save", stopped)
    with pytest.raises(KeyboardInterrupt):
        EmbeddedIndex.build(iter(_docs(30)), tmp_path / "idx")
    assert (tmp_path / ".idx.building" / "parts").is_dir()  # for the next build to reuse


def test_a_log_in_a_read_only_folder_is_refused(read_only_disk: Path) -> None:
    with pytest.raises(FieldError, match="cannot open it for writing"):
        _run(read_only_disk / "inside" / "run.jsonl")


def test_writers_racing_for_a_new_log_one_wins(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    header = read_run_log_header_for(out)
    results: list[str] = []
    barrier = threading.Barrier(8)
    writers: list[RunLogWriter] = []

    def race() -> None:
        barrier.wait()
        try:
            writers.append(RunLogWriter(out, header))
            results.append("won")
        except FieldError:
            results.append("refused")

    threads = [threading.Thread(target=race) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["refused"] * 7 + ["won"]
    for writer in writers:
        writer.close()
    assert read_run_log(out).header == header


def read_run_log_header_for(out: Path) -> RunHeader:
    """The header a run writes (taken from a throwaway run beside ``out``)."""
    other = out.with_name("template.jsonl")
    _run(other)
    return read_run_log(other).header
