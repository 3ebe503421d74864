"""The papers' defaults by name (docs/runs.md, "Presets"): data in ``presets.toml`` beside this
module, in a registry (``presets``) a plugin can add to; ``with_preset`` is the one merge.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import partial
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import Field, JsonValue, field_validator, model_validator

from pastcast.records import Record
from pastcast.registry import Registry
from pastcast.textfiles import package_toml

PresetStage = Literal["run", "import", "curate", "stats", "arena", "train"]


class PresetSetting(Record):
    """One default of a paper: ``key`` (dotted, a plan field for the ``run`` stage) = ``value``."""

    key: str = Field(min_length=1)
    value: JsonValue
    source: str = Field(min_length=1)
    """Where the paper says so (``Forecast-Dojo B.2``)."""
    stage: PresetStage = "run"
    note: str = ""


class Preset(Record):
    name: str = Field(min_length=1)
    paper: str
    description: str
    settings: tuple[PresetSetting, ...]

    def of_stage(self, stage: PresetStage) -> tuple[PresetSetting, ...]:
        return tuple(s for s in self.settings if s.stage == stage)

    def fields(self, stage: PresetStage = "run") -> dict[str, Any]:
        """The settings of ``stage`` as nested fields (``{"budgets": {"max_tool_calls": 400}}``).
        A key under ``agent_args`` nests by its agent's name first: agent names hold dots
        nowhere but are joined by ``.`` to their argument path."""
        out: dict[str, Any] = {}
        for s in self.of_stage(stage):
            node = out
            *parents, leaf = s.key.split(".")
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = s.value
        return out


def deep_merge(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``top`` set over it: tables merged key by key, anything else (a list, a
    value) replaced whole, so an explicit list of settings is never mixed with a preset's."""
    out: dict[str, Any] = dict(base)
    for key, value in top.items():
        old = out.get(key)
        if isinstance(old, Mapping) and isinstance(value, Mapping):
            out[key] = deep_merge(old, value)
        else:
            out[key] = value
    return out


presets: Registry[Preset] = Registry("preset")


def preset(name: str) -> Preset:
    """The preset ``name`` (``ValueError`` naming the known ones otherwise)."""
    return presets.build(name)


def preset_names() -> tuple[str, ...]:
    return presets.names()


class PresetRecord(Record):
    """A workflow's record that a preset can fill: the settings of its ``PRESET_STAGE`` set
    under the fields it is given (tables merged key by key), the preset's name kept in it."""

    PRESET_STAGE: ClassVar[PresetStage]
    PRESET_SKIPS: ClassVar[frozenset[str]] = frozenset()
    """Fields of the stage's settings applied elsewhere (a plan's agents' own arguments)."""
    PRESET_DENSE_LEG: ClassVar[tuple[str, str] | None] = None
    """The dotted fields of the record's retrieval and of its dense leg's embedder: a preset's
    embedder is left out where the record is given a retrieval without a dense leg (bm25)."""

    preset: str | None = None
    """Start from a paper's defaults (pastcast presets show NAME); every field given is set
    over them."""

    @model_validator(mode="before")
    @classmethod
    def _under_preset(cls, data: Any) -> Any:
        name = data.get("preset") if isinstance(data, dict) else None
        if not isinstance(name, str) or name not in preset_names():
            return data  # no preset, or one refused by its field's check
        # A setting naming no field (``corpus_since``) says what the paper did, nothing more.
        fields = set(cls.model_fields) - cls.PRESET_SKIPS
        own = {k: v for k, v in preset(name).fields(cls.PRESET_STAGE).items() if k in fields}
        if cls.PRESET_DENSE_LEG is not None:
            retrieval, embedder = (key.split(".") for key in cls.PRESET_DENSE_LEG)
            given = _at(data, retrieval)
            legs = set(given.split(",") if isinstance(given, str) else given or ())
            if given is not None and not {"dense", "hybrid"} & legs:
                _at(own, embedder[:-1], {}).pop(embedder[-1], None)
        return deep_merge(own, data)

    @field_validator("preset")
    @classmethod
    def _known(cls, name: str | None) -> str | None:
        if name is not None and name not in preset_names():
            raise ValueError(f"unknown {name!r} (one of {', '.join(preset_names())})")
        if name is not None and not preset(name).of_stage(cls.PRESET_STAGE):
            raise ValueError(f"{name!r} sets nothing of the {cls.PRESET_STAGE} stage")
        return name


def _at(data: Any, path: list[str], default: Any = None) -> Any:
    """The value at ``path`` in nested tables (``default`` where there is none)."""
    for part in path:
        data = data.get(part) if isinstance(data, Mapping) else None
    return default if data is None else data


R = TypeVar("R", bound=PresetRecord)


def with_preset(record: R, name: str) -> R:
    """``record`` under the preset ``name`` (docs/runs.md, "Every workflow's record");
    ``ValidationError`` (field ``preset``) for a preset unknown or of no use here."""
    return type(record).model_validate({**record.model_dump(exclude_unset=True), "preset": name})


def _leaves(prefix: str, value: Any) -> Iterable[tuple[str, Any]]:
    if isinstance(value, Mapping) and value:
        for k, v in value.items():
            yield from _leaves(f"{prefix}.{k}", v)
    else:
        yield prefix, value


def _hindcast_agent(config: list[str]) -> list[dict[str, Any]]:
    """The two-stage agent's arguments as Hindcast runs it (``HINDCAST_TWO_STAGE``, the
    defaults of ``two-stage-hindcast``; of its research loop, the ``config`` keys), for
    ``two-stage``: the plan's ``two_stage`` setting."""
    from pastcast.agents import HINDCAST_TWO_STAGE  # a preset's values: the agents load later

    cfg = HINDCAST_TWO_STAGE.config.model_dump(mode="json", include=set(config))
    out = [
        {"key": f"agent_args.two-stage.config.{k}", "value": cfg[k], "section": "5.2, B.3"}
        for k in config
    ]
    args = {
        "decoding": HINDCAST_TWO_STAGE.decoding.model_dump(mode="json", exclude_none=True),
        "stages": {
            k: d.model_dump(mode="json", exclude_none=True)
            for k, d in HINDCAST_TWO_STAGE.stages.items()
        },
    }
    out.extend(
        {"key": key, "value": value, "section": "5.2, B.3 Table 4"}
        for key, value in _leaves("agent_args.two-stage", args)
    )
    return out


def _preset(name: str, table: Mapping[str, Any], shared: Mapping[str, Any]) -> Preset:
    """A paper's preset from its table; each setting's source is the paper and its section."""
    rows = [*table["settings"], *shared.get(table.get("shared", ""), ())]
    if "two_stage_config" in table:  # read from the code they configure, after the file's
        rows += _hindcast_agent(table["two_stage_config"])
    settings = tuple(
        PresetSetting(
            key=r["key"],
            value=r.get("value"),
            source=f"{table['paper']} {r['section']}",
            stage=r.get("stage", "run"),
            note=r.get("note", ""),
        )
        for r in rows
    )
    return Preset(
        name=name, paper=table["paper"], description=table["description"], settings=settings
    )


_PAPERS = package_toml("pastcast.runner", "presets.toml")
_SHARED = _PAPERS.pop("shared")
for _name, _table in _PAPERS.items():
    presets.add(_name, partial(_preset, _name, _table, _SHARED), description=_table["summary"])
