"""The package's shape: no reaching into another package's private modules, no import cycles,
one-way layers; and the arena's boundary: the arena (its own distribution, arena/) imports only
pastcast's public names, and nothing of pastcast or of its tests imports the arena. These walk
the source, so a violation anywhere fails here."""

from __future__ import annotations

import ast
import functools
import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pastcast.lazy import type_checking_imports

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
PKG = SRC / "pastcast"
ARENA = ROOT / "arena" / "src" / "pastcast_arena"


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_of(path: Path) -> str:
    """The package a file belongs to (``pastcast.corpus.embedded`` for its ``_bm25.py``)."""
    return ".".join(path.relative_to(SRC).parts[:-1])


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _lazy_names() -> dict[str, dict[str, str]]:
    """Each lazy package facade's map of a name to the module that provides it (its ``if
    TYPE_CHECKING:`` imports: the names load on first use, so ``from pastcast import run_plan``
    imports the application layer and ``from pastcast.app import run_plan`` the module of
    ``run_plan``)."""
    return {
        _module_name(init): type_checking_imports(text)
        for init in sorted(PKG.rglob("__init__.py"))
        if "lazy_exports(__name__)" in (text := init.read_text(encoding="utf-8"))
    }


LAZY_NAMES = _lazy_names()


@pytest.mark.parametrize("package", sorted(LAZY_NAMES))
def test_every_lazy_name_of_a_package_imports(package: str) -> None:
    # A lazy name is public (in ``__all__``) and is its module's own object.
    module = importlib.import_module(package)
    where = LAZY_NAMES[package]
    assert set(where) <= set(module.__all__)
    for name, provider in where.items():
        assert getattr(module, name) is getattr(importlib.import_module(provider), name), name
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018


@pytest.mark.parametrize("package", sorted(LAZY_NAMES))
def test_no_lazy_name_is_also_a_submodule(package: str) -> None:
    # Importing a submodule sets the package's attribute of that name to the module, so a lazy
    # name spelled like a submodule would change meaning once anything imports the submodule.
    module = importlib.import_module(package)
    folder = Path(module.__file__ or "").parent
    submodules = {
        p.stem for p in folder.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()
    }
    assert not set(LAZY_NAMES[package]) & submodules


def _from_import(module: str, name: str) -> str:
    """What ``from module import name`` imports: a module of that name, the module providing a
    lazy name of a package facade, or else ``module`` itself."""
    lazy = LAZY_NAMES.get(module, {})
    if name in lazy:
        return lazy[name]
    # ``from pastcast.world import _news`` imports the module ``_news``; the graph drops a
    # target that is not a module back to its package.
    return f"{module}.{name}"


def _dynamic_import(node: ast.Call) -> str | None:
    """The module of ``importlib.import_module("pastcast....")`` with a literal name."""
    func = node.func
    named = (isinstance(func, ast.Attribute) and func.attr == "import_module") or (
        isinstance(func, ast.Name) and func.id == "import_module"
    )
    if named and node.args and isinstance(node.args[0], ast.Constant):
        target = node.args[0].value
        if isinstance(target, str) and target.startswith("pastcast"):
            return target
    return None


def _imports(
    tree: ast.AST, *, top_level_only: bool, as_written: bool = False
) -> Iterator[tuple[int, str]]:
    """(line, module) of every ``pastcast`` import; with ``top_level_only`` only those run at
    import time (not inside functions or ``if TYPE_CHECKING`` blocks); ``as_written``: the
    module the code names, not the one a lazy package facade imports for it."""

    def visit(node: ast.AST) -> Iterator[tuple[int, str]]:
        for child in ast.iter_child_nodes(node):
            if top_level_only and isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
            ):
                continue
            if top_level_only and isinstance(child, ast.If) and _is_type_checking(child):
                continue
            if isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                if child.module.startswith("pastcast"):
                    for alias in child.names:
                        yield (
                            child.lineno,
                            (
                                f"{child.module}.{alias.name}"
                                if as_written
                                else _from_import(child.module, alias.name)
                            ),
                        )
            elif isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.startswith("pastcast"):
                        yield child.lineno, alias.name
            elif not top_level_only and isinstance(child, ast.Call):
                target = _dynamic_import(child)
                if target is not None:
                    yield child.lineno, target
            yield from visit(child)

    yield from visit(tree)


