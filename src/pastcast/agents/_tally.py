"""The evidence tally of the two-stage agent (Hindcast section 5.2): before the forecast, the
model labels every gathered document for every outcome on the four-level scheme of
``pastcast.records.EvidenceLabel`` and rates the overall evidence quality; each side's score is
``2 strong + weak - contra``. The counts are computed here from the labels, not taken from the
model, and go to the forecast stage with the report."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, get_args

from pastcast.records import EvidenceLabel, EvidenceQuality, EvidenceTally, SideTally

_LEVELS: tuple[EvidenceLabel, ...] = get_args(EvidenceLabel)
_QUALITY: tuple[EvidenceQuality, ...] = get_args(EvidenceQuality)


def tally_schema(labels: Sequence[str]) -> dict[str, Any]:
    """The tally reply's JSON schema: a level per outcome for each document, and the quality."""
    level = {"type": "string", "enum": list(_LEVELS)}
    sides = {
        "type": "object",
        "properties": dict.fromkeys(labels, level),
        "required": list(labels),
    }
    item = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "sides": sides},
        "required": ["id", "sides"],
    }
    return {
        "type": "object",
        "properties": {
            "labels": {"type": "array", "items": item},
            "evidence_quality": {"type": "string", "enum": list(_QUALITY)},
        },
        "required": ["labels", "evidence_quality"],
    }


def tally_sides(labels: Sequence[str]) -> str:
    """The ``{tally_sides}`` prompt field: each outcome with the four levels."""
    options = " | ".join(json.dumps(level) for level in _LEVELS)
    return (
        "{" + ", ".join(f"{json.dumps(lb, ensure_ascii=False)}: {options}" for lb in labels) + "}"
    )


def tally_text(tally: EvidenceTally) -> str:
    """The tally as the forecast stage reads it."""
    if not tally.documents:
        return "Evidence tally: no document could be labelled.\nevidence_quality: none"
    lines = [
        f"Evidence tally over {tally.documents} documents, each labelled for each outcome "
        "(strong +2, weak +1, irrel 0, contra -1; score = 2 x strong + weak - contra):"
    ]
    for side in tally.sides:
        parts = ", ".join(f"{getattr(side, level)} {level}" for level in _LEVELS)
        lines.append(f"- {side.label}: {parts}; score {side.score}")
    lines.append(f"evidence_quality: {tally.quality or 'none'}")
    return "\n".join(lines)


def read_tally(
    reply: Mapping[str, Any], labels: Sequence[str], doc_ids: Sequence[str]
) -> EvidenceTally:
    """Count the labels of ``reply`` (the tally object): only documents that were shown, each
    once; a level that is not one of the four, or an unknown outcome, is left out."""
    counts: dict[str, Counter[EvidenceLabel]] = {
        lb: Counter(dict.fromkeys(_LEVELS, 0)) for lb in labels
    }
    known = set(doc_ids)
    seen: set[str] = set()
    items = reply.get("labels")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping):
            continue
        doc, sides = item.get("id"), item.get("sides")
        if not isinstance(doc, str) or doc not in known or doc in seen:
            continue
        if not isinstance(sides, Mapping):
            continue
        seen.add(doc)
        for side, level in sides.items():
            if side in counts and level in _LEVELS:
                counts[side][level] += 1
    quality = reply.get("evidence_quality")
    return EvidenceTally(
        sides=tuple(SideTally.model_validate({"label": lb, **c}) for lb, c in counts.items()),
        documents=len(seen),
        quality=quality if quality in _QUALITY else None,
    )
