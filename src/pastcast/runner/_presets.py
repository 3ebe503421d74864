"""The papers' defaults by name: ``dojo``, ``dojo-train``, ``hindcast`` and ``arena``.

A preset is a frozen record listing settings, each a dotted key with its value, the stage it
applies to and the paper's section it comes from. Each stage's settings are the fields of that
stage's record (``PresetRecord``: ``run`` the experiment plan's, ``budgets.max_tool_calls``,
``agent_args.two-stage.config.rounds``; ``import``, ``curate``, ``arena`` and ``train`` those of
the import, curation, arena replay and fine-tuning records): a record naming a preset
(``preset = "hindcast"`` in its file, ``--preset hindcast``, ``with_preset(record, "hindcast")``)
starts from them, and every field it sets itself is set over them. A setting naming no field of
its record (``stats``, ``corpus_since``) says what the paper did; where pastcast's own default
already is the paper's value it is listed so a reader can check it.

Presets live in a registry (``presets``) of factories returning ``Preset`` records, so a plugin
can add its own; ``preset(name)`` builds one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import ConfigDict, Field, JsonValue, field_validator, model_validator

from pastcast.records import Record
from pastcast.registry import Registry

__all__ = [
    "Preset",
    "PresetRecord",
    "PresetSetting",
    "PresetStage",
    "deep_merge",
    "preset",
    "preset_names",
    "presets",
    "with_preset",
]

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
            *parents, leaf = _split(s.key)
            for part in parents:
                node = node.setdefault(part, {})
            node[leaf] = s.value
        return out


def _split(key: str) -> list[str]:
    return key.split(".")


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


_Row = tuple[Any, ...]
"""A setting as a row of a paper's table: ``(key, value, section[, stage[, note]])``."""
_DEFAULTS: _Row = ("run", "")
"""A row's stage and note when it leaves them out."""


class PresetRecord(Record):
    """A workflow's record that a preset can fill: the settings of its ``PRESET_STAGE`` set
    under the fields it is given (tables merged key by key), the preset's name kept in it."""

    model_config = ConfigDict(use_attribute_docstrings=True)  # each field's help on the CLI
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
        if cls.PRESET_DENSE_LEG is not None and not _has_dense_leg(data, cls.PRESET_DENSE_LEG[0]):
            *parents, leaf = _split(cls.PRESET_DENSE_LEG[1])
            node = own
            for part in parents:
                node = node.get(part, {})
            node.pop(leaf, None)
        return deep_merge(own, data)

    @field_validator("preset")
    @classmethod
    def _known(cls, name: str | None) -> str | None:
        if name is not None and name not in preset_names():
            raise ValueError(f"unknown {name!r} (one of {', '.join(preset_names())})")
        if name is not None and not preset(name).of_stage(cls.PRESET_STAGE):
            raise ValueError(f"{name!r} sets nothing of the {cls.PRESET_STAGE} stage")
        return name


def _has_dense_leg(data: Mapping[str, Any], retrieval: str) -> bool:
    """Whether ``data`` gives no retrieval at ``retrieval`` or one with a dense leg."""
    node: Any = data
    for part in _split(retrieval):
        node = node.get(part) if isinstance(node, Mapping) else None
    if node is None:
        return True
    legs = node.split(",") if isinstance(node, str) else list(node)
    return bool({"dense", "hybrid"} & set(legs))


R = TypeVar("R", bound=PresetRecord)


def with_preset(record: R, name: str) -> R:
    """``record`` under the preset ``name``: its settings of the record's stage fill each field
    the record was not given (``model_fields_set``, nested records field by field), the fields
    given win; ``ValidationError`` (field ``preset``) for a preset unknown or of no use here."""
    return type(record).model_validate({**record.model_dump(exclude_unset=True), "preset": name})


def _preset(name: str, paper: str, description: str, rows: Iterable[_Row]) -> Preset:
    """A paper's preset from its table; each setting's source is the paper and its section."""
    settings = tuple(
        PresetSetting(key=key, value=value, source=f"{paper} {section}", stage=stage, note=note)
        for key, value, section, stage, note in ((*r, *_DEFAULTS[len(r) - 3 :]) for r in rows)
    )
    return Preset(name=name, paper=paper, description=description, settings=settings)


