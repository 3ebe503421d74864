"""The sandbox's file system: one Python interpreter, its standard library, the shared libraries
they load and the time-zone database, nothing else of the host (docs/sandbox.md, "Building
blocks"). The interpreter must be readable by the sandbox's unprivileged user: for a root caller
whose Python lives under a private directory (``/root/.pyenv``) the system's ``python3`` is used.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from pastcast.sandbox._mirror import open_to_others, reachable_by_others
from pastcast.sandbox._result import SandboxUnavailable

SANDBOX_UID = 65534
"""The sandbox's uid inside (``nobody``); on the host it is the caller's, or a leased one."""

_SYSTEM_PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3")
_TOP_LINKS = ("/lib", "/lib64", "/lib32", "/libx32")
_ZONEINFO = "/usr/share/zoneinfo"
# Loaded with dlopen by glibc (thread exit and cancellation), so ldd does not list it.
_DLOPENED = ("libgcc_s.so.1",)
_LDD_PATH = re.compile(r"(?:=>\s*)?(/\S+)\s+\(0x[0-9a-f]+\)")
_PROBE = (
    "import json, site, sys\n"
    "print(json.dumps({'path': sys.path, 'site': site.getsitepackages(),"
    " 'version': list(sys.version_info[:2])}))\n"
)


@dataclass(frozen=True)
class SandboxRoot:
    """Read-only binds (host path, sandbox path) and what to lay over them."""

    executable: str
    binds: tuple[tuple[str, str], ...]
    symlinks: tuple[tuple[str, str], ...]
    """(target, link) pairs, such as ``usr/lib64`` at ``/lib64`` on merged-/usr systems."""
    hidden: tuple[str, ...]
    """Directories inside a bound tree covered by an empty read-only tmpfs (site-packages)."""
    version: tuple[int, int] = (0, 0)
    """The interpreter's Python version (major, minor)."""


def _readable(path: str, *, by_others: bool) -> bool:
    """Whether the sandbox's user can reach and read ``path`` (a directory: also list it)."""
    real = os.path.realpath(path)
    try:
        if by_others:
            return reachable_by_others(real) and open_to_others(real)
        mode = os.stat(real).st_mode
        return os.access(real, os.R_OK | (os.X_OK if stat.S_ISDIR(mode) else 0))
    except OSError:
        return False


def _probe(executable: str) -> dict[str, object] | None:
    try:
        out = subprocess.run(
            [executable, "-I", "-S", "-c", _PROBE],
            capture_output=True,
            timeout=30,
            check=True,
            env={"LANG": "C.UTF-8"},
        ).stdout
        info = json.loads(out)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def _shared_libraries(files: list[str]) -> list[str]:
    """Every shared library (and the loader) that ``files`` link against, as ldd names them."""
    ldd = shutil.which("ldd")
    if ldd is None:
        raise SandboxUnavailable("ldd is not installed; it lists the libraries the sandbox needs")
    res = subprocess.run([ldd, *files], capture_output=True, text=True, timeout=60, check=False)
    found = {m.group(1) for m in _LDD_PATH.finditer(res.stdout)}
    return sorted(p for p in found if os.path.exists(p))


def _canonical(path: str) -> str:
    """``path`` with its directory resolved, so that binds land behind the mirrored links."""
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def _layout(executable: str, info: dict[str, object], *, by_others: bool) -> SandboxRoot | None:
    exe = os.path.realpath(executable)
    paths = info.get("path")
    sites = info.get("site")
    if not isinstance(paths, list) or not isinstance(sites, list):
        return None
    stdlib = sorted({os.path.realpath(p) for p in paths if isinstance(p, str) and os.path.isdir(p)})
    # Nested entries (lib-dynload inside the standard library) come with their parent.
    tops = [d for d in stdlib if not any(d.startswith(o + os.sep) for o in stdlib)]
    if not tops or not all(_readable(p, by_others=by_others) for p in [exe, *tops]):
        return None
    modules = [str(p) for d in stdlib for p in sorted(Path(d).glob("*.so"))]
    libs = _shared_libraries([exe, *modules])
    for lib in list(libs):
        if os.path.basename(lib).startswith("libc.so"):
            for name in _DLOPENED:
                extra = os.path.join(os.path.dirname(lib), name)
                if os.path.exists(extra):
                    libs.append(extra)
    if not all(_readable(p, by_others=by_others) for p in libs):
        return None
    binds = {(exe, exe)} | {(d, d) for d in tops}
    binds |= {(os.path.realpath(lib), _canonical(lib)) for lib in libs}
    if os.path.isdir(_ZONEINFO) and _readable(_ZONEINFO, by_others=by_others):
        binds.add((os.path.realpath(_ZONEINFO), _ZONEINFO))
    hidden = sorted(
        {
            os.path.realpath(s)
            for s in sites
            if isinstance(s, str)
            and os.path.isdir(s)
            and any(os.path.realpath(s).startswith(t + os.sep) for t in tops)
        }
    )
    links = tuple((os.readlink(p), p) for p in _TOP_LINKS if os.path.islink(p))
    version = info.get("version")
    major, minor = version if isinstance(version, list) and len(version) == 2 else (0, 0)
    return SandboxRoot(exe, tuple(sorted(binds)), links, tuple(hidden), (int(major), int(minor)))


@cache
def sandbox_root(by_others: bool) -> SandboxRoot:
    """The root for this process's interpreter, else for the system's ``python3``.

    ``by_others``: the sandbox runs as another user than the caller (the caller is root), so
    every path must be readable by any user.
    """
    candidates = [getattr(sys, "_base_executable", "") or sys.executable, *_SYSTEM_PYTHONS]
    for executable in dict.fromkeys(c for c in candidates if c and os.path.exists(c)):
        if not _readable(executable, by_others=by_others):
            continue  # spares running it
        info = _probe(executable)
        if info is not None:
            root = _layout(executable, info, by_others=by_others)
            if root is not None:
                return root
    who = "other users" if by_others else "the current user"
    raise SandboxUnavailable(
        f"no Python interpreter readable by {who} (tried {', '.join(candidates)}); "
        "install the system's python3"
    )
