"""The package's shape: no reaching into another package's private modules, no import cycles,
one-way layers. These walk the source, so a violation anywhere fails here."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PKG = SRC / "pastcast"


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


def _imports(tree: ast.AST, *, top_level_only: bool) -> Iterator[tuple[int, str]]:
    """(line, module) of every ``pastcast`` import; with ``top_level_only`` only those run at
    import time (not inside functions or ``if TYPE_CHECKING`` blocks)."""

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
                        # ``from pastcast.world import _news`` imports the module ``_news``
                        private = alias.name.startswith("_") and not alias.name.startswith("__")
                        yield (
                            child.lineno,
                            f"{child.module}.{alias.name}" if private else (child.module),
                        )
            elif isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.startswith("pastcast"):
                        yield child.lineno, alias.name
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
        for line, module in _imports(tree, top_level_only=False):
            owner = _private_owner(module)
            if owner is not None and not (package == owner or package.startswith(owner + ".")):
                out.append(f"{path.relative_to(SRC)}:{line}: imports {module}")
    return out


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


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in _sources()}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for _, target in _imports(tree, top_level_only=True):
            if target not in modules:  # an attribute of a module, not a module
                target = target.rpartition(".")[0]
            # Python initialises a module's parent packages before it, so naming an ancestor
            # is not an edge of its own.
            if target in modules and not name.startswith(target + "."):
                graph[name].add(target)
    return graph


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
    assert _cycles(_graph()) == []


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


# One-way layers: a package may import only packages of its own or a lower layer at import time.
LAYERS: list[set[str]] = [
    {"cutoff", "safejson", "owned", "textfiles", "serving"},
    {"records"},
    {"registry"},
    {"dataset", "runlog", "sandbox"},
    {"corpus", "scoring", "models"},
    {"markets", "world", "env"},
    {"toolserver"},
    {"agents"},
    {"runner", "reports", "curate", "audit"},
    {"arena", "train"},
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
    assert upward_imports(_graph()) == []


def test_the_layer_check_sees_an_upward_import() -> None:
    graph = {"pastcast.records": {"pastcast.runner._run"}, "pastcast.runner._run": set()}
    assert upward_imports(graph) == ["pastcast.records -> pastcast.runner._run"]