def _sources() -> list[Path]:
    return sorted(PKG.rglob("*.py"))


def _private_owner(module: str) -> str | None:
    """The package owning the first private component of ``module``, if any."""
    parts = module.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def private_import_violations(files: list[Path]) -> list[str]:
    out = []
    for path in files:
        package = _package_of(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, module in _imports(tree, top_level_only=False, as_written=True):
            owner = _private_owner(module)
            if owner is not None and not (package == owner or package.startswith(owner + ".")):
                out.append(f"{path.relative_to(SRC)}:{line}: imports {module}")
    return out


def private_modules_with_all(sources: dict[str, str]) -> list[str]:
    """Private modules (a file named ``_x.py``) of ``sources`` (path -> text) that declare
    ``__all__``: a package's public names are listed once, in its ``__init__``."""
    out = []
    for path, text in sorted(sources.items()):
        name = Path(path).name
        if not name.startswith("_") or name in ("__init__.py", "__main__.py"):
            continue
        for node in ast.parse(text).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                out.append(f"{path}:{node.lineno}")
    return out


def test_public_names_are_listed_only_in_package_inits() -> None:
    roots = [PKG] + ([ARENA] if ARENA.is_dir() else [])
    sources = {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
        for root in roots
        for p in sorted(root.rglob("*.py"))
    }
    assert len(sources) > 100, "the package's sources were not found"
    assert private_modules_with_all(sources) == []


def test_the_public_names_check_sees_a_private_all() -> None:
    planted = {
        "pkg/_impl.py": "x = 1\n__all__ = ['x']\n",
        "pkg/__init__.py": "from pkg._impl import x\n__all__ = ['x']\n",
        "pkg/_typed.py": "__all__: list[str] = []\n",
        "pkg/public.py": "__all__ = ['y']\ny = 2\n",
    }
    assert private_modules_with_all(planted) == ["pkg/_impl.py:2", "pkg/_typed.py:1"]


def test_no_package_imports_another_packages_private_modules() -> None:
    assert private_import_violations(_sources()) == []


def test_the_private_import_check_catches_a_violation() -> None:
    # The check must be able to fail: a module outside ``runlog`` reaching into it.
    fake = SRC / "pastcast" / "scoring" / "_probe_for_test.py"
    fake.write_text("from pastcast.runlog._schema import StepRecord\n", encoding="utf-8")
    try:
        found = private_import_violations([fake])
    finally:
        fake.unlink()
    assert found and "pastcast.runlog._schema" in found[0]


@functools.cache
def _tree_sources() -> tuple[tuple[str, str], ...]:
    return tuple((_module_name(p), p.read_text(encoding="utf-8")) for p in _sources())


def _module_sources() -> dict[str, str]:
    return dict(_tree_sources())


@functools.cache
def _imports_of(text: str, import_time_only: bool) -> tuple[str, ...]:
    return tuple(t for _, t in _imports(ast.parse(text), top_level_only=import_time_only))


def _graph(sources: dict[str, str], *, import_time_only: bool) -> dict[str, set[str]]:
    """Module -> the pastcast modules it imports: at import time only, or counting every import
    (inside functions and ``if TYPE_CHECKING`` blocks too)."""
    graph: dict[str, set[str]] = {m: set() for m in sources}
    for name, text in sources.items():
        for target in _imports_of(text, import_time_only):
            if target not in sources:  # an attribute of a module, not a module
                target = target.rpartition(".")[0]
            # Python initialises a module's parent packages before it, so naming an ancestor
            # is not an edge of its own.
            if target in sources and not name.startswith(target + "."):
                graph[name].add(target)
    return graph


def _package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The module graph between top-level packages (``pastcast.corpus`` for all of corpus)."""

    def top(module: str) -> str:
        return ".".join(module.split(".")[:2])

    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        out.setdefault(top(module), set()).update(top(t) for t in targets if top(t) != top(module))
    return out


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def strong(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def test_no_import_cycles_at_import_time() -> None:
    assert _cycles(_graph(_module_sources(), import_time_only=True)) == []


def test_no_package_cycles_counting_every_import() -> None:
    # An import inside a function still makes the two packages depend on each other.
    graph = _package_graph(_graph(_module_sources(), import_time_only=False))
    assert _cycles(graph) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


# One-way layers: a package imports only packages of its own or a lower layer, counting every
# import (inside functions and for type checking too).
LAYERS: list[set[str]] = [
    {
        "cutoff",
        "errors",
        "safejson",
        "owned",
        "textfiles",
        "probabilities",
        "validation",
        "atomic",
        "npyfiles",
        "serving",
        "lazy",
        "progress",
        "collector",
    },
    {"records", "retrying"},
    {"registry"},
    {"dataset", "runlog", "sandbox"},
    {"corpus", "scoring", "models"},
    {"markets", "world", "env"},
    {"toolserver"},
    {"agents"},
    {"runner", "reports", "curate", "audit"},
    {"train"},
    {"app"},
    {"integrations"},
    {"cli"},
]


def _layer(module: str) -> int:
    top = module.split(".")[1] if module.count(".") else ""
    for i, layer in enumerate(LAYERS):
        if top in layer:
            return i
    return len(LAYERS)  # pastcast/__init__ sits above everything


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return [f"{m} -> {t}" for m in sorted(graph) for t in sorted(graph[m]) if _layer(t) > _layer(m)]


def test_layers_point_one_way() -> None:
    assert upward_imports(_graph(_module_sources(), import_time_only=False)) == []


def test_the_layer_check_sees_an_upward_import() -> None:
    graph = {"pastcast.records": {"pastcast.runner._run"}, "pastcast.runner._run": set()}
    assert upward_imports(graph) == ["pastcast.records -> pastcast.runner._run"]


def _planted(module: str, text: str) -> dict[str, set[str]]:
    """The whole tree's graph (every import) with one more module of source ``text``."""
    return _graph({**_module_sources(), module: text}, import_time_only=False)


def test_the_layer_check_sees_an_upward_import_inside_a_function() -> None:
    graph = _planted(
        "pastcast.scoring._planted",
        "def later() -> None:\n    from pastcast.runner import run_benchmark\n",
    )
    # the runner's facade is lazy: the name resolves to the module that defines it
    assert "pastcast.scoring._planted -> pastcast.runner._run" in upward_imports(graph)
    cycles = _cycles(_package_graph(graph))
    assert any({"pastcast.runner", "pastcast.scoring"} <= set(c) for c in cycles)


def test_the_layer_check_resolves_a_lazy_top_level_name() -> None:
    # ``pastcast.run_plan`` is the application layer's, whatever ``pastcast/__init__`` says.
    graph = _planted("pastcast.dataset._planted", "from pastcast import run_plan\n")
    assert "pastcast.dataset._planted -> pastcast.app" in upward_imports(graph)


def test_the_layer_check_sees_a_literal_dynamic_import() -> None:
    graph = _planted(
        "pastcast.corpus._planted",
        "import importlib\n\ndef later() -> object:\n"
        "    return importlib.import_module('pastcast.world')\n",
    )
    assert "pastcast.corpus._planted -> pastcast.world" in upward_imports(graph)


def test_every_layer_names_a_package_of_the_tree() -> None:
    # A package missing from LAYERS would sit above everything and never be checked; ``app``
    # is reserved for the application layer under the CLI.
    packages = {p.name for p in PKG.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in PKG.glob("*.py") if p.stem != "__init__"}
    layered = set().union(*LAYERS)
    assert packages | modules <= layered


# What a fresh process loads: a package imports its protocol and public helpers, not every
# sub-package, and built-in components (backends, embedders, sources, agents, providers) load
# through their registries when first used.
_LOADED = """
import sys
{code}
print(" ".join(sorted(m for m in sys.modules if m.startswith("pastcast"))))
"""


def _loaded_modules(code: str) -> list[str]:
    """The ``pastcast`` modules a fresh interpreter has loaded after running ``code``."""
    out = subprocess.run(
        [sys.executable, "-c", _LOADED.format(code=code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return out.stdout.split()


RUN_PATH_MODULES = 100


def test_the_run_path_loads_a_bounded_part_of_the_package() -> None:
    loaded = _loaded_modules("from pastcast.app import run_plan")
    assert len(loaded) <= RUN_PATH_MODULES, loaded


def test_the_environment_loads_no_corpus_backend() -> None:
    heavy = ("pastcast.corpus.postgres", "pastcast.corpus.feeds", "pastcast.corpus.dense")
    loaded = _loaded_modules("import pastcast.env")
    assert [m for m in loaded if m.startswith(heavy)] == []


def test_the_corpus_package_loads_none_of_its_sub_packages() -> None:
    subpackages = {p.name for p in (PKG / "corpus").iterdir() if (p / "__init__.py").is_file()}
    assert {"dense", "postgres", "feeds", "sources", "embedded"} <= subpackages
    loaded = _loaded_modules("import pastcast.corpus")
    assert [m for m in loaded if m.split(".")[2:3] and m.split(".")[2] in subpackages] == []


# The arena sits on top, outside the package: it imports pastcast's public names only (a name in
# the ``__all__`` of a package or module whose path has no private part), and nothing in pastcast
# or its tests imports it (its command group and report sections come through entry points).


def _module_path(module: str) -> Path | None:
    base = SRC.joinpath(*module.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


@functools.cache
def public_names(module: str) -> frozenset[str]:
    """The ``__all__`` of a pastcast module: read from its source when it is a literal, else
    from the imported module."""
    path = _module_path(module)
    if path is not None:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                try:
                    return frozenset(ast.literal_eval(node.value))  # type: ignore[arg-type]
                except ValueError:
                    break
    return frozenset(getattr(importlib.import_module(module), "__all__", ()))


def arena_boundary_violations(sources: dict[str, str]) -> list[str]:
    """Imports of ``sources`` (file name -> text) that reach past pastcast's public names."""
    out = []
    for name, text in sorted(sources.items()):
        for node in ast.walk(ast.parse(text)):
            found: list[tuple[str, str | None]] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found = [(node.module, alias.name) for alias in node.names]
            elif isinstance(node, ast.Import):
                found = [(alias.name, None) for alias in node.names]
            elif isinstance(node, ast.Call) and (target := _dynamic_import(node)) is not None:
                found = [(target, None)]
            for module, imported in found:
                if module != "pastcast" and not module.startswith("pastcast."):
                    continue
                where = f"{name}:{node.lineno}: {module}" + (f".{imported}" if imported else "")
                if _private_owner(module) is not None or _module_path(module) is None:
                    out.append(f"{where} (not a public module of pastcast)")
                elif (
                    imported is not None
                    and _module_path(f"{module}.{imported}") is None  # a module: public above
                    and imported not in public_names(module)
                ):
                    out.append(f"{where} (not in {module}.__all__)")
    return out


def _arena_sources() -> dict[str, str]:
    return {
        str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in sorted(ARENA.rglob("*.py"))
    }


@pytest.mark.skipif(not ARENA.is_dir(), reason="no arena/ beside the package in this checkout")
def test_the_arena_imports_only_public_names_of_pastcast() -> None:
    sources = _arena_sources()
    assert len(sources) > 10, "the arena's sources were not found"
    assert arena_boundary_violations(sources) == []


def test_the_arena_boundary_check_sees_a_private_name() -> None:
    planted = {
        "planted.py": "from pastcast.app._replays import open_replay\n"
        "from pastcast.cli import printable\n"
        "from pastcast.errors import FieldError\n"
        "from pastcast import safejson\n"
        "def later() -> None:\n    import pastcast.runner._run\n",
    }
    assert arena_boundary_violations(planted) == [
        "planted.py:1: pastcast.app._replays.open_replay (not a public module of pastcast)",
        "planted.py:2: pastcast.cli.printable (not in pastcast.cli.__all__)",
        "planted.py:6: pastcast.runner._run (not a public module of pastcast)",
    ]


_LOOKUPS = ("import_module", "__import__", "find_spec", "importorskip")


def _literal_import(node: ast.Call) -> str | None:
    """The module named by a literal in ``importlib.import_module("...")`` and its kin."""
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if called in _LOOKUPS and node.args and isinstance(node.args[0], ast.Constant):
        value = node.args[0].value
        return value if isinstance(value, str) else None
    return None


def arena_importers(sources: dict[str, str]) -> list[str]:
    """Where ``sources`` (file name -> text) import the arena: at any point, or by a literal."""
    out = []
    for name, text in sorted(sources.items()):
        for node in ast.walk(ast.parse(text)):
            modules: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules = [node.module]
            elif isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.Call) and (found := _literal_import(node)) is not None:
                modules = [found]
            if any(m == "pastcast_arena" or m.startswith("pastcast_arena.") for m in modules):
                out.append(f"{name}:{node.lineno}")  # type: ignore[attr-defined]
    return out


def test_nothing_of_pastcast_or_its_tests_imports_the_arena() -> None:
    files = [*PKG.rglob("*.py"), *(ROOT / "tests").rglob("*.py")]
    sources = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in files}
    assert len(sources) > 500, "the sources were not found"
    assert arena_importers(sources) == []


def test_the_arena_importer_check_sees_an_import() -> None:
    planted = {
        "a.py": "def later() -> None:\n    from pastcast_arena import simulate\n",
        "b.py": "import importlib\nimportlib.import_module('pastcast_arena._cli')\n",
        "c.py": "import pastcast.app\n",
    }
    assert arena_importers(planted) == ["a.py:2", "b.py:2"]


def test_the_core_loads_without_the_arena() -> None:
    # Every package of pastcast, the CLI's commands among them, imported in a fresh process
    # where the arena cannot be imported: none needs it.
    packages = sorted(
        f"pastcast.{p.name}"
        for p in PKG.iterdir()
        if (p / "__init__.py").is_file() and p.name != "integrations"
    )
    code = (
        "import sys\n"
        "sys.modules['pastcast_arena'] = None  # any import of it fails\n"
        f"for name in {packages!r}:\n"
        "    __import__(name)\n"
        "from pastcast.cli._app import COMMANDS, load_command\n"
        "for name in COMMANDS:\n"
        "    load_command(name)\n"
        "print('ok')\n"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0 and ran.stdout.strip() == "ok", ran.stderr[-2000:]


# One error type names what cannot be used: a public exception class of pastcast that is a
# ValueError is ``pastcast.errors.FieldError`` or one of its kinds, so each layer raises it where
# it checks what it is given and the layers above pass it through instead of translating it.
# Private classes never leave their module; ``JsonRefused`` is the JSON decoder's own error.
NOT_FIELD_ERRORS = {"JsonRefused"}
_VALUE_ERRORS = {"ValueError", "JSONDecodeError", "UnicodeDecodeError", "ValidationError"}


def _base_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def value_errors_outside_field_error(sources: dict[str, str]) -> list[str]:
    """``module.Class`` of each public class that derives from ValueError but not FieldError."""
    bases: dict[str, set[str]] = {}
    where: dict[str, str] = {}
    for module, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef):
                bases.setdefault(node.name, set()).update(_base_name(b) for b in node.bases)
                where[node.name] = module

    def derives(name: str, roots: set[str], seen: frozenset[str] = frozenset()) -> bool:
        if name in roots:
            return True
        return any(derives(b, roots, seen | {name}) for b in bases.get(name, set()) - seen)

    return sorted(
        f"{where[c]}.{c}"
        for c in bases
        if c != "FieldError"
        and not c.startswith("_")
        and c not in NOT_FIELD_ERRORS
        and derives(c, _VALUE_ERRORS)
        and not derives(c, {"FieldError"})
    )


def test_every_value_error_of_pastcast_is_a_field_error() -> None:
    assert value_errors_outside_field_error(_module_sources()) == []


def test_the_field_error_check_sees_another_value_error() -> None:
    planted = {
        **_module_sources(),
        "pastcast.runlog._planted": "class LogBroken(ValueError):\n    pass\n"
        "class Worse(LogBroken):\n    pass\n"
        "class Named(FieldError):\n    pass\n"
        "class _Inner(ValueError):\n    pass\n",
    }
    assert value_errors_outside_field_error(planted) == [
        "pastcast.runlog._planted.LogBroken",
        "pastcast.runlog._planted.Worse",
    ]
