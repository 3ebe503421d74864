"""The one registry pattern: names, argument checks before building, specs, entry points."""

from __future__ import annotations

import importlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from _plugins import install_plugin
from pastcast.errors import FieldError
from pastcast.registry import ComponentSpec, Registry, all_registries

if TYPE_CHECKING:
    from collections.abc import Sized as CheckersOnly  # no such name here at run time


class Widget:
    def __init__(self, size: int, colour: str = "red") -> None:
        self.size = size
        self.colour = colour


def _widgets(group: str = "pastcast-test.widgets") -> Registry[Widget]:
    reg: Registry[Widget] = Registry("widget", group=group)

    @reg.register("square", shape="four sides")
    def square(size: int, colour: str = "red") -> Widget:
        """A square widget.

        More text that is not the description."""
        return Widget(size, colour)

    reg.add("round", Widget, description="A round widget.")
    return reg


def test_register_build_and_describe() -> None:
    reg = _widgets()
    assert reg.names() == ("round", "square")
    entry = reg.get("square")
    assert entry.description == "A square widget."
    assert entry.meta == {"shape": "four sides"}
    assert entry.parameters() == ("size", "colour")
    built = reg.build("square", size=3, colour="blue")
    assert (built.size, built.colour) == (3, "blue")
    assert reg.build("round", 2).size == 2  # positional arguments are checked as well
    assert "square" in reg and "hexagon" not in reg
    assert [e.name for e in reg] == ["round", "square"]
    assert Registry("agent").group == "pastcast.agents"


def test_arguments_are_checked_before_the_factory_runs() -> None:
    reg = _widgets()
    calls: list[int] = []
    reg.add("counted", lambda size: calls.append(size) or Widget(size))
    with pytest.raises(
        FieldError,
        match=r"widget 'square': .*'shape'.*accepted arguments: "
        r"size, colour",
    ):
        reg.build("square", size=1, shape="x")
    with pytest.raises(FieldError, match=r"argument 'size' is required"):
        reg.spec("square", colour="red")
    with pytest.raises(FieldError, match="counted"):
        reg.build("counted", 1, 2)
    with pytest.raises(FieldError, match=r"argument 'size' is required"):
        reg.build("counted")  # no arguments at all are checked too
    reg.add("keyed", lambda *, size, colour="red": Widget(size))
    with pytest.raises(FieldError, match=r"argument 'size' is required"):
        reg.build("keyed")
    assert calls == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"size": "three"}, "argument 'size' must be int, not 'three' (Input should be a valid"),
        ({"size": 2, "colour": 7}, "argument 'colour' must be str, not 7 ("),
        ({"size": [1] * 100}, "not [1, 1, 1"),
    ],
)
def test_argument_types_are_checked_for_every_caller(args: dict[str, object], message: str) -> None:
    reg = _widgets()
    calls = (
        lambda: reg.build("square", **args),
        lambda: reg.spec("square", **args),
        lambda: reg.checked_args("square", args),
    )
    for call in calls:
        with pytest.raises(FieldError, match=re.escape(message)) as caught:
            call()
        text = str(caught.value)
        assert text.startswith("widget 'square': ") and "\n" not in text and len(text) < 300


def test_values_reach_the_factory_as_their_annotations_read_them() -> None:
    reg = _widgets()
    built = reg.build("square", size="4")  # pydantic's lax reading, as a record's field
    assert built.size == 4 and isinstance(built.size, int)


@dataclass(frozen=True)
class Holder:
    part: CheckersOnly


def test_a_type_pydantic_cannot_resolve_is_passed_as_given() -> None:
    reg: Registry[Holder] = Registry("holder", group="pastcast-test.holders")

    @reg.register("kept")
    def kept(holder: Holder) -> Holder:
        return holder

    given = Holder([1, 2])
    assert reg.build("kept", holder=given) is given
    assert reg.build("kept", given) is given


def test_unknown_names_list_known_ones_and_duplicates_are_refused() -> None:
    reg = _widgets()
    with pytest.raises(FieldError, match=r"unknown widget 'hexagon' \(known: round, square\)"):
        reg.get("hexagon")
    with pytest.raises(FieldError, match="already registered"):
        reg.add("round", Widget)
    reg.add("round", Widget, replace=True, description="replaced")
    assert reg.get("round").description == "replaced"
    reg.remove("round")
    assert reg.names() == ("square",)
    with pytest.raises(FieldError, match="unknown widget 'round'"):
        reg.remove("round")
    with pytest.raises(FieldError, match="empty or padded"):
        reg.add(" round", Widget)
    assert isinstance(FieldError("", "x"), ValueError)


def test_spec_records_and_rebuilds() -> None:
    reg = _widgets()
    spec = reg.spec("square", size=4)
    assert spec == ComponentSpec(kind="widget", name="square", args={"size": 4})
    again = ComponentSpec.model_validate_json(spec.model_dump_json())
    assert reg.rebuild(again).size == 4
    with pytest.raises(FieldError, match="a gadget spec cannot build a widget"):
        reg.rebuild(ComponentSpec(kind="gadget", name="square"))


