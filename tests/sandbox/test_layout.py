"""What the sandbox is built from: the interpreter it picks, the paths it binds and hides, and
refusing to run when a piece of the isolation is missing."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path

import pytest
from _attack import needs_sandbox

from pastcast.sandbox import SandboxUnavailable, run_python
from pastcast.sandbox import _root as root_module
from pastcast.sandbox import _run as run_module
from pastcast.sandbox import _seccomp as seccomp_module


def test_readability_for_other_users_needs_every_parent_searchable(tmp_path: Path) -> None:
    private = tmp_path / "private"
    (private / "lib").mkdir(parents=True)
    target = private / "lib" / "python"
    target.write_text("")
    target.chmod(0o755)
    private.chmod(0o700)
    assert not root_module._readable(str(target), by_others=True)
    private.chmod(0o755)
    tmp_path.chmod(0o755)
    assert root_module._readable(str(target), by_others=True) == all(
        os.stat(p).st_mode & 0o001 for p in target.parents
    )
    assert root_module._readable(str(target), by_others=False)


def test_root_binds_only_the_interpreter_its_library_and_time_zones() -> None:
    root = root_module.sandbox_root(os.getuid() == 0)
    stdlib = {d for _, d in root.binds if os.path.isdir(d) and not d.endswith("zoneinfo")}
    assert all(Path(d, "os.py").exists() for d in stdlib), stdlib
    for source, dest in root.binds:
        kind = "dir" if os.path.isdir(source) else Path(dest).name
        assert (
            dest == root.executable
            or dest in stdlib
            or dest == "/usr/share/zoneinfo"
            or ".so" in kind  # shared libraries and the loader
        ), (source, dest)
    assert not any("site-packages" in d or "dist-packages" in d for _, d in root.binds)


def test_site_packages_inside_a_bound_library_are_listed_to_hide() -> None:
    executable = getattr(sys, "_base_executable", sys.executable)
    info = root_module._probe(executable)
    assert info is not None
    sites = [os.path.realpath(s) for s in info["site"]]  # type: ignore[attr-defined]
    layout = root_module._layout(executable, info, by_others=False)
    assert layout is not None
    stdlib = [d for _, d in layout.binds if Path(d, "os.py").exists()]
    expected = sorted(s for s in sites if os.path.isdir(s) and s.startswith(stdlib[0] + "/"))
    if not expected:
        pytest.skip(f"{executable} keeps its site-packages outside its standard library")
    assert list(layout.hidden) == expected


@needs_sandbox
def test_hidden_directories_are_empty_and_read_only(monkeypatch: pytest.MonkeyPatch) -> None:
    root = root_module.sandbox_root(os.getuid() == 0)
    stdlib = next(d for _, d in root.binds if Path(d, "json").is_dir())
    hidden = dataclasses.replace(root, hidden=(f"{stdlib}/json",))
    monkeypatch.setattr(run_module, "sandbox_root", lambda by_others: hidden)
    res = run_python(
        "import os\nprint(os.listdir(os.path.dirname(os.__file__) + '/json'))\n"
        "open(os.path.dirname(os.__file__) + '/json/x.py', 'w')"
    )
    assert res.stdout.strip() == "[]" and "Read-only file system" in res.stderr, res


def test_refuses_without_the_seccomp_library(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> None:
        raise seccomp_module.SandboxUnavailable("the seccomp library is unavailable (test)")

    monkeypatch.setattr(run_module, "sandbox_filter", missing)
    run_module._self_test.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="seccomp library is unavailable"):
            run_python("print(1)")
    finally:
        run_module._self_test.cache_clear()


def test_refuses_without_a_readable_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(root_module, "_SYSTEM_PYTHONS", ())
    monkeypatch.setattr(root_module, "_readable", lambda path, by_others: False)
    root_module.sandbox_root.cache_clear()
    run_module._self_test.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="no Python interpreter readable"):
            run_python("print(1)")
    finally:
        root_module.sandbox_root.cache_clear()
        run_module._self_test.cache_clear()


def test_filter_library_missing_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyseccomp", None)  # makes the import fail
    seccomp_module.sandbox_filter.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable, match="install libseccomp2 and pyseccomp"):
            seccomp_module.sandbox_filter()
    finally:
        seccomp_module.sandbox_filter.cache_clear()


def test_every_denied_call_is_known_to_the_filter_library() -> None:
    """A name libseccomp does not know would be dropped silently: none of ours is."""
    lib = seccomp_module._library()
    unknown = [
        n
        for n in (*seccomp_module.DENIED, *seccomp_module.FORKS)
        if not seccomp_module._resolve(lib, [n])
    ]
    assert unknown == []
