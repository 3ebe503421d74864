"""A scripted judge for the curation tests: answers each prompt by its schema, deterministically
from the question, so the embedded world gives a funnel with every kind of removal."""

from __future__ import annotations

import hashlib
import json
import re

from pastcast.models import ChatRequest

VERDICTS = ("Insufficient", "Partial", "leak", "Sufficient", "Sufficient", "Sufficient")


def _question(request: ChatRequest) -> str:
    found = re.search(r"^Question: (.*)$", request.messages[-1].content, re.MULTILINE)
    assert found, "every curation prompt carries the question view"
    return found.group(1)


def _draw(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


def world_judge(request: ChatRequest) -> str:
    """The reply to one curation request."""
    assert request.response_schema is not None
    kind = request.response_schema["title"]
    question = _question(request)
    words = [w for w in re.findall(r"[A-Za-z]+", question) if len(w) > 3][:4] or ["news"]
    if kind == "curate_queries":
        predictive = [f"{' '.join(words)} {x}" for x in ("plans", "latest", "talks", "vote")]
        background = [f"{words[0]} history", f"{words[0]} background", f"{words[-1]} context"]
        return json.dumps({"predictive": predictive, "background": [*background, "overview"]})
    if kind == "curate_evidence":
        verdict = VERDICTS[_draw(question) % len(VERDICTS)]
        leak = verdict == "leak"
        return json.dumps(
            {
                "verdict": "Sufficient" if leak else verdict,
                "leakage": leak,
                "leak_documents": [1] if leak else [],
                "rationale": "scripted",
            }
        )
    if kind == "curate_coverage_queries":
        sides = request.response_schema["required"]
        return json.dumps({s: [f"{' '.join(words)} {s} {i}" for i in range(5)] for s in sides})
    if kind == "curate_coverage_labels":
        side = re.search(r"^The outcome being probed: (.*)$", request.messages[-1].content, re.M)
        assert side
        n = request.response_schema["properties"]["labels"]["minItems"]
        # The judge favours one side per question (it cannot know which came true).
        favoured = _draw(question + "side") % 2 == 0
        label = "strong" if (side.group(1) == "Yes") == favoured else "irrelevant"
        return json.dumps({"labels": [label] * n})
    if kind == "curate_coverage_final":
        # Support from the tallies shown (the judge reads both sides; it never sees the outcome).
        text = request.messages[-1].content
        tallies = {
            m.group(1): int(m.group(2))
            for m in re.finditer(r"^Outcome (.*?): .*; tally (-?\d+)$", text, re.M)
        }
        best = max(tallies.values())
        support = {s: round(max(t, 0) / 10, 3) for s, t in tallies.items()}
        quality = "strong" if best >= 6 else "weak" if best > 0 else "none"
        return json.dumps({"support": support, "evidence_quality": quality})
    if kind == "curate_topic":
        return json.dumps({"topic": "politics"})
    raise AssertionError(f"unexpected request {kind!r}")
