"""One registry pattern for every pluggable component: agents, model providers, schedules, corpus
sources, corpus backends, prompts and metrics.

A ``Registry`` maps a name to a factory. ``build(name, **args)`` checks ``args`` against the
factory's signature first: an unknown or missing argument, or a value its annotation refuses
(``rounds="three"`` for an ``int``), is a one-line ``FieldError`` naming the argument, raised
when a run is planned rather than halfway through it; the factory gets the values converted.
``spec(name, **args)`` captures the same call as a ``ComponentSpec`` record, which a run log
keeps so the component can be rebuilt.

docs/plugins.md describes the rest: factories registered by reference
(``add(name, "package.module:attribute")``, imported when first used), entry-point plugins
(loaded the first time a registry is listed or misses a name), ``reload_plugins``,
``snapshot``/``restore`` and ``all_registries``.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import sys
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from types import ModuleType, UnionType
from typing import Annotated, Any, Generic, Literal, TypeVar, Union, get_args, get_origin

from pydantic import Field, TypeAdapter, ValidationError
from pydantic.errors import PydanticUserError

from pastcast.errors import FieldError
from pastcast.records import Record
from pastcast.validation import problems

__all__ = ["ComponentSpec", "Entry", "Registry", "all_registries", "type_name"]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class ComponentSpec(Record):
    """A registered component by kind and name with the arguments it was built with."""

    kind: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One registered factory with its metadata (``meta`` holds kind-specific fields).

    ``target`` is the factory itself, or where it is, ``"package.module:attribute"``: imported the
    first time ``factory`` (or the description, or the parameters) is read, so a registry lists
    its built-in components and their metadata without importing them."""

    name: str
    target: Callable[..., T] | str
    meta: Mapping[str, Any] = field(default_factory=dict)
    described: str | None = None
    """The description given at registration; ``None``: the factory's docstring's first line."""
    kind: str = "component"
    _loaded: Callable[..., T] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def loaded(self) -> bool:
        """Whether the factory is imported (always, unless registered by reference)."""
        return not isinstance(self.target, str) or self._loaded is not None

    @property
    def factory(self) -> Callable[..., T]:
        if not isinstance(self.target, str):
            return self.target
        if self._loaded is None:  # two threads may both import it: the same object either way
            object.__setattr__(self, "_loaded", self._load(self.target))
        assert self._loaded is not None
        return self._loaded

    def _load(self, reference: str) -> Callable[..., T]:
        loaded = _load_reference(reference, f"{self.kind} {self.name!r}")
        if not callable(loaded):
            raise FieldError("", f"{self.kind} {self.name!r} ({reference}) is not callable")
        factory: Callable[..., T] = loaded
        return factory

    @property
    def description(self) -> str:
        if self.described is not None:
            return self.described
        return ((inspect.getdoc(self.factory) or "").strip().splitlines() or [""])[0]

    def parameters(self) -> tuple[str, ...]:
        """The keyword arguments the factory accepts (empty for ``**kwargs`` factories)."""
        sig = _checks(self.factory).signature  # one that fails to load says so, not "none"
        if sig is None:
            return ()
        return tuple(
            p.name
            for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        )


def _load_reference(reference: str, what: str) -> Any:
    """The object at ``reference`` (``"package.module:attribute"``), imported now; a failure is
    a ``FieldError`` naming ``what`` and the reference."""
    module, _, attribute = reference.partition(":")
    try:
        loaded: Any = importlib.import_module(module)
        for part in attribute.split("."):
            loaded = getattr(loaded, part)
    except Exception as exc:  # name the component, not just the import error
        raise FieldError(
            "", f"{what} ({reference}) failed to load: {type(exc).__name__}: {exc}"
        ) from exc
    return loaded


class _Meta(Mapping[str, Any]):
    """An entry's metadata. A value under one of the registry's ``references`` keys may be given
    as a reference, ``"package.module:attribute"`` (code that goes with a factory registered by
    reference, such as an agent's call estimate): it is imported the first time it is read."""

    def __init__(self, values: Mapping[str, Any], references: frozenset[str], what: str) -> None:
        self._values = dict(values)
        self._references = references
        self._what = what

    def __getitem__(self, key: str) -> Any:
        value = self._values[key]
        if key in self._references and isinstance(value, str):
            value = _load_reference(value, f"{self._what} {key}")
            self._values[key] = value  # two threads may both import it: the same object
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


