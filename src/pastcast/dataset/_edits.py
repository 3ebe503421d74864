"""Dated updates and clarifications inside question texts, and the text as of a cutoff.

Question texts are edited after they are written: Manifold appends ``Update 2025-03-21 (PST)
(AI summary of creator comment): ...``, moderators add ``MOD EDIT (Nov 2, 2025 - @mod)``,
creators write ``[Edit May 6, 2025]:``, ``EDIT 6/22/25``, ``Clarification (2025-06-22):`` or
plain ``Edit:``. A source that gives the text as it is now (Polymarket's API) or a snapshot taken
after a step's cutoff shows the step edits written after it: the future, in the question.

One parser for every source: a header is an edit keyword (update, clarification, edit,
correction, addendum; ``MOD`` before it allowed) at the start of a line, after a sentence or
inside an opening bracket, followed by a date or by a colon. A header without a date it can read
is an *undated* edit. An edit runs from its header to the next header or the end of the text; one
opened by a bracket (``(edit: ...)``) ends at the closing bracket.

When an edit became public: a day ``D`` in a stated zone (``PST``, ``ET``, ``UTC``, ...) counts
from the end of ``D`` there, a day without a zone from the end of ``D`` in the last zone on Earth
(UTC-12), so an edit is never shown before its day has ended everywhere it could have been
written (``cutoff.is_visible`` of that instant). ``YYYY-DD-MM`` (Manifold writes
``2024-27-12``) and ``D/M/Y`` are read as such only where the month would exceed 12.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from pastcast.cutoff import is_visible
from pastcast.records import Event

__all__ = ["EditsAsOf", "TextEdit", "edits_as_of", "event_as_of", "find_edits", "text_as_of"]

_KEYWORD = re.compile(
    r"(?:^|(?<=[.!?]\s)|(?<=[.!?]\s\s)|(?<=[\[()\]]))"
    r"(?P<deco>[ \t*_#>\-]*)"
    r"(?P<key>(?:mod\s+)?(?:update[ds]?|clarifications?|edit(?:ed)?|corrections?|addendum)\b)",
    re.IGNORECASE | re.MULTILINE,
)
_MONTHS = {
    m: i + 1
    for i, names in enumerate(
        (
            "jan january",
            "feb february",
            "mar march",
            "apr april",
            "may",
            "jun june",
            "jul july",
            "aug august",
            "sep sept september",
            "oct october",
            "nov november",
            "dec december",
        )
    )
    for m in names.split()
}
_MONTH = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATES = (
    re.compile(r"(?P<y>\d{4})-(?P<a>\d{1,2})-(?P<b>\d{1,2})"),  # ISO (or YYYY-DD-MM)
    re.compile(r"(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<y>\d{2}(?:\d{2})?)\b"),  # M/D/Y (or D/M/Y)
    re.compile(_MONTH + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{4})", re.IGNORECASE),
    re.compile(r"(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH + r",?\s+(?P<y>\d{4})", re.I),
)
# Hours to add to a zone's local time to get UTC; the latest-ending reading of each name.
_ZONES = {"pst": 8, "pdt": 7, "pt": 8, "est": 5, "edt": 4, "et": 5, "utc": 0, "gmt": 0, "z": 0}
_ZONE = re.compile(r"\W{0,3}(?P<zone>pst|pdt|pt|est|edt|et|utc|gmt)\b", re.IGNORECASE)
_BEFORE_DATE = re.compile(r"[ \t]*(?:[(\[][ \t]*)?(?:on[ \t]+)?")
_BARE = re.compile(r"[ \t*_]*:")  # an undated header: the keyword, then a colon
_LAST_ZONE_HOURS = 12
"""A day without a zone ends last at UTC-12."""


@dataclass(frozen=True)
class TextEdit:
    """One edit found in a text: ``text[start:end]``, its header, and when it became public
    (``public_from``: the end of its day; None for an undated edit)."""

    start: int
    end: int
    header: str
    day: date | None
    public_from: datetime | None

    @property
    def dated(self) -> bool:
        return self.public_from is not None


def _read_date(text: str) -> tuple[date, int] | None:
    """A date at the start of ``text`` and the characters it takes; None when there is none."""
    for pattern in _DATES:
        m = pattern.match(text)
        if not m:
            continue
        parts = m.groupdict()
        year = int(parts["y"])
        year = year + 2000 if year < 100 else year
        try:
            if "mon" in parts and parts.get("mon"):
                day = date(year, _MONTHS[parts["mon"].lower()], int(parts["d"]))
            else:
                a, b = int(parts["a"]), int(parts["b"])
                month, dom = (a, b) if a <= 12 else (b, a)  # swapped only where it must be
                day = date(year, month, dom)
        except (ValueError, KeyError):
            return None
        return day, m.end()
    return None


def _header(text: str, pos: int) -> tuple[date | None, int, int | None] | None:
    """After a keyword ending at ``pos``: (its date, where the header ends, zone hours), or None
    when what follows is no header (``update frequency``, ``edited the file``)."""
    m = _BEFORE_DATE.match(text, pos)
    at = m.end() if m else pos
    found = _read_date(text[at : at + 40])
    if found is not None:
        day, used = found
        end = at + used
        zone = _ZONE.match(text, end)
        hours = _ZONES[zone["zone"].lower()] if zone else None
        line_end = text.find("\n", end)
        line_end = len(text) if line_end < 0 else line_end
        colon = text.find(":", end, min(line_end, end + 80))
        return day, (colon + 1 if colon >= 0 else end), hours
    bare = _BARE.match(text, pos)
    if bare:
        return None, bare.end(), None
    return None


def find_edits(text: str) -> tuple[TextEdit, ...]:
    """The edits of ``text`` in order, each running to the next one or the end."""
    heads: list[tuple[int, int, date | None, int | None, bool]] = []
    for m in _KEYWORD.finditer(text):
        parsed = _header(text, m.end("key"))
        if parsed is None:
            continue
        day, header_end, hours = parsed
        start, before = m.start("key"), text[m.start() - 1 : m.start()]
        inline = before == "(" and ")" not in text[start:header_end]
        if before in ("(", "["):  # the bracket opens the edit
            start = m.start() - 1
        heads.append((start, header_end, day, hours, inline))
    out: list[TextEdit] = []
    for i, (start, header_end, day, hours, inline) in enumerate(heads):
        end = heads[i + 1][0] if i + 1 < len(heads) else len(text)
        if inline:
            close = text.find(")", header_end)
            end = min(end, close + 1) if close >= 0 else end
        if out and start < out[-1].end:  # an edit inside an inline one's brackets: skip it
            continue
        public = None
        if day is not None:
            offset = _LAST_ZONE_HOURS if hours is None else hours
            midnight = datetime(day.year, day.month, day.day, tzinfo=UTC)
            public = midnight + timedelta(days=1, hours=offset)
        out.append(TextEdit(start, end, text[start:header_end].strip(), day, public))
    return tuple(out)


def _tidy(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+\n", "\n", text)).strip()


@dataclass(frozen=True)
class EditsAsOf:
    """What ``text_as_of`` did to a text (or ``edits_as_of`` to an event's texts)."""

    removed: tuple[TextEdit, ...] = ()
    """Dated edits not yet public at the cutoff, left out."""
    undated: tuple[TextEdit, ...] = ()
    """Edits without a date, kept: whether they were written before the cutoff is unknown."""

    def __add__(self, other: EditsAsOf) -> EditsAsOf:
        return EditsAsOf(self.removed + other.removed, self.undated + other.undated)


def text_as_of(text: str, cutoff: datetime) -> tuple[str, EditsAsOf]:
    """``text`` without the dated edits not yet public at ``cutoff``, and what was found."""
    edits = find_edits(text)
    if not edits:
        return text, EditsAsOf()
    removed = tuple(
        e for e in edits if e.public_from is not None and not is_visible(e.public_from, cutoff)
    )
    undated = tuple(e for e in edits if e.public_from is None)
    if not removed:
        return text, EditsAsOf((), undated)
    kept, at = [], 0
    for e in removed:
        kept.append(text[at : e.start])
        at = e.end
    kept.append(text[at:])
    return _tidy("".join(kept)), EditsAsOf(removed, undated)


def edits_as_of(event: Event, cutoff: datetime) -> EditsAsOf:
    """The edits of the event's title, description and criteria as of ``cutoff``."""
    found = EditsAsOf()
    for text in (event.title, event.description, event.resolution_criteria):
        found = found + text_as_of(text, cutoff)[1]
    return found


def event_as_of(event: Event, cutoff: datetime) -> Event:
    """The event without the dated edits of its texts not yet public at ``cutoff`` (a title that
    would be left empty is kept whole: an event needs one)."""
    title = text_as_of(event.title, cutoff)[0] or event.title
    description = text_as_of(event.description, cutoff)[0]
    criteria = text_as_of(event.resolution_criteria, cutoff)[0]
    if (title, description, criteria) == (
        event.title,
        event.description,
        event.resolution_criteria,
    ):
        return event
    return event.model_copy(
        update={"title": title, "description": description, "resolution_criteria": criteria}
    )
