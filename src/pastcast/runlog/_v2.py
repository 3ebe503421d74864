"""Schema-2 (and schema-1) step records, read as schema 3: notebooks were JSON text
(``notebook_in``, ``notebook_out``), problems were sentences, and a rejected notebook was marked
by ``[notebook carried forward: ...]`` at the end of the forecast's rationale. On read the texts
become ``Notebook`` records, the sentences ``NotebookProblem`` records, the mark
``notebook_carried`` (and leaves the rationale)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from pastcast.records import Notebook, NotebookProblem, NotebookProblemKind

V2 = 2

_CARRIED_MARK = "[notebook carried forward: "

# Schema 2 wrote problems as sentences; each began with one of these.
_KINDS: tuple[tuple[str, NotebookProblemKind], ...] = (
    ("unparseable", "unparseable"),
    ("unknown labels in assessment", "unknown_labels"),
    ("ledger entry ", "unknown_labels"),
    ("assessment probability outside", "bad_probabilities"),
    ("assessment has no positive probability", "bad_probabilities"),
    ("duplicate ledger entry ids", "duplicate_ids"),
    ("ledger entries dated after the cutoff", "future_dates"),
)


def _problem(sentence: object) -> dict[str, Any]:
    text = str(sentence)
    kind = next((k for prefix, k in _KINDS if text.startswith(prefix)), "unparseable")
    detail = "" if text == kind else text
    return NotebookProblem(kind=kind, detail=detail).model_dump(mode="json")


def _notebook(text: object, problems: list[dict[str, Any]]) -> dict[str, Any] | None:
    if text is None or isinstance(text, dict):
        return text
    try:
        return Notebook.model_validate_json(str(text)).model_dump(mode="json")
    except ValidationError:
        detail = f"a schema-2 notebook text that is not a notebook: {str(text)[:80]!r}"
        problems.append(NotebookProblem(kind="unreadable_text", detail=detail).model_dump())
        return None


def _without_mark(rationale: str) -> str:
    start = rationale.rfind(_CARRIED_MARK)
    return rationale if start < 0 else rationale[:start].rstrip("\n")


def v2_step(obj: dict[str, Any]) -> dict[str, Any]:
    episode = obj.get("episode")
    if not isinstance(episode, dict):
        return obj
    sentences = episode.get("notebook_problems") or []
    problems = [_problem(p) for p in sentences] if isinstance(sentences, list) else sentences
    unreadable: list[dict[str, Any]] = []
    converted = {
        **episode,
        "notebook_in": _notebook(episode.get("notebook_in"), unreadable),
        "notebook_out": _notebook(episode.get("notebook_out"), unreadable),
        # Schema 2 carried the previous notebook forward exactly when it named problems.
        "notebook_carried": bool(sentences),
        "notebook_problems": [*problems, *unreadable] if isinstance(problems, list) else problems,
    }
    out = {**obj, "episode": converted}
    forecast = obj.get("forecast")
    if isinstance(forecast, dict) and isinstance(forecast.get("rationale"), str):
        out["forecast"] = {**forecast, "rationale": _without_mark(forecast["rationale"])}
    return out
