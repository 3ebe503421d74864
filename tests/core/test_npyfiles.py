"""Arrays read from many threads at once: numpy parses each header with ``ast.literal_eval``,
which CPython before 3.11.8 / 3.12.1 cannot run in two threads at once (gh-106905)."""

from __future__ import annotations

import mmap
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from pastcast.npyfiles import load_npy, load_npz, prefetch_rows

# Threads switch every microsecond and the collector runs finalizers (Python code, so a switch
# point) inside the AST constructor: the race, made likely. Prints how many loads failed.
_RACE = textwrap.dedent(
    """
    import gc, sys, threading
    import numpy as np
    from pastcast.npyfiles import load_npy

    path, how = sys.argv[1], sys.argv[2]
    load = (lambda: load_npy(path)) if how == "locked" else (lambda: np.load(path, mmap_mode="r"))

    class Finalized:
        def __del__(self):
            sum(range(50))

    failures = []

    def work():
        for _ in range(1500):
            garbage = [Finalized() for _ in range(3)]
            garbage.append(garbage)  # a cycle: only the collector frees it
            del garbage
            try:
                load()
            except SystemError as exc:
                failures.append(exc)
                return

    sys.setswitchinterval(1e-6)
    gc.set_threshold(5, 1, 1)
    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(len(failures))
    """
)

_AFFECTED = sys.version_info < (3, 11, 8) or (3, 12) <= sys.version_info < (3, 12, 1)


def _failures(path: Path, how: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _RACE, str(path), how],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return int(done.stdout.strip())


def test_loads_from_many_threads_never_race_in_the_header_parser(tmp_path: Path) -> None:
    path = tmp_path / "a.npy"
    np.save(path, np.arange(3))
    assert _failures(path, "locked") == 0


@pytest.mark.skipif(not _AFFECTED, reason="this CPython parses in threads safely")
def test_the_race_is_real_here_without_the_lock(tmp_path: Path) -> None:
    # the control: the scenario above does break numpy's own loader on this interpreter
    path = tmp_path / "a.npy"
    np.save(path, np.arange(3))
    assert _failures(path, "raw") > 0


def test_arrays_come_back_mapped_or_in_memory_and_never_unpickled(tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", np.arange(5, dtype=np.int64))
    mapped, loaded = load_npy(tmp_path / "a.npy"), load_npy(tmp_path / "a.npy", mmap=False)
    assert isinstance(mapped.base, mmap.mmap) and not mapped.flags.writeable
    assert not isinstance(loaded.base, mmap.mmap) and loaded.flags.writeable
    assert mapped.tolist() == loaded.tolist() == [0, 1, 2, 3, 4]
    grid = np.asfortranarray(np.arange(12, dtype="<f4").reshape(3, 4))
    for name, array in (("f.npy", grid), ("e.npy", np.zeros((0, 3), dtype=np.int32))):
        np.save(tmp_path / name, array)
        got = load_npy(tmp_path / name)
        assert got.dtype == array.dtype and np.array_equal(got, array)
        assert got.flags.f_contiguous == array.flags.f_contiguous
    np.save(tmp_path / "o.npy", np.array([{"x": 1}], dtype=object), allow_pickle=True)
    for in_memory in (False, True):
        with pytest.raises(ValueError):
            load_npy(tmp_path / "o.npy", mmap=not in_memory)
    np.savez(tmp_path / "b.npz", x=np.ones(2), y=np.array(["a"]))
    arrays = load_npz(tmp_path / "b.npz")
    assert sorted(arrays) == ["x", "y"] and arrays["x"].tolist() == [1.0, 1.0]


def test_rows_of_a_scattered_mapping_are_prefetched_whole_and_read_unchanged(
    tmp_path: Path,
) -> None:
    """Rows straddling pages, up to the file's last byte: every range asked for lies on the
    map (the kernel refuses one misaligned or past its end)."""
    want = np.random.default_rng(0).standard_normal((5000, 37)).astype(np.float32)
    np.save(tmp_path / "v.npy", want)
    rows = load_npy(tmp_path / "v.npy", scattered=True)
    prefetch_rows(rows, [(0, 2), (27, 28), (2500, 2501), (4998, 5000)])
    np.testing.assert_array_equal(rows[[0, 27, 4999]], want[[0, 27, 4999]])
    with pytest.raises(ValueError):  # the check can fail: a row past the end is refused
        prefetch_rows(rows, [(5000 + 4096, 5000 + 4097)])