_REFERENCE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
"""``package.module:attribute``: a factory registered by where it is (as an entry point names
one)."""


_REGISTRIES: weakref.WeakSet[Registry[Any]] = weakref.WeakSet()
"""Every registry made in this process (weakly: one made for a test goes with it)."""


@dataclass(frozen=True)
class RegistrySnapshot(Generic[T]):
    """What a registry held at one moment (``Registry.snapshot``)."""

    entries: Mapping[str, Entry[T]]
    from_entry_points: frozenset[str]
    plugins_loaded: bool


def type_name(annotation: Any) -> str:
    """An annotation as a reader writes it: ``int``, ``float | None``, ``Decoding``,
    ``Literal['json', 'native']``, ``dict[str, int]`` (constraints of ``Annotated`` left out)."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        return type_name(args[0])
    if origin is Union or origin is UnionType:
        return " | ".join(type_name(a) for a in args)
    if origin is Literal:
        return f"Literal[{', '.join(repr(a) for a in args)}]"
    if annotation is type(None):
        return "None"
    if origin is not None and args:
        return f"{type_name(origin)}[{', '.join(type_name(a) for a in args)}]"
    if isinstance(annotation, type):
        return annotation.__name__
    return re.sub(r"\b(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_])", "", repr(annotation))


_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


class _Checks:
    """A factory's signature (None where it has none) and the type adapters of its annotated
    parameters, worked out once per factory (``_checks``): a run checks an agent's arguments
    every step."""

    def __init__(self, factory: Callable[..., Any]) -> None:
        try:
            self.signature: inspect.Signature | None = inspect.signature(factory)
        except (TypeError, ValueError):
            self.signature = None
        params = self.signature.parameters.values() if self.signature else ()
        self.requires = any(p.default is p.empty and p.kind not in _VARIADIC for p in params)
        """Whether a call without arguments fails to bind (most built-in metrics take none)."""
        self._factory = factory

    @functools.cached_property
    def adapters(self) -> dict[str, tuple[Any, TypeAdapter[Any]]]:
        """Built when first checked: listing a registry's parameters builds none."""
        adapters: dict[str, tuple[Any, TypeAdapter[Any]]] = {}
        try:
            params = inspect.signature(self._factory, eval_str=True).parameters
        except (NameError, TypeError, ValueError, SyntaxError):
            return adapters  # annotations that do not resolve here: only the binding is checked
        for name, p in params.items():
            if p.annotation is inspect.Parameter.empty or p.kind in _VARIADIC:
                continue
            try:
                adapter = TypeAdapter(p.annotation)
            except (PydanticUserError, TypeError, ValueError):
                continue  # a type pydantic cannot check (a protocol, a callable)
            # a type whose parts pydantic cannot resolve (one annotated for type checkers only)
            # would fail every call it checked: only the binding is checked
            if adapter.pydantic_complete or adapter.rebuild(raise_errors=False):
                adapters[name] = (p.annotation, adapter)
        return adapters


_CHECKS: dict[int, tuple[Callable[..., Any], _Checks]] = {}
_CHECKS_LOCK = threading.Lock()


def _checks(factory: Callable[..., Any]) -> _Checks:
    known = _CHECKS.get(id(factory))  # read without the lock: hundreds of threads ask each step
    if known is not None and known[0] is factory:
        return known[1]
    with _CHECKS_LOCK:
        known = _CHECKS.get(id(factory))
        if known is None or known[0] is not factory:
            known = _CHECKS[id(factory)] = (factory, _Checks(factory))
        return known[1]


@functools.lru_cache(maxsize=4)
def _installed(path: tuple[str, ...]) -> dict[str, tuple[EntryPoint, ...]]:
    """Every installed distribution's entry points by group, read once for every registry
    while ``sys.path`` stays as it is: each read opens every distribution's metadata (6 to 10
    ms with 280 installed), and a run's start-up asked a dozen registries."""
    found = entry_points()
    return {group: tuple(found.select(group=group)) for group in found.groups}


