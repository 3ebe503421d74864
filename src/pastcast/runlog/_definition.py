"""What defines a run, so a resumed run log never mixes records of different runs.

A run is defined by its header without the identity of one execution (run id, creation time,
code version, schema version) and without what it merely describes (the models' training
cutoffs): dataset, configuration, agents, prompts, and any field added to the header later (a
corpus identity). Settings that change how a run executes but not what it
records (``EXECUTION_ONLY``) are left out.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from pastcast.runlog._schema import RunHeader
from pastcast.safejson import canonical_json

EXECUTION_ONLY = ("workers",)
"""Configuration keys that never change a record (parallelism), ignored on resume."""

_IDENTITY = {"schema_version", "run_id", "created_at", "code_version"}
# What the header says about the run's models, not what the run is (a cutoff registered later
# must not refuse a resume), and the plan it was resolved from (its output path, concurrency).
_DESCRIPTIVE = {"knowledge_cutoffs", "plan"}
_ABSENT = "<absent>"


def run_definition(header: RunHeader) -> dict[str, Any]:
    """The header's defining part as JSON values (``config.agents`` repeats ``agents``)."""
    out = header.model_dump(mode="json", exclude=_IDENTITY | _DESCRIPTIVE)
    out["config"] = {
        k: v for k, v in out["config"].items() if k not in EXECUTION_ONLY and k != "agents"
    }
    return out


def run_fingerprint(header: RunHeader) -> str:
    """sha256 of the canonical JSON of ``run_definition``: equal exactly for the same run."""
    text = canonical_json(run_definition(header), ascii_only=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _first_difference(old: Any, new: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first leaf (dotted path, old, new) where two JSON values differ, or None."""
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() | new.keys()):
            sub = f"{path}.{key}" if path else str(key)
            found = _first_difference(old.get(key, _ABSENT), new.get(key, _ABSENT), sub)
            if found is not None:
                return found
        return None
    return None if old == new else (path, old, new)


def _value(v: Any) -> str:
    return v if v == _ABSENT else repr(v)


def _names(items: list[Any]) -> str:
    return "[" + ", ".join(str(x) for x in items) + "]"


def definition_mismatch(path: Path, old: RunHeader, new: RunHeader) -> str | None:
    """One line naming the first thing that differs between two runs, or None if none does."""
    a, b = run_definition(old), run_definition(new)
    if a == b:
        return None
    lead = f"run log {path} was written with"
    end = ": write the run to a new run log"
    if a["dataset_id"] != b["dataset_id"]:
        return f"{lead} dataset {a['dataset_id']!r}; this run has {b['dataset_id']!r}{end}"
    old_agents = [s["name"] for s in a["agents"]]
    new_agents = [s["name"] for s in b["agents"]]
    if old_agents != new_agents:
        return f"{lead} agents {_names(old_agents)}; this run has {_names(new_agents)}{end}"
    for spec_a, spec_b in zip(a["agents"], b["agents"], strict=True):
        diff = _first_difference(spec_a, spec_b)
        if diff is not None:
            key, va, vb = diff
            return (
                f"{lead} agent {spec_a['name']} {key}={_value(va)}; this run has {_value(vb)}{end}"
            )
    if sorted(a["prompts"]) != sorted(b["prompts"]):
        return (
            f"{lead} prompts {_names(sorted(a['prompts']))}; this run has "
            f"{_names(sorted(b['prompts']))}{end}"
        )
    for name in sorted(a["prompts"]):
        if a["prompts"][name] != b["prompts"][name]:
            return f"{lead} another text of prompt {name}{end}"
    rest_a = {k: v for k, v in a.items() if k not in ("dataset_id", "agents", "prompts")}
    rest_b = {k: v for k, v in b.items() if k not in ("dataset_id", "agents", "prompts")}
    key, va, vb = _first_difference(rest_a, rest_b) or ("definition", rest_a, rest_b)
    part, _, sub = key.partition(".")
    where = f"{part} {sub}" if sub else part
    return f"{lead} {where}={_value(va)}; this run has {_value(vb)}{end}"
