"""One registry pattern for every pluggable component: agents, model providers, schedules, corpus
sources, corpus backends and prompts.

A ``Registry`` maps a name to a factory. ``build(name, **args)`` checks ``args`` against the
factory's signature first (an unknown or missing argument is a ``ValueError`` naming it, raised
when a run is planned rather than halfway through it), and ``spec(name, **args)`` captures the
same call as a ``ComponentSpec`` record, which a run log keeps so the component can be rebuilt.

Third-party packages add components without editing pastcast through entry points: a package
declares, in its ``pyproject.toml``,

    [project.entry-points."pastcast.agents"]
    my-agent = "my_package.agents:make_agent"

and ``pastcast.agents`` then knows ``my-agent``. The entry point may also name a module whose
import registers its components with the decorator. Entry points are loaded the first time a
registry is listed or misses a name, so an installed plugin costs nothing until it is asked for.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any, Generic, TypeVar

from pydantic import Field

from pastcast.records import Record

__all__ = ["ComponentSpec", "Entry", "Registry", "RegistryError"]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class RegistryError(ValueError):
    """An unknown name, a duplicate registration or arguments a factory cannot take."""


class ComponentSpec(Record):
    """A registered component by kind and name with the arguments it was built with."""

    kind: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One registered factory with its metadata (``meta`` holds kind-specific fields)."""

    name: str
    factory: Callable[..., T]
    description: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)

    def parameters(self) -> tuple[str, ...]:
        """The keyword arguments the factory accepts (empty for ``**kwargs`` factories)."""
        try:
            sig = inspect.signature(self.factory)
        except (TypeError, ValueError):
            return ()
        return tuple(
            p.name
            for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        )


def _first_doc_line(obj: object) -> str:
    lines = (inspect.getdoc(obj) or "").strip().splitlines()
    return lines[0] if lines else ""


class Registry(Generic[T]):
    """Named factories of one kind, extensible through the entry-point group ``group``."""

    def __init__(self, kind: str, group: str | None = None) -> None:
        self.kind = kind
        self.group = group if group is not None else f"pastcast.{kind}s"
        self._entries: dict[str, Entry[T]] = {}
        self._plugins_loaded = False

    def register(
        self, name: str, *, description: str | None = None, replace: bool = False, **meta: Any
    ) -> Callable[[F], F]:
        """Decorator: register ``factory`` under ``name`` (its docstring's first line describes
        it unless ``description`` is given)."""

        def decorate(factory: F) -> F:
            self.add(name, factory, description=description, replace=replace, **meta)
            return factory

        return decorate

    def add(
        self,
        name: str,
        factory: Callable[..., T],
        *,
        description: str | None = None,
        replace: bool = False,
        **meta: Any,
    ) -> Entry[T]:
        if not name or name != name.strip():
            raise RegistryError(f"{self.kind} name {name!r} is empty or padded with spaces")
        if name in self._entries and not replace:
            raise RegistryError(f"{self.kind} {name!r} is already registered")
        text = description if description is not None else _first_doc_line(factory)
        entry = Entry(name, factory, text, dict(meta))
        self._entries[name] = entry
        return entry

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        for ep in entry_points(group=self.group):
            try:
                loaded = ep.load()
            except Exception as exc:  # a broken plugin must not break pastcast; say which
                raise RegistryError(
                    f"entry point {ep.name!r} of group {self.group!r} ({ep.value}) failed to "
                    f"load: {type(exc).__name__}: {exc}"
                ) from exc
            if ep.name not in self._entries and not isinstance(loaded, ModuleType):
                if not callable(loaded):
                    raise RegistryError(
                        f"entry point {ep.name!r} of group {self.group!r} is not callable"
                    )
                self.add(ep.name, loaded)

    def __contains__(self, name: object) -> bool:
        if name in self._entries:
            return True
        self._load_plugins()
        return name in self._entries

    def __iter__(self) -> Iterator[Entry[T]]:
        return iter(self.entries())

    def names(self) -> tuple[str, ...]:
        self._load_plugins()
        return tuple(sorted(self._entries))

    def entries(self) -> tuple[Entry[T], ...]:
        return tuple(self._entries[n] for n in self.names())

    def get(self, name: str) -> Entry[T]:
        if name not in self:
            known = ", ".join(self.names()) or "none"
            raise RegistryError(f"unknown {self.kind} {name!r} (known: {known})")
        return self._entries[name]

    def check_args(self, name: str, args: Mapping[str, Any]) -> None:
        """Raise ``RegistryError`` naming the argument if ``factory(**args)`` cannot bind."""
        entry = self.get(name)
        try:
            sig = inspect.signature(entry.factory)
        except (TypeError, ValueError):
            return
        try:
            sig.bind(**args)
        except TypeError as exc:
            accepted = ", ".join(entry.parameters()) or "none"
            raise RegistryError(
                f"{self.kind} {name!r}: {exc} (accepted arguments: {accepted})"
            ) from None

    def build(self, name: str, /, **args: Any) -> T:
        """Check ``args`` and call the factory."""
        self.check_args(name, args)
        return self.get(name).factory(**args)

    def spec(self, name: str, /, **args: Any) -> ComponentSpec:
        """The record of ``build(name, **args)``, checked now, rebuilt later by ``rebuild``."""
        self.check_args(name, args)
        return ComponentSpec(kind=self.kind, name=name, args=args)

    def rebuild(self, spec: ComponentSpec) -> T:
        if spec.kind != self.kind:
            raise RegistryError(f"a {spec.kind} spec cannot build a {self.kind}")
        return self.build(spec.name, **spec.args)