def _leaves(prefix: str, value: Any) -> Iterable[tuple[str, Any]]:
    if isinstance(value, Mapping) and value:
        for k, v in value.items():
            yield from _leaves(f"{prefix}.{k}", v)
    else:
        yield prefix, value


_DOJO = "Forecast-Dojo"

_DOJO_COMMON: tuple[_Row, ...] = (
    ("budgets.python_tool", True, "4.4 (Compute: python(code))"),
    ("corpus.retrieval", "dense", "A.1 (search ranks by the articles' embeddings)"),
    (
        "corpus.embedder",
        "qwen3-embedding-8b",
        "A.1 (Qwen3-Embedding-8B, 4096-d, L2-normalised)",
        "run",
        "served by an embedding server: PASTCAST_EMBEDDING_URL (docs/corpus.md)",
    ),
    ("corpus.nprobe", None, "A.1 (exact inner-product indices)"),
    ("embedder", "qwen3-embedding-8b", "A.2 (the judge's dense leg, fused with BM25)", "curate"),
    (
        "agent_args.tool-agent.no_tools.max_tokens",
        65_536,
        "B.2",
        "run",
        "no-tools runs raise the output cap: the whole forecast is one call",
    ),
    (
        "filters.min_dates",
        3,
        "4.3",
        "import",
        "evaluation events keep >= 3 forecast dates (pastcast data import --preset dojo, "
        "or --min-dates 3)",
    ),
    (
        "config.min_dates",
        3,
        "4.3",
        "curate",
        "evaluation events keep >= 3 forecast dates (pastcast data curate --min-dates)",
    ),
    (
        "market_only",
        True,
        "B.6",
        "stats",
        "thirds over dates with a market probability (stats longitudinal --market-only)",
    ),
    (
        "corpus_since",
        "2025-03-01",
        "4.2",
        "import",
        "the search window's lower bound: the paper's corpus starts with March 2025 "
        "(informational: a corpus build's own first date)",
    ),
)


@presets.register("dojo")
def dojo() -> Preset:
    """Forecast-Dojo's evaluation runs (section 5, appendix B.2)."""
    return _preset(
        "dojo",
        _DOJO,
        "Forecast-Dojo's evaluation runs: four rollouts, 120 tool iterations and 400 tool calls "
        "per step, the python tool, a 65,536-token no-tools reply.",
        (
            ("rollouts", 4, "5.1, B.2 (four rollouts per date)"),
            ("budgets.max_tool_iterations", 120, "B.2"),
            ("budgets.max_tool_calls", 400, "B.2"),
            *_DOJO_COMMON,
        ),
    )


@presets.register("dojo-train")
def dojo_train() -> Preset:
    """Forecast-Dojo's training use case (appendix B.2, Table 4)."""
    return _preset(
        "dojo-train",
        _DOJO,
        "Forecast-Dojo's training use case: memory-free, python, 80 tool iterations and 200 "
        "tool calls per forecast, temperature 0.6, 32,768-token cap, top-p 1.",
        (
            ("rollouts", 4, "B.2"),
            ("settings", ["memory_free"], "B.2 (memory-free execution)"),
            ("budgets.max_tool_iterations", 80, "B.2 (training use case)"),
            ("budgets.max_tool_calls", 200, "B.2 (training use case)"),
            ("decoding.temperature", 0.6, "B.2"),
            ("decoding.max_tokens", 32_768, "B.2"),
            ("decoding.top_p", 1.0, "B.2"),
            ("epochs", 3, "5.5 (three epochs over the full assistant trajectory)", "train"),
            (
                "student",
                "Qwen/Qwen3-30B-A3B-Thinking-2507",
                "5.5",
                "train",
                "informational: the tuned model; give its local directory as the base",
            ),
            *_DOJO_COMMON,
        ),
    )


