"""``lexical:NAME``: a deterministic offline model that answers the two-stage agent's stages from
what it is sent (so it sees exactly what a model would, and nothing else), for Hindcast's
pipeline to run on a real corpus without a language model. How it answers: docs/agents.md, "An
offline model for the pipeline"."""

from __future__ import annotations

import json
import re
from typing import Any

from pastcast.agents._heuristic import _cue, _terms
from pastcast.models import ChatRequest, Model, ScriptedModel

LEXICAL_PRIOR = 0.35
"""P(Yes) before the evidence: most binary markets resolve No (Hindcast 4.1: 83%)."""

_QUESTION = re.compile(r"^Question: (.*)$", re.MULTILINE)
_DOC = re.compile(r"^\[([^\]]+)\] [\d-]+(?: [\d:]+)?(?: \([^)]*\))? - (.*)$", re.MULTILINE)
"""A document line of the agent's digest: ``[id] date[ time][ (context)] - title: text``."""
_SCORE = re.compile(r"^- (.+?): .*; score (-?\d+)$", re.MULTILINE)


def _user(request: ChatRequest) -> str:
    return next((m.content for m in reversed(request.messages) if m.role == "user"), "")


def _question(text: str) -> str:
    found = _QUESTION.search(text)
    return found.group(1) if found else ""


def _label(shared: int, cue: int, for_side: bool) -> str:
    """A document's level for one side: specific overlap with the question is evidence, and its
    cues (positive for Yes, negative for No) say for which side."""
    lean = cue if for_side else -cue
    if shared >= 3 and lean > 0:
        return "strong"
    if shared >= 2 and lean < 0:
        return "contra"
    return "weak" if shared >= 2 else "irrel"


def _tally(request: ChatRequest, text: str) -> dict[str, Any]:
    schema = request.response_schema or {}
    item = schema["properties"]["labels"]["items"]["properties"]["sides"]
    sides = list(item["required"])
    subject = _terms(_question(text))
    labels = []
    levels: set[str] = set()
    for doc_id, body in _DOC.findall(text):
        shared, cue = len(subject & _terms(body)), _cue(body)
        first = sides[0] if sides else ""
        row = {s: _label(shared, cue, s == first) for s in sides}
        levels.update(row.values())
        labels.append({"id": doc_id, "sides": row})
    quality = "strong" if "strong" in levels else "weak" if levels & {"weak", "contra"} else "none"
    return {"labels": labels, "evidence_quality": quality}


def _forecast(text: str) -> dict[str, Any]:
    scores = {side: int(score) for side, score in _SCORE.findall(text)}
    lean = scores.get("Yes", 0) - scores.get("No", 0)
    p = min(0.95, max(0.05, LEXICAL_PRIOR + 0.05 * lean))
    return {
        "choice": "Yes" if p > 0.5 else "No",
        "prob_yes": round(p, 4),
        "prob_no": round(1 - p, 4),
        "confidence": round(abs(p - 0.5) * 2, 4),
        "reasoning": f"Prior {LEXICAL_PRIOR} (base rate); tally lean {lean:+d}.",
    }


def lexical_reply(request: ChatRequest) -> str:
    """The reply to one of the two-stage agent's requests (by the schema it asks for)."""
    text = _user(request)
    props = (request.response_schema or {}).get("properties", {})
    if "evidence_quality" in props:
        return json.dumps(_tally(request, text))
    if "confidence" in props and "missing" in props:
        found = bool(_DOC.search(text))
        return json.dumps({"confidence": 0.8 if found else 0.2, "missing": "", "queries": []})
    if "queries" in props:
        words = sorted(_terms(_question(text)), key=len, reverse=True)
        queries = [" ".join(words[:4]), " ".join(words[:2]), " ".join(words[2:6])]
        return json.dumps({"queries": [q for q in queries if q] or ["news"]})
    if "prob_yes" in text:  # the forecast stage asks for Hindcast's answer object
        return json.dumps(_forecast(text))
    docs = _DOC.findall(text)
    facts = "\n".join(f"- [{d}] {body[:160]}" for d, body in docs[:8])
    return f"Key facts:\n{facts or '- none found'}\nUncertainty: lexical reading only."


def _lexical(rest: str, **options: Any) -> Model:
    """``lexical:NAME``: the offline lexical responder (no options)."""
    if options:
        raise ValueError(f"lexical models take no options, got {', '.join(sorted(options))}")
    return ScriptedModel(responder=lexical_reply, name=f"lexical:{rest or 'two-stage'}")
