"""Question texts as of a cutoff: notes appended after the fact are never shown early.

Question texts are edited after they are written (``Update 2025-03-21 (PST): ...``, ``MOD EDIT``,
a bare ``UPDATE`` line): a text published before a step's cutoff is shown as it is, one taken
after it only up to its first *note head* not dated before the cutoff (``body_as_of``). A head is
defined by shape, not by a list of words: body lines of that shape are cut too, so the text
shown is shorter, never later. The rules in full: docs/audits.md, "Edits inside question texts".
``YYYY-DD-MM`` (Manifold writes ``2024-27-12``) and ``D/M/Y`` are read as such only where the
month would exceed 12.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from pastcast.cutoff import is_visible
from pastcast.records import Event

TITLE_NOTE = "title carries a note"
"""Why a step shown a later text is dropped: a title cannot be shortened."""

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
    re.compile(r"(?<!\d)(?P<y>\d{4})-(?P<a>\d{1,2})-(?P<b>\d{1,2})(?!\d)"),  # ISO (or YYYY-DD-MM)
    re.compile(r"(?<![\d/])(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<y>\d{2}(?:\d{2})?)(?![\d/])"),
    re.compile(_MONTH + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{4})\b", re.I),
    re.compile(r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH + r",?\s+(?P<y>\d{4})\b", re.I),
)
_MONTH_NAME = "(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b\.?"
_DATE_LIKE = re.compile(
    r"\d{1,4}[-/.]\d{1,2}|\b(?:19|20)\d\d\b|\b\d{1,2}(?:st|nd|rd|th)\b"
    rf"|\b{_MONTH_NAME}\s*\d{{1,2}}\b|\b\d{{1,2}}\s+{_MONTH_NAME}",
    re.IGNORECASE,
)
"""Anything that may be a date: a head with one it cannot read whole is not dated."""
_DAY_LIKE = re.compile(
    rf"{_MONTH_NAME}\s*\d{{1,2}}\b|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH_NAME}|\d{{4}}-\d\d?-\d"
    r"|\d{1,2}/\d{1,2}\b",
    re.IGNORECASE,
)
"""A day (not a bare year or a number): what a note in a title is dated by."""
# Hours to add to a zone's local time to get UTC; the latest-ending reading of each name.
_ZONES = {"pst": 8, "pdt": 7, "pt": 8, "est": 5, "edt": 4, "et": 5, "utc": 0, "gmt": 0}
_ZONE = re.compile(r"\W{0,3}(?P<zone>pst|pdt|pt|est|edt|et|utc|gmt)\b", re.IGNORECASE)
_LAST_ZONE_HOURS = 12
"""A day without a zone ends last at UTC-12."""
_NOTE_WORDS = re.compile(
    r"(?:updat|edit|clarif|correct|addend|amend|errat|notice|announc|postscript|revis|modif"
    r"|moderat|disclaim|remind)\w*|(?:note|notes|ps|pps|nb|fyi|mod|admin|update|context|info"
    r"|additional|change|changes|changed|important|attention|warning|news)",
    re.IGNORECASE,
)
_MAX_HEAD_WORDS = 8
_LEAD_WORDS = 4
_LEAD_CHARS = 100
# Letters of other scripts drawn like Latin ones: a keyword spelt with them reads the same.
_LOOK_ALIKES = (
    "АA ВB ЕE ЗZ ІI ЈJ КK МM НH ОO РP СC ТT УY ХX ЅS ԁd еe һh іi јj кk мm оo пn рp сc ѕs тt уy "
    "хx үy аa ԛq ԝw ΑA ΒB ΕE ΖZ ΗH ΙI ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX αa οo ρp ιi τt υu νv χx κk"
)
_CONFUSABLE = {ord(pair[0]): pair[1] for pair in _LOOK_ALIKES.split(" ")}
_BLOCK_TAG = re.compile(
    r"<\s*/?\s*(?:br|p|div|li|ul|ol|h[1-6]|hr|tr|td|table|blockquote|pre|section|article)\b"
    r"[^>]{0,200}>",
    re.IGNORECASE,
)
_TAG = re.compile(r"<\s*/?\s*[a-zA-Z][^>]{0,200}>")
_ENTITY = re.compile(r"&(?:#\d{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*[ \n]")
_WEAK_AFTER = re.compile(r"[,;][ ]|[ ]-{1,2}[ ]|[–—]|[(\[{]|[)\]}](?=\w)")
_ABBREVIATION = re.compile(
    r"(?<![\w.])(?:\w\.\w|vs|etc|approx|incl|inc|jr|sr|st|mt|no|mr|mrs|ms|dr"
    r"|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.$",
    re.I,
)
"""A period after one of these (``i.e.``, ``U.S.``, ``vs.``) ends no sentence: what follows is
read as mid-sentence."""
_WORD = re.compile(r"[^\W_]+")


def normalise_text(text: str) -> tuple[str, tuple[int, ...]]:
    """``text`` as the screen reads it, and for each of its characters the index in ``text`` it
    comes from (NFKC, entities decoded, format characters dropped, spaces and breaks folded,
    Latin look-alikes mapped)."""
    out: list[str] = []
    where: list[int] = []
    i = 0
    while i < len(text):
        entity = _ENTITY.match(text, i) if text[i] == "&" else None
        if entity:
            piece, step = html.unescape(entity.group()), entity.end() - i
        else:
            piece, step = text[i], 1
        for raw in piece:
            if unicodedata.category(raw) == "Cf":  # zero-width and other invisible characters
                continue
            for ch in unicodedata.normalize("NFKC", raw):
                cat = unicodedata.category(ch)
                if ch in "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029":
                    ch = "\n"
                elif cat.startswith("Z") or ch == "\t":
                    ch = " "
                elif cat == "Pd":
                    ch = "-" if ch in "-\u2010\u2011" else "—"
                elif cat == "Cc":
                    continue
                out.append(ch.translate(_CONFUSABLE))
                where.append(i)
        i += step
    return "".join(out), tuple(where)


@dataclass(frozen=True)
class TextEdit:
    """One note found in a text: ``text[start:end]``, its header, and when it became public
    (``public_from``: the end of its day; None for a note that cannot be dated)."""

    start: int
    end: int
    header: str
    day: date | None
    public_from: datetime | None

    @property
    def dated(self) -> bool:
        return self.public_from is not None


def _read_date(match: re.Match[str]) -> date | None:
    parts = match.groupdict()
    year = int(parts["y"])
    year = year + 2000 if year < 100 else year
    try:
        if parts.get("mon"):
            return date(year, _MONTHS[parts["mon"].lower().rstrip(".")], int(parts["d"]))
        a, b = int(parts["a"]), int(parts["b"])
        month, dom = (a, b) if a <= 12 else (b, a)  # swapped only where it must be
        return date(year, month, dom)
    except (ValueError, KeyError):
        return None


def _head_date(lead: str, after: str) -> tuple[date, int | None] | None:
    """The one date a head's lead states, read whole, and its zone's hours; None when it states
    none, or one it cannot read (no year), or several (which one dates it is unclear)."""
    found: list[tuple[int, int, date]] = []
    for pattern in _DATES:
        for m in pattern.finditer(lead):
            day = _read_date(m)
            if day is None:
                return None
            if not any(s <= m.start() < e or m.start() <= s < m.end() for s, e, _ in found):
                found.append((m.start(), m.end(), day))
    if len({d for _, _, d in found}) != 1:
        return None
    covered = "".join(ch if not any(s <= k < e for s, e, _ in found) else " " for k, ch in
                      enumerate(lead))  # fmt: skip
    if _DATE_LIKE.search(covered):  # another date-like token it could not read
        return None
    zone = _ZONE.match(lead + after, max(e for _, e, _ in found))
    return found[0][2], (_ZONES[zone["zone"].lower()] if zone else None)


def _skip_decoration(norm: str, at: int) -> int:
    """Past markup, brackets, list bullets and symbols that may open a header."""
    while at < len(norm):
        tag = _TAG.match(norm, at)
        if tag:
            at = tag.end()
            continue
        ch = norm[at]
        cat = unicodedata.category(ch)
        if ch in " \n*_#>~`|+=-—•·" or cat in ("Ps", "Pi", "So", "Sk", "Sm") or ch in "\"'":
            at += 1
            continue
        break
    return at


# A colon between digits is a time (23:59), not the end of a header.
_TERMINATOR = re.compile(
    r"(?:(?<!\d):|:(?!\d))(?!/)|[()\[\]}!?\n]|(?<!\d)—|—(?!\d)|[ ]-{1,2}(?!\w)"
    r"|[.…](?=[ \n\"'”’]|$)|\*\*|__|<\s*/\s*(?:b|strong|em|i|u)\s*>|" + _BLOCK_TAG.pattern
)
"""What ends a lead; emphasis closing (``**Update**``, ``<b>Update</b>``) ends it as a header."""
_DOTTED = re.compile(r"\b([^\W\d_])\.(?=[^\W\d_]\b)")
_NUMERIC = re.compile(r"\d+(?:[-/.]\d+)+")
_HEADER_COLON = re.compile(r"(?:(?<!\d):|:(?!\d))(?!/)")
"""A colon that may end a header: not a time's (23:59), not a link's (https://)."""


def _lead(norm: str, at: int) -> tuple[str, str]:
    """The lead starting at ``at`` and what ends it (``end`` for the text's end, ``long``
    where no terminator comes within ``_LEAD_CHARS``)."""
    m = _TERMINATOR.search(norm, at, at + _LEAD_CHARS)
    while m is not None and m.group() == "." and _ABBREVIATION.search(norm, max(at, m.start() - 8),
                                                                       m.end()):  # fmt: skip
        m = _TERMINATOR.search(norm, m.end(), at + _LEAD_CHARS)
    if m is None:
        if len(norm) - at <= _LEAD_CHARS:
            return norm[at:], "end"
        return norm[at : at + _LEAD_CHARS], "long"
    token = m.group()
    if token in ("**", "__") or token.startswith("</") or re.match(r"<\s*/", token):
        return norm[at : m.start()], "*" if not _BLOCK_TAG.match(token) else "\n"
    kind = "\n" if token.startswith(("<", "\n")) else token.strip()[:1]
    return norm[at : m.start()], kind


def _note_word(word: str) -> bool:
    """``update``, ``EDIT2``, ``Notes`` and the like (numbering glued on is still the word)."""
    return bool(_NOTE_WORDS.fullmatch(word.strip("0123456789")))


_CARRIED = ("!", "-", "—", "*", "(", "[", "\n", ")", "]", ":")
"""What may end the few words after a header's bracket, the header carried on to it."""


def _closing(norm: str, at: int, limit: int) -> int:
    """Where the bracket opened at or after ``at`` closes (nested ones counted), or -1."""
    depth = 0
    for k in range(at, limit):
        if norm[k] in "([":
            depth += 1
        elif norm[k] in ")]":
            depth -= 1
            if depth == 0:
                return k
    return -1


def _header_end(norm: str, end: int, ended: str, limit: int) -> tuple[int, str]:
    """Where a header whose lead stopped at ``end`` ends, and what closes it: carried on to a
    colon later on the line (``Update - Sep 5, 2025:``), or over a bracket the lead stopped at
    and a few words after it (``Update 2 (Sep 5, 2025)``, ``2025-09-05 (PST) update!!!``)."""
    colon = _HEADER_COLON.search(norm, end, limit)
    if colon is not None and not any(
        not _ABBREVIATION.search(norm, max(0, s.start() - 8), s.start() + 1)
        for s in _SENTENCE_END.finditer(norm, end, colon.start())
    ):  # no sentence ends between the lead and the colon
        return colon.start(), ":"
    while ended in ("(", "["):
        close = _closing(norm, end, limit)
        if close < 0:
            break
        end, ended = close + 1, ")"
        more, stop = _lead(norm, end)
        if len(_WORD.findall(more)) <= _LEAD_WORDS and stop in _CARRIED:
            end, ended = end + len(more), stop
    return end, ended


def _is_head(norm: str, at: int, place: str, title: bool) -> tuple[int, int] | None:
    """Whether a note head starts at ``at`` (a ``place`` of ``_boundaries``): where its header
    starts and ends, or None."""
    start = _skip_decoration(norm, at)
    if start >= len(norm):
        return None
    lead, ended = _lead(norm, start)
    if not _WORD.search(lead):
        return None
    line_end = norm.find("\n", start)
    limit = min(len(norm) if line_end < 0 else line_end, start + _LEAD_CHARS)
    end, closed = _header_end(norm, start + len(lead), ended, limit)
    # a number written with separators (2025-09-05, 9/5) is one word, and still a date
    # and a dotted abbreviation (p.s., N.B.) one word too
    plain = _NUMERIC.sub("2000", _TAG.sub(" ", norm[start:end]))
    plain = _DOTTED.sub(r"\1", plain)
    found = list(_WORD.finditer(plain))
    words = [m.group() for m in found]
    after = norm[end + (closed in ":)") :].lstrip(" ")
    if closed in ("\n", "end"):
        after = ""
    short = len(words) <= _MAX_HEAD_WORDS
    # a header ends like one (not "?": questions in a body) or stands alone on its line
    # a closing bracket ends a header only one that it opened (``(Update 2025-09-05)``)
    bracketed = closed in (")", "]") and any(b in norm[at:start] for b in "([")
    closes = closed in (":", "}", "!", "—", "-", "*") or bracketed
    shaped = short and (closes or after[:1] in ("\n", ""))
    if title:  # a title's bracketed tags are no note: only a note word or a date opens one
        hit = _note_word(words[0]) or (closes and bool(_DAY_LIKE.match(norm, start)))
    elif place == "line":
        hit = shaped or any(_note_word(w) for w in words[:2])
    elif place == "start":  # the text's own start is its body's, unless it says otherwise
        own = _WORD.findall(_DOTTED.sub(r"\1", _TAG.sub(" ", lead)))[:_LEAD_WORDS]
        said = any(_note_word(w) for w in own) or bool(_DATE_LIKE.search(lead))
        hit = said and (closes or shaped)
    else:  # mid-sentence: only a note word says a note starts here
        in_header = any(_note_word(w) for w in words)
        hit = (in_header and shaped) or any(_note_word(w) for w in words[:2])
    return (start, end) if hit else None


def _boundaries(norm: str, title: bool) -> list[tuple[int, str]]:
    """Where a head may start, and what kind of place it is: the text's ``start``, a ``line``
    (a line, paragraph, HTML block or sentence start) or ``mid``-sentence."""
    places: dict[int, str] = {} if title else {0: "start"}
    for m in _SENTENCE_END.finditer(norm):
        abbreviated = m.group()[0] == "." and _ABBREVIATION.search(
            norm, max(0, m.start() - 8), m.start() + 1
        )
        places[m.end()] = "mid" if abbreviated else "line"
    for m in re.finditer("\n", norm):
        places[m.end()] = "line"
    for m in _BLOCK_TAG.finditer(norm):
        places[m.start()] = "line"
    for m in _WEAK_AFTER.finditer(norm):
        places.setdefault(m.end() - 1 if m.group()[-1] in "([{" else m.end(), "mid")
    return sorted(places.items())


def _public_from(day: date, hours: int | None) -> datetime:
    offset = _LAST_ZONE_HOURS if hours is None else hours
    return datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1, hours=offset)