class Registry(Generic[T]):
    """Named factories of one kind, extensible through the entry-point group ``group``."""

    def __init__(
        self,
        kind: str,
        group: str | None = None,
        supplied: frozenset[str] = frozenset(),
        references: frozenset[str] = frozenset(),
    ) -> None:
        self.kind = kind
        self.group = group if group is not None else f"pastcast.{kind}s"
        self.supplied = supplied
        """Parameters the caller fills in, never a user (an agent's run setting): left out of
        the accepted arguments an error lists."""
        self.references = references
        """Metadata keys whose value may be a reference ``"package.module:attribute"``, imported
        when first read (code that goes with a factory registered by reference)."""
        self._entries: dict[str, Entry[T]] = {}
        self._from_entry_points: set[str] = set()
        self._plugins_loaded = False
        # Runner threads may list or build at once; the first one loads the plugins.
        self._lock = threading.RLock()
        _REGISTRIES.add(self)

    def snapshot(self) -> RegistrySnapshot[T]:
        """What the registry holds now, to ``restore`` later."""
        with self._lock:
            return RegistrySnapshot(
                dict(self._entries), frozenset(self._from_entry_points), self._plugins_loaded
            )

    def restore(self, saved: RegistrySnapshot[T]) -> None:
        """Hold exactly what ``saved`` held again (registrations made since are gone)."""
        with self._lock:
            self._entries = dict(saved.entries)
            self._from_entry_points = set(saved.from_entry_points)
            self._plugins_loaded = saved.plugins_loaded

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
        factory: Callable[..., T] | str,
        *,
        description: str | None = None,
        replace: bool = False,
        **meta: Any,
    ) -> Entry[T]:
        """Register ``factory`` under ``name``: the factory, or where it is
        (``"package.module:attribute"``), imported when the component is first built, described
        or asked for its parameters; its metadata is known at once (a value under one of the
        ``references`` keys given as a reference is imported when first read)."""
        if not name or name != name.strip():
            raise FieldError("", f"{self.kind} name {name!r} is empty or padded with spaces")
        references = [factory] + [v for k, v in meta.items() if k in self.references]
        for reference in references:
            if isinstance(reference, str) and not _REFERENCE.fullmatch(reference):
                raise FieldError(
                    "",
                    f"{self.kind} {name!r}: {reference!r} is not a reference "
                    "'package.module:attribute'",
                )
        if name in self._entries and not replace:
            raise FieldError("", f"{self.kind} {name!r} is already registered")
        what = f"{self.kind} {name!r}"
        entry = Entry(name, factory, _Meta(meta, self.references, what), description, self.kind)
        self._entries[name] = entry
        return entry

    def remove(self, name: str) -> None:
        """Unregister ``name`` (a component registered for one test, say)."""
        self.get(name)
        with self._lock:
            self._entries.pop(name)
            self._from_entry_points.discard(name)

    def _load_plugins(self) -> None:
        with self._lock:
            if self._plugins_loaded:
                return
            self._plugins_loaded = True  # a plugin that lists this registry must not recurse
            try:
                for ep in _installed(tuple(sys.path)).get(self.group, ()):
                    self._load(ep)
            except BaseException:
                self._plugins_loaded = False  # the same error again next time, not a half list
                raise

    def _load(self, ep: EntryPoint) -> None:
        where = f"entry point {ep.name!r} of group {self.group!r} ({ep.value})"
        try:
            loaded = ep.load()
        except Exception as exc:  # name the plugin, not just the import error
            raise FieldError("", f"{where} failed to load: {type(exc).__name__}: {exc}") from exc
        if isinstance(loaded, ModuleType):
            return  # importing the module registered its components
        if not callable(loaded):
            raise FieldError("", f"{where} is not callable")
        known = self._entries.get(ep.name)
        if known is not None:
            if known.factory is not loaded:  # the same plugin seen twice on the path is fine
                raise FieldError("", f"{where}: a {self.kind} {ep.name!r} is already registered")
            return
        self.add(ep.name, loaded)
        self._from_entry_points.add(ep.name)

    def reload_plugins(self) -> None:
        """Forget what entry points added and read them again on next use (after installing a
        plugin in a running process, and in tests). Modules imported by entry points stay
        imported, so what they registered stays registered."""
        with self._lock:
            for name in self._from_entry_points:
                self._entries.pop(name, None)
            self._from_entry_points.clear()
            self._plugins_loaded = False
        _installed.cache_clear()

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
            raise FieldError("", f"unknown {self.kind} {name!r} (known: {known})")
        return self._entries[name]

    def checked_args(
        self, name: str, args: Mapping[str, Any], positional: Sequence[Any] = ()
    ) -> dict[str, Any]:
        """``args`` as the factory gets them (values converted by their annotations), or a
        one-line ``FieldError`` naming the argument: one the factory does not take, one it
        needs, or a value of the wrong type (with the type expected and the value given)."""
        entry = self.get(name)
        checks = _checks(entry.factory)  # one that fails to load: that error, not no checks
        sig = checks.signature
        if sig is None or not (args or positional or checks.requires):
            return dict(args)
        try:
            sig.bind(*positional, **args)
        except TypeError as exc:
            raise FieldError("", self._binding_problem(entry, sig, args, positional, exc)) from None
        out = dict(args)
        adapters = checks.adapters
        for key, value in args.items():
            if key not in adapters:
                continue
            annotation, adapter = adapters[key]
            try:
                out[key] = adapter.validate_python(value)
            except ValidationError as exc:
                shown = repr(value)  # cut to 80 characters
                shown = shown if len(shown) <= 80 else shown[:77] + "..."
                raise FieldError(
                    "",
                    f"{self.kind} {name!r}: argument {key!r} must be {type_name(annotation)}, "
                    f"not {shown} ({' '.join(problems(exc)[0].split())})",
                ) from None
            except (RecursionError, ValueError, TypeError) as exc:  # a value pydantic chokes on
                raise FieldError(
                    "",
                    f"{self.kind} {name!r}: argument {key!r} must be {type_name(annotation)} "
                    f"({type(exc).__name__})",
                ) from None
        return out

    def _binding_problem(
        self,
        entry: Entry[T],
        sig: inspect.Signature,
        args: Mapping[str, Any],
        positional: Sequence[Any],
        exc: TypeError,
    ) -> str:
        """Why the arguments do not bind: the first unknown or missing one by name."""
        params = sig.parameters
        accepted = ", ".join(p for p in entry.parameters() if p not in self.supplied) or "none"
        what = f"{self.kind} {entry.name!r}"
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            unknown = [k for k in args if k not in params]
            if unknown:
                return f"{what}: no argument {unknown[0]!r} (accepted arguments: {accepted})"
        filled = list(params)[: len(positional)]
        for key, p in params.items():
            required = p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            if required and key not in args and key not in filled:
                return f"{what}: argument {key!r} is required (accepted arguments: {accepted})"
        return f"{what}: {exc} (accepted arguments: {accepted})"

    def build(self, name: str, /, *positional: Any, **args: Any) -> T:
        """Check the arguments and call the factory with them (converted)."""
        checked = self.checked_args(name, args, positional)
        return self.get(name).factory(*positional, **checked)

    def spec(self, name: str, /, **args: Any) -> ComponentSpec:
        """The record of ``build(name, **args)``, checked now, rebuilt later by ``rebuild``."""
        self.checked_args(name, args)
        return ComponentSpec(kind=self.kind, name=name, args=args)

    def rebuild(self, spec: ComponentSpec) -> T:
        if spec.kind != self.kind:
            raise FieldError("", f"a {spec.kind} spec cannot build a {self.kind}")
        return self.build(spec.name, **spec.args)


def all_registries() -> tuple[Registry[Any], ...]:
    """Every registry made so far in this process (by kind)."""
    return tuple(sorted(_REGISTRIES, key=lambda r: r.kind))
