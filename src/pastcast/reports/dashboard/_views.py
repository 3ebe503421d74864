"""What the dashboard's pages show, built from the index: the trajectory of a step (its calls in
order, the documents each tool call exposed with their dates against the cutoff, the notebook
diff), an event's market curve and forecasts as an SVG chart, and pagination.

Everything here is plain data; the templates escape it when they render it.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from pastcast.dataset import Dataset
from pastcast.records import Message, ModelCall, Notebook, ToolCall
from pastcast.reports._runs import StepRow, event_curves
from pastcast.runlog import StepRecord

PAGE_SIZE = 50
RESULT_CHARS = 20_000
"""Characters of one tool result or message shown before "show all" is needed."""

_DOC = re.compile(r'"id":\s*"((?:[^"\\]|\\.)*)"[^{}]*?"date":\s*"([0-9: -]+)"')
_QUESTION = re.compile(r"^Question: (.+)$", re.MULTILINE)


@dataclass(frozen=True)
class Page:
    number: int
    count: int
    start: int
    stop: int
    total: int


def page(total: int, number: int, size: int = PAGE_SIZE) -> Page:
    count = max(1, -(-total // size))
    number = min(max(number, 1), count)
    start = (number - 1) * size
    return Page(number, count, start, min(total, start + size), total)


@dataclass(frozen=True)
class DocView:
    id: str
    title: str
    date: str
    after_cutoff: bool | None
    """True when the document is dated at or after the step's cutoff (None: no date shown)."""


def _parse_date(text: str) -> datetime | None:
    for fmt in ("%Y-%m-%d %H:%M", "%Y-%m-%d"):
        try:
            return datetime.strptime(text.strip(), fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _entries(value: object) -> list[dict[str, object]]:
    if isinstance(value, dict):
        return [value] if "id" in value else []
    if isinstance(value, list):
        return [v for v in value if isinstance(v, dict) and "id" in v]
    return []


def documents(call: ToolCall, cutoff: datetime) -> list[DocView]:
    """The documents a tool call exposed, with the dates its result showed the agent.

    The result is the text the agent was given; when it was cut to a length limit it is no
    longer JSON, and the dated entries are found in the text."""
    found: dict[str, tuple[str, str]] = {}
    try:
        parsed: object = json.loads(call.result) if call.result else None
    except ValueError:
        parsed = None
    if parsed is not None:
        for e in _entries(parsed):
            found.setdefault(str(e["id"]), (str(e.get("title", "")), str(e.get("date", ""))))
    else:
        for m in _DOC.finditer(call.result):
            found.setdefault(m.group(1), ("", m.group(2)))
    out = []
    for doc_id in dict.fromkeys([*call.doc_ids, *found]):
        title, date = found.get(doc_id, ("", ""))
        when = _parse_date(date) if date else None
        out.append(DocView(doc_id, title, date, None if when is None else when >= cutoff))
    return out


def pretty_json(text: str) -> str:
    """JSON text indented for reading (other text as it is)."""
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        return text


def notebook_diff(before: Notebook | None, after: Notebook | None) -> list[tuple[str, str]]:
    """Line diff of the notebook carried in and the one written, as (kind, line) pairs with
    kind one of "add", "del", "hunk", "same"."""
    if before is None and after is None:
        return []
    a = before.text().splitlines() if before else []
    b = after.text().splitlines() if after else []
    out = []
    for line in difflib.unified_diff(a, b, "carried in", "written", lineterm="", n=2):
        if line.startswith(("+++", "---")):
            continue
        kind = {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "same")
        out.append((kind, line))
    return out


@dataclass(frozen=True)
class Timeline:
    """One model or tool call of an episode, as shown."""

    kind: str
    seq: int
    model: ModelCall | None = None
    earlier: int = 0
    """Messages the call resent that an earlier call already showed (folded away)."""
    sent: tuple[tuple[int, Message], ...] = ()
    reply: Message | None = None
    tool: ToolCall | None = None
    docs: tuple[DocView, ...] = ()


def timeline(step: StepRecord) -> list[Timeline]:
    """Model and tool calls in call order; each model call shows only the messages no earlier
    call showed (a request resends the conversation), then its reply."""
    ep = step.episode
    shown: set[int] = set()
    out = []
    for event in ep.events():
        if isinstance(event, ModelCall):
            new = tuple((i, ep.messages[i]) for i in event.messages if i not in shown)
            shown.update(event.messages)
            if event.reply is not None:
                shown.add(event.reply)
            out.append(
                Timeline(
                    "model",
                    event.seq,
                    model=event,
                    earlier=len(event.messages) - len(new),
                    sent=new,
                    reply=ep.reply_of(event),
                )
            )
        else:
            out.append(
                Timeline("tool", event.seq, tool=event, docs=tuple(documents(event, step.cutoff)))
            )
    return out


def question_of(steps: Iterable[StepRecord]) -> str:
    """The question as a model was shown it (for runs reported without their dataset); reads
    ``steps`` only up to the first that shows it."""
    for s in steps:
        for m in s.episode.messages:
            if m.role == "user":
                found = _QUESTION.search(m.content)
                if found:
                    return found.group(1)
    return ""


@dataclass(frozen=True)
class Chart:
    """An SVG line chart: ``lines`` as (name, colour, points) in pixel coordinates."""

    width: int
    height: int
    label: str
    lines: tuple[tuple[str, str, str, bool], ...]
    """(name, colour, "x,y x,y ...", markers) per series."""
    yticks: tuple[tuple[float, str], ...]
    xticks: tuple[tuple[float, str], ...]
    outcome_y: float
    left: int
    right: int


_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")


def chart(
    steps: Sequence[StepRecord | StepRow],
    dataset: Dataset | None,
    width: int = 760,
    height: int = 260,
) -> Chart | None:
    """The market's belief in "Yes" (binary) or in the realised outcome (multi-option) over
    time, the mean forecast of each agent and setting at each forecast date, and the outcome."""
    if not steps:
        return None
    label, market, agents = event_curves(steps, dataset)
    times = [*market, *(t for pts in agents.values() for t in pts)]
    if not times:
        return None
    t0, t1 = min(times).timestamp(), max(times).timestamp()
    span = (t1 - t0) or 1.0
    left, right, top, bottom = 44, 190, 24, 28
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(t: datetime) -> float:
        return left + plot_w * (t.timestamp() - t0) / span

    def y(p: float) -> float:
        return top + plot_h * (1.0 - p)

    def points(pts: list[tuple[datetime, float]]) -> str:
        return " ".join(f"{x(t):.1f},{y(p):.1f}" for t, p in sorted(pts))

    lines = []
    if market:
        lines.append(("market", "#555", points(list(market.items())), False))
    for k, (name, pts) in enumerate(sorted(agents.items())[: len(_COLOURS)]):
        lines.append((name, _COLOURS[k], points(list(pts.items())), True))
    n_ticks = 4
    xticks = tuple(
        (
            left + plot_w * i / n_ticks,
            datetime.fromtimestamp(t0 + span * i / n_ticks, UTC).strftime("%Y-%m-%d"),
        )
        for i in range(n_ticks + 1)
    )
    yticks = tuple((y(p), f"{p:.2f}") for p in (0.0, 0.25, 0.5, 0.75, 1.0))
    outcome = 1.0 if label == steps[0].grading.truth else 0.0
    return Chart(
        width, height, f"P({label})", tuple(lines), yticks, xticks, y(outcome), left, width - right
    )