@functools.lru_cache(maxsize=4096)
def find_edits(text: str, title: bool = False) -> tuple[TextEdit, ...]:
    """The note heads of ``text`` in order (the text's start included where it opens with one,
    unless it is a ``title``), each note running to the next head or the end. Kept per text: it
    does not depend on the cutoff, and each event's texts are read again at every step."""
    norm, where = normalise_text(text)
    # (start, header start, header end) of every head, in order; a head inside another's
    # header is part of it
    heads: list[tuple[int, int, int]] = []
    covered = -1
    for at, place in _boundaries(norm, title):
        if at <= covered:
            continue
        found = _is_head(norm, at, place, title)
        if found is not None:
            heads.append((at, *found))
            covered = found[1]
    out: list[TextEdit] = []
    for i, (at, head_start, head_end) in enumerate(heads):
        start = where[at] if at < len(where) else len(text)
        end_norm = heads[i + 1][0] if i + 1 < len(heads) else len(norm)
        end = where[end_norm] if end_norm < len(where) else len(text)
        dated = _head_date(norm[head_start:head_end], norm[head_end : head_end + 8])
        day, public = (dated[0], _public_from(*dated)) if dated else (None, None)
        header = norm[at : head_end + 1].strip()
        out.append(TextEdit(start, end, header, day, public))
    return tuple(out)