_PLUGIN = """
class Star:
    def __init__(self, points: int = 5) -> None:
        self.points = points


def make_star(points: int = 5) -> Star:
    '''A star from a plugin.'''
    return Star(points)


NOT_CALLABLE = 42
"""


def test_entry_point_plugins_are_found_and_forgotten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = "pastcast-test.plugin-widgets"
    reg = _widgets(group)
    assert reg.names() == ("round", "square")  # loaded once: nothing installed yet
    install_plugin(
        tmp_path,
        monkeypatch,
        dist="widgets-plugin",
        modules={"tests_widgets_plugin.stars": _PLUGIN},
        entry_points={group: {"star": "tests_widgets_plugin.stars:make_star"}},
    )
    assert "star" not in reg.names()  # the plugin list is cached
    reg.reload_plugins()
    assert "star" in reg
    assert reg.get("star").description == "A star from a plugin."
    assert reg.build("star", points=7).points == 7  # type: ignore[attr-defined]
    with pytest.raises(FieldError, match="accepted arguments: points"):
        reg.build("star", corners=3)
    # A fresh registry of the same group finds it without a reload.
    assert "star" in _widgets(group).names()
    monkeypatch.undo()
    reg.reload_plugins()
    assert reg.names() == ("round", "square")


def test_installed_plugins_are_read_once_for_every_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reading the installed distributions' entry points opens every one's metadata: a run's
    # start-up lists a dozen registries, which share one read while sys.path is unchanged.
    from pastcast import registry

    reads: list[object] = []
    real = registry.entry_points

    def counted(**kw: object) -> object:
        reads.append(kw)
        return real(**kw)  # type: ignore[arg-type]

    monkeypatch.setattr(registry, "entry_points", counted)
    registry._installed.cache_clear()
    first, second = _widgets("pastcast-test.read-a"), _widgets("pastcast-test.read-b")
    assert first.names() == second.names() == ("round", "square")
    assert len(reads) == 1
    group = "pastcast-test.read-c"
    install_plugin(  # a plugin put on sys.path later is read, by a registry not yet listed
        tmp_path,
        monkeypatch,
        dist="read-plugin",
        modules={"tests_read_plugin.stars": _PLUGIN},
        entry_points={group: {"star": "tests_read_plugin.stars:make_star"}},
    )
    assert "star" in _widgets(group).names() and len(reads) == 2
    first.reload_plugins()  # and a reload reads them again
    assert first.names() == ("round", "square") and len(reads) == 3


def test_module_entry_points_register_on_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = "pastcast-test.module-widgets"
    install_plugin(
        tmp_path,
        monkeypatch,
        dist="module-widgets",
        modules={
            "tests_module_widgets.registry": f"""
                from pastcast.registry import Registry

                widgets = Registry("widget", group={group!r})
            """,
            "tests_module_widgets.plugin": """
                from tests_module_widgets.registry import widgets

                @widgets.register("hexagon")
                def hexagon(size: int = 6) -> int:
                    '''Six sides.'''
                    return size
            """,
        },
        entry_points={group: {"hexagons": "tests_module_widgets.plugin"}},
    )
    from tests_module_widgets.registry import widgets  # type: ignore[import-not-found]

    assert widgets.names() == ("hexagon",)
    assert widgets.build("hexagon") == 6


def test_broken_plugins_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    group = "pastcast-test.broken-widgets"
    install_plugin(
        tmp_path,
        monkeypatch,
        dist="broken-widgets",
        modules={"tests_broken_widgets": "import no_such_module_anywhere\n"},
        entry_points={group: {"broken": "tests_broken_widgets:make"}},
    )
    reg: Registry[object] = Registry("widget", group=group)
    for _ in range(2):  # the failure is reported every time, not once and then hidden
        with pytest.raises(
            FieldError,
            match=r"entry point 'broken' of group 'pastcast-test.broken-widgets' "
            r"\(tests_broken_widgets:make\) failed to load: ModuleNotFoundError",
        ):
            reg.names()


def test_plugins_that_are_not_factories_or_clash_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = "pastcast-test.odd-widgets"
    install_plugin(
        tmp_path,
        monkeypatch,
        dist="odd-widgets",
        modules={"tests_odd_widgets": _PLUGIN},
        entry_points={group: {"number": "tests_odd_widgets:NOT_CALLABLE"}},
    )
    reg: Registry[object] = Registry("widget", group=group)
    with pytest.raises(FieldError, match=r"'number' .* is not callable"):
        reg.names()

    clash = "pastcast-test.clashing-widgets"
    install_plugin(
        tmp_path / "clash",
        monkeypatch,
        dist="clashing-widgets",
        modules={"tests_clashing_widgets": _PLUGIN},
        entry_points={clash: {"square": "tests_clashing_widgets:make_star"}},
    )
    with pytest.raises(FieldError, match="a widget 'square' is already registered"):
        _widgets(clash).names()