_HC = "Hindcast"


_HINDCAST_CONFIG = (
    "rounds",
    "seed_queries",
    "followup_queries",
    "top_k",
    "expand",
    "stop_confidence",
    "expand_threads",
    "author_posts",
    "author_comments",
    "tally",
    "answer_form",
    "fallback",
)
"""The research loop's settings the paper states (5.2, B.3); the rest stay pastcast's."""


def _hindcast_agent() -> list[_Row]:
    """The two-stage agent's arguments as Hindcast runs it (``HINDCAST_TWO_STAGE``, the
    defaults of ``two-stage-hindcast``), for ``two-stage``: the plan's ``two_stage`` setting."""
    from pastcast.agents import HINDCAST_TWO_STAGE  # a preset's values: the agents load later

    cfg = HINDCAST_TWO_STAGE.config.model_dump(mode="json", include=set(_HINDCAST_CONFIG))
    out: list[_Row] = [
        (f"agent_args.two-stage.config.{k}", cfg[k], "5.2, B.3") for k in _HINDCAST_CONFIG
    ]
    out.append(
        (
            "agent_args.two-stage.config.doc_type",
            "submission",
            "3.2, B.2 (search_database: doc_type submission only)",
        )
    )
    decoding = HINDCAST_TWO_STAGE.decoding.model_dump(mode="json", exclude_none=True)
    stages = {
        k: d.model_dump(mode="json", exclude_none=True)
        for k, d in HINDCAST_TWO_STAGE.stages.items()
    }
    args = {"decoding": decoding, "stages": stages}
    out.extend(
        (key, value, "5.2, B.3 Table 4") for key, value in _leaves("agent_args.two-stage", args)
    )
    return out


@presets.register("hindcast")
def hindcast() -> Preset:
    """Hindcast's retrieval agent and evaluation (sections 4.2, 5.2, appendix B.3)."""
    return _preset(
        "hindcast",
        _HC,
        "Hindcast: the two-stage agent with its tally, five consistency runs, search over "
        "submissions only; datasets scheduled at t0, the day before close.",
        (
            ("rollouts", 5, "4.2 (five consistency runs)"),
            ("settings", ["two_stage"], "5.2 (the Retrieval agent)"),
            (
                "schedule",
                "hindcast",
                "4.2 (t0: the day before close)",
                "import",
                "pastcast data import --schedule hindcast (a plan's schedule re-schedules)",
            ),
            ("budgets.max_search_k", 20, "B.3 (top 20 hits per query)"),
            ("corpus.retrieval", "dense", "3.2 (dense semantic search)"),
            (
                "corpus.embedder",
                "qwen3-embedding-0.6b",
                "3.2 (Qwen3-Embedding-0.6B, cosine)",
                "run",
                "served by an embedding server: PASTCAST_EMBEDDING_URL (docs/corpus.md)",
            ),
            ("embedder", "qwen3-embedding-0.6b", "3.2 (the archive's encoder)", "curate"),
            *_hindcast_agent(),
            ("config.coverage_queries", 5, "4.1", "curate", "5 queries per side"),
            ("config.coverage_final", "judge", "4.1", "curate", "a final step reads both tallies"),
            ("config.coverage_at", "close", "4.1", "curate", "probed at the close date"),
            ("window_days", None, "4.1", "curate", "the whole archive before tau*"),
            ("config.keep_coverage", "strong", "4.1", "curate", "only markets labelled strong"),
        ),
    )


_ARENA = "Foresight Arena"


@presets.register("arena")
def arena() -> Preset:
    """Foresight Arena's rounds (sections 4.1 and 5)."""
    return _preset(
        "arena",
        _ARENA,
        "Foresight Arena's rounds: seven markets a round chosen by volume and activity, 50 "
        "rounds (the power analysis of section 5).",
        (
            ("markets", 7, "5 (k = 7 markets per round)", "arena"),
            ("rounds", 50, "5 (R = 50 rounds)", "arena"),
            ("selector", "volume-activity", "4.1 (volume, trending)", "arena"),
        ),
    )