def body_as_of(text: str, cutoff: datetime, *, title: bool = False) -> tuple[str, TextEdit | None]:
    """A text taken after ``cutoff``, shown only as far as it existed then: up to its first note
    not dated before the cutoff (returned with the text; None where nothing was cut). A title's
    own start is never a head (it is the question)."""
    for edit in find_edits(text, title):
        if edit.public_from is None or not is_visible(edit.public_from, cutoff):
            kept = re.sub(r"[ \t]+\n", "\n", text[: edit.start])
            return re.sub(r"\n{3,}", "\n\n", kept).strip(), edit
    return text, None


@dataclass(frozen=True)
class TextScreen:
    """What was done to an event's texts for one step."""

    later: bool = False
    """The text was taken after the cutoff (no snapshot published before it)."""
    cut_at: tuple[TextEdit, ...] = ()
    """Where a later text was cut: the first note of each field not dated before the cutoff."""
    dropped: str = ""
    """Why the step cannot be shown its question ("" when it can)."""

    @property
    def shortened(self) -> bool:
        return bool(self.cut_at)


def event_as_of(event: Event, cutoff: datetime, *, later: bool) -> tuple[Event, TextScreen]:
    """The event's texts as of ``cutoff``: a text published before it (not ``later``) as it is;
    a later one through ``body_as_of``, the step dropped where its title carries a note."""
    if not later:
        return event, TextScreen()
    title, title_cut = body_as_of(event.title, cutoff, title=True)
    description, d_cut = body_as_of(event.description, cutoff)
    criteria, c_cut = body_as_of(event.resolution_criteria, cutoff)
    cuts = tuple(c for c in (title_cut, d_cut, c_cut) if c is not None)
    screen = TextScreen(True, cuts, TITLE_NOTE if title_cut is not None else "")
    if not cuts:
        return event, screen
    title = title or "(question withheld)"  # never shown: the step is dropped
    update = {"title": title, "description": description, "resolution_criteria": criteria}
    return event.model_copy(update=update), screen
