"""Files written whole or not at all, and never a temporary file left behind."""

from __future__ import annotations

import errno
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pastcast import atomic
from pastcast.atomic import atomic_directory, atomic_path, replace_directory, write_atomic
from pastcast.runlog import AgentSpec, RunHeader, RunLogWriter


def _full_disk(*_: object, **__: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_the_new_content_replaces_the_old_with_a_plain_files_permissions(tmp_path: Path) -> None:
    target = tmp_path / "a.json"
    target.write_text("old", encoding="utf-8")
    old_umask = os.umask(0o022)
    try:
        write_atomic(target, "néw")
    finally:
        os.umask(old_umask)
    assert target.read_text(encoding="utf-8") == "néw"
    assert target.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


def test_a_failing_writer_leaves_the_old_content_and_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "a.npy"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_path(target, suffix=".npy") as tmp:
        assert tmp.name.endswith(".npy") and tmp.parent == tmp_path
        tmp.write_bytes(b"half")
        raise RuntimeError("crash mid-write")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy"]


def test_a_full_disk_at_the_rename_leaves_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(atomic.os, "replace", _full_disk)
    with pytest.raises(OSError, match="No space"):
        write_atomic(tmp_path / "a.txt", "text")
    assert list(tmp_path.iterdir()) == []


def test_a_run_logs_header_that_cannot_be_renamed_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    header = RunHeader(
        run_id="r1",
        created_at=datetime(2025, 1, 1, tzinfo=UTC),
        dataset_id="d",
        config={},
        agents=(AgentSpec(name="m", factory="f"),),
        code_version="test",
    )
    monkeypatch.setattr(os, "replace", _full_disk)
    with pytest.raises(OSError, match="No space"):
        RunLogWriter(tmp_path / "run.jsonl", header)
    assert [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []


def test_the_html_reports_files_leave_no_temporary_file_on_a_full_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("jinja2")
    from pastcast.reports import Runs
    from pastcast.reports.html import write_html_report
    from pastcast.runlog import read_step_columns

    log = Path(__file__).parents[1] / "runlog" / "fixtures" / "run_v1.jsonl"
    runs = Runs((read_step_columns(log),))
    monkeypatch.setattr(os, "replace", _full_disk)
    out = tmp_path / "report"
    with pytest.raises(OSError, match="No space"):
        write_html_report(runs, out, bootstrap=10, figures=())
    assert [p.name for p in out.rglob("*") if ".tmp" in p.name] == []


def test_a_directory_is_swapped_whole_and_nothing_is_left_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "index"
    target.mkdir()
    (target / "old.txt").write_text("old", encoding="utf-8")
    with atomic_directory(target) as tmp:
        (tmp / "new.txt").write_text("new", encoding="utf-8")
    assert [p.name for p in target.iterdir()] == ["new.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["index"]


def test_a_failing_fill_leaves_the_old_directory_and_no_temporary_one(tmp_path: Path) -> None:
    target = tmp_path / "index"
    target.mkdir()
    (target / "old.txt").write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_directory(target) as tmp:
        (tmp / "half.txt").write_text("half", encoding="utf-8")
        raise RuntimeError("crash mid-build")
    assert [p.name for p in target.iterdir()] == ["old.txt"]
    assert [p.name for p in tmp_path.iterdir()] == ["index"]


def test_a_refused_rename_puts_the_old_directory_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target, new = tmp_path / "index", tmp_path / "new"
    target.mkdir()
    new.mkdir()
    real = os.replace

    def refuse_the_new_one(src: object, dst: object) -> None:
        if Path(str(src)) == new:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        real(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(atomic.os, "replace", refuse_the_new_one)
    with pytest.raises(OSError, match="cross-device"):
        replace_directory(new, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index", "new"]
