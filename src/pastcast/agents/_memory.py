"""Memory-on mode for model-driven agents: the belief notebook in, the updated notebook out.

The notebook is the only thing carried across forecast dates (the runner hands
``episode.notebook_out`` of one step to the next step's ``episode.notebook_in``). A notebook that
does not parse or validate (unknown labels, ledger dates after the cutoff, ...) is not used: the
previous one is carried forward unchanged, and the step says so at the end of its
``Forecast.rationale`` with ``NOTEBOOK_CARRIED_MARK`` so run logs can count the failures
(``notebook_failures``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from pastcast.agents._notebook import carry_forward, memory_answer_template, notebook_field
from pastcast.env import Episode
from pastcast.records import Forecast

__all__ = [
    "NOTEBOOK_CARRIED_MARK",
    "NOTEBOOK_SCHEMA",
    "memory_fields",
    "notebook_failures",
    "store_notebook",
]

NOTEBOOK_CARRIED_MARK = "[notebook carried forward: "

NOTEBOOK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "assessment": {
            "type": "object",
            "properties": {
                "probabilities": {"type": "object", "additionalProperties": {"type": "number"}},
                "summary": {"type": "string"},
                "open_questions": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["probabilities", "summary", "open_questions"],
        },
        "evidence_ledger": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "claim": {"type": "string"},
                    "date_observed": {"type": "string"},
                    "source": {"type": "string"},
                    "supports": {"type": "array", "items": {"type": "string"}},
                    "rules_out": {"type": "array", "items": {"type": "string"}},
                    "status": {"type": "string", "enum": ["active", "superseded"]},
                },
                "required": ["id", "claim", "date_observed", "supports", "rules_out", "status"],
            },
        },
    },
    "required": ["assessment", "evidence_ledger"],
}


def memory_fields(episode: Episode) -> dict[str, str]:
    """The ``{notebook}`` and ``{memory_answer_template}`` prompt fields."""
    return {
        "notebook": notebook_field(episode.notebook_in),
        "memory_answer_template": memory_answer_template(episode.question.labels),
    }


def store_notebook(episode: Episode, reply: str, forecast: Forecast) -> Forecast:
    """Set ``episode.notebook_out`` from the final reply (or carry the old one forward).

    Returns the forecast, with the carry-forward mark appended to its rationale when the new
    notebook was malformed.
    """
    q = episode.question
    notebook, check = carry_forward(episode.notebook_in, reply, q.labels, q.cutoff)
    episode.notebook_out = notebook
    episode.notebook_problems = tuple(check.problems)
    if check.ok:
        return forecast
    mark = f"{NOTEBOOK_CARRIED_MARK}{'; '.join(check.problems)}]"
    rationale = f"{forecast.rationale}\n{mark}" if forecast.rationale else mark
    return forecast.model_copy(update={"rationale": rationale})


def notebook_failures(forecasts: Iterable[Forecast]) -> Counter[str]:
    """Malformed-notebook steps by problem (``unparseable``, ``ledger entries dated ...``)."""
    out: Counter[str] = Counter()
    for f in forecasts:
        start = f.rationale.rfind(NOTEBOOK_CARRIED_MARK)
        if start >= 0:
            body = f.rationale[start + len(NOTEBOOK_CARRIED_MARK) :].rstrip("]")
            for problem in body.split("; "):
                out[problem.split(":")[0]] += 1
    return out
