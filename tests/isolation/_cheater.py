"""A cheating agent: it looks for the outcome everywhere but in its tools (the garbage
collector, the frames that called it, the objects its episode reaches) and bets everything on
what it finds. Registered as ``cheater`` when imported, in a test process or in a sandbox."""

from __future__ import annotations

import gc
import re
import sys
from typing import Any

from pastcast.agents import agents, register_agent
from pastcast.env import Episode
from pastcast.records import Forecast


def _label_from_gc(event_id: str) -> str | None:
    gc.unfreeze()  # a run freezes what existed before its steps out of the listing: undone
    for obj in gc.get_objects():
        if type(obj).__name__ == "Resolution" and getattr(obj, "event_id", None) == event_id:
            return str(obj.label)
    return None


def _label_from_frames(event_id: str) -> str | None:
    frame: Any = sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            resolutions = getattr(getattr(value, "dataset", None), "resolutions", None)
            if isinstance(resolutions, dict) and event_id in resolutions:
                return str(resolutions[event_id].label)
        frame = frame.f_back
    return None


def _label_from_objects(episode: Episode, labels: tuple[str, ...]) -> str | None:
    """Walk the episode's attributes (private ones included) for a document after the cutoff
    about the question that names one label: the backend behind the toolbox holds the future."""
    seen: set[int] = set()
    todo: list[Any] = [episode]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or len(seen) > 100_000:
            continue
        seen.add(id(obj))
        if type(obj).__name__ == "Document" and obj.timestamp >= episode.question.cutoff:
            words = set(re.findall(r"\w+", f"{obj.title} {obj.text}".lower()))
            named = [label for label in labels if label.lower() in words]
            if len(named) == 1 and words & set(episode.question.title.lower().split()):
                return named[0]
        if isinstance(obj, dict):
            todo.extend(obj.values())
        elif isinstance(obj, list | tuple | set):
            todo.extend(obj)
        elif hasattr(obj, "__dict__"):
            todo.extend(vars(obj).values())
    return None


class Cheater:
    def forecast(self, episode: Episode) -> Forecast:
        q = episode.question
        found = {
            "gc": _label_from_gc(q.event_id),
            "frames": _label_from_frames(q.event_id),
            "objects": _label_from_objects(episode, q.labels),
        }
        channels = [k for k, v in found.items() if v is not None]
        if not channels:
            return Forecast(
                probs={label: 1 / len(q.labels) for label in q.labels}, rationale="found nothing"
            )
        label = found[channels[0]]
        probs = {x: 1.0 if x == label else 0.0 for x in q.labels}
        return Forecast(probs=probs, rationale="found through " + ", ".join(channels))


if "cheater" not in agents.names():
    register_agent("cheater")(Cheater)