def test_a_factory_registered_by_reference_is_imported_on_first_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(
        tmp_path,
        monkeypatch,
        dist="lazy-widgets",
        modules={"tests_lazy_widgets.stars": _PLUGIN},
        entry_points={},
    )
    reg = _widgets("pastcast-test.lazy-widgets")
    reg.add("star", "tests_lazy_widgets.stars:make_star", points="many")
    entry = reg.get("star")
    # Listed, looked up and read for its metadata without importing the module.
    assert "star" in reg.names() and entry.meta == {"points": "many"} and not entry.loaded
    assert "tests_lazy_widgets.stars" not in sys.modules
    assert entry.description == "A star from a plugin."  # the docstring: imported now
    assert entry.loaded and "tests_lazy_widgets.stars" in sys.modules
    assert reg.build("star", points=7).points == 7  # type: ignore[attr-defined]
    with pytest.raises(FieldError, match="widget 'star': argument 'points' must be int"):
        reg.checked_args("star", {"points": "seven"})
    reg.add("dotted", "tests_lazy_widgets.stars:Star.__init__", description="Given.")
    assert reg.get("dotted").description == "Given." and not reg.get("dotted").loaded


def test_a_reference_that_does_not_load_is_named_on_every_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(
        tmp_path,
        monkeypatch,
        dist="odd-lazy-widgets",
        modules={"tests_odd_lazy_widgets": _PLUGIN},
        entry_points={},
    )
    reg = _widgets("pastcast-test.odd-lazy-widgets")
    reg.add("missing", "tests_no_such_module:make")
    reg.add("absent", "tests_odd_lazy_widgets:no_such_factory")
    reg.add("number", "tests_odd_lazy_widgets:NOT_CALLABLE")
    assert reg.names() == ("absent", "missing", "number", "round", "square")
    for _ in range(2):
        with pytest.raises(
            FieldError,
            match=r"widget 'missing' \(tests_no_such_module:make\) failed to load: "
            r"ModuleNotFoundError",
        ):
            reg.build("missing")
    with pytest.raises(FieldError, match=r"widget 'absent' .* failed to load: AttributeError"):
        reg.get("absent").parameters()
    with pytest.raises(FieldError, match=r"widget 'number' .* is not callable"):
        reg.spec("number")
    for bad in ("no_colon", "a.b:", ":attr", "a b:c", "a:b-c"):
        with pytest.raises(FieldError, match=r"is not a reference 'package\.module:attribute'"):
            reg.add("bad", bad)


def test_metadata_given_by_reference_is_imported_when_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugin(
        tmp_path,
        monkeypatch,
        dist="lazy-meta-widgets",
        modules={"tests_lazy_meta_widgets": _PLUGIN},
        entry_points={},
    )
    reg: Registry[Widget] = Registry(
        "widget", group="pastcast-test.lazy-meta", references=frozenset({"maker"})
    )
    reg.add(
        "star",
        "tests_lazy_meta_widgets:make_star",
        maker="tests_lazy_meta_widgets:Star",
        label="a:b",  # not a reference key: kept as given
    )
    entry = reg.get("star")
    assert set(entry.meta) == {"maker", "label"} and entry.meta["label"] == "a:b"
    assert "tests_lazy_meta_widgets" not in sys.modules
    assert entry.meta["maker"](3).points == 3
    reg.add("broken", Widget, maker="tests_no_such_module:Star")
    with pytest.raises(FieldError, match=r"widget 'broken' maker \(tests_no_such_module:Star\)"):
        reg.get("broken").meta.get("maker")
    with pytest.raises(FieldError, match="is not a reference"):
        reg.add("bad", Widget, maker="not a reference")


# The packages that own a registry with built-in components registered by reference.
_OWNERS = (
    "pastcast.agents",
    "pastcast.corpus",
    "pastcast.corpus.dense",
    "pastcast.corpus.sources",
    "pastcast.markets",
    "pastcast.models",
    "pastcast.reports.figures",
    "pastcast.runner",
    "pastcast.world",
)


def test_every_component_registered_by_reference_loads() -> None:
    pytest.importorskip("matplotlib")  # the figures' extra
    for owner in _OWNERS:
        importlib.import_module(owner)
    from pastcast.runner import executors  # a lazy name: its module registers the executors

    assert "dask" in executors
    loaded = []
    for registry in all_registries():
        for entry in registry.entries():
            if isinstance(entry.target, str):
                assert callable(entry.factory), entry.name
                assert entry.description, entry.name
                for key in registry.references & set(entry.meta):
                    assert entry.meta[key] is not None, (entry.name, key)
                loaded.append(f"{registry.kind}:{entry.name}")
    kinds = {name.partition(":")[0] for name in loaded}
    expected = {"agent", "backend", "embedder", "source", "model provider", "figure", "executor"}
    assert expected <= kinds
