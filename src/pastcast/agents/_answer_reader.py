"""Reading a model's reply: the JSON answer it ends with, found and loaded leniently, in linear
time on any input (``read_answer``), for every reader of a reply (forecast, actions, two-stage
replies, the notebook). The answer is the last explicit block (``<answer>`` or a fence: the last
object inside it, even one that does not load) or, after it, the last bare balanced object that
loads; the repairs: docs/agents.md, "Answers and failures".
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, overload

from pastcast import safejson

ReadFailure = Literal["empty_output", "no_answer_block", "invalid_json"]

MAX_CANDIDATES = 64
"""How many candidate blocks, counted from the end of the reply, are offered for loading: the
answer is the last one that loads, and trying every earlier one would let a long output of
junk objects cost time in proportion to their number."""


T = TypeVar("T")


class _once(Generic[T]):
    """``functools.cached_property`` without its lock. Python 3.11's is one lock for every
    instance of the class, so 256 threads reading their replies at once took turns, each turn
    a wait for the interpreter (3.12 dropped it). A reply is read by one thread; were a value
    computed twice, it would be the same."""

    def __init__(self, compute: Callable[[Any], T]) -> None:
        self._compute = compute
        self._name = compute.__name__
        self.__doc__ = compute.__doc__

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _once[T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: object, owner: type | None = None) -> T | _once[T]:
        if obj is None:
            return self
        value = obj.__dict__[self._name] = self._compute(obj)
        return value


def read_answer(text: str, *, section: str | None = None) -> Answer:
    """``text`` (a model's reply) as read: its answer object or why there is none
    (``obj``, ``failure``), the keys it gave twice (``repeated``) and every candidate object
    that loads, last first (``objects()``). ``section`` (a tag name: ``"notebook"``) reads only
    the last ``<section>...</section>`` where there is one (its objects, else its whole text),
    and says whether the reply began the section and was cut short before it closed
    (``cut_short``). Lazy: only what is asked for is read. Never raises."""
    return Answer(text, section)


@dataclass(frozen=True)
class Answer:
    """A reply as ``read_answer`` reads it."""

    text: str
    section: str | None = None

    @_once
    def _body(self) -> str:
        return _THINK_RE.sub("", self.text)

    @_once
    def _blocks(self) -> tuple[_Block, ...]:
        body = self._body
        spans = _tagged(body, self.section) if self.section else []
        if not spans:
            return _find_blocks(body)
        start, stop = spans[-1]
        inner = body[start:stop]
        return _find_blocks(inner) or (_Block(inner, True),)

    @_once
    def _answer(self) -> tuple[dict[str, Any] | None, ReadFailure | None]:
        if not self.text or not self.text.strip():
            return None, "empty_output"
        if not self._blocks:
            return None, "no_answer_block"
        for block in reversed(self._blocks):
            obj = _load_object(block.text)
            if obj is not None or block.explicit:
                return obj, None if obj is not None else "invalid_json"
        return None, "invalid_json"

    @property
    def obj(self) -> dict[str, Any] | None:
        """The answer object (None: see ``failure``)."""
        return self._answer[0]

    @property
    def failure(self) -> ReadFailure | None:
        """Why there is no answer object: an empty reply, no candidate, or none that loads."""
        return self._answer[1]

    @_once
    def repeated(self) -> frozenset[tuple[str, ...]]:
        """The key paths (through nested objects) the answer's text gave more than once; the
        last value given is the one kept, as ``json.loads`` keeps it."""
        out: set[tuple[str, ...]] = set()
        stack: list[tuple[tuple[str, ...], dict[str, Any]]] = []
        if self.obj is not None:
            stack.append(((), self.obj))
        while stack:
            path, obj = stack.pop()
            out.update((*path, key) for key in getattr(obj, "repeated", ()))
            stack.extend(((*path, k), v) for k, v in obj.items() if isinstance(v, dict))
        return frozenset(out)

    def objects(self) -> Iterator[dict[str, Any]]:
        """Every candidate that loads as an object, the last first."""
        for block in reversed(self._blocks):
            obj = _load_object(block.text)
            if obj is not None:
                yield obj

    @property
    def cut_short(self) -> bool:
        """The section was begun but the reply ends before it closes (cut at its token limit):
        an opening tag with no closing one after it, or its key in no complete object."""
        if not self.section:
            return False
        body = self._body
        tag = body.rfind(f"<{self.section}>")
        if tag >= 0 and f"</{self.section}>" not in body[tag:]:
            return True
        key = body.rfind(f'"{self.section}"')
        return key >= 0 and not any(a < key < b for a, b in _balanced_objects(body))


# -- candidate blocks ------------------------------------------------------------------------

_THINK_RE = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.DOTALL | re.IGNORECASE)
# The header is possessive (it holds no backticks, so giving some of it back never finds a
# closing fence): a long language word with no closing fence costs one scan, not one per length.
_FENCE_RE = re.compile(r"```[ \t]*+([A-Za-z0-9_-]*+)[ \t]*+\n?+(.*?)```", re.DOTALL)
_FENCE_LANGUAGES = frozenset({"", "json", "json5", "javascript", "js"})


@dataclass(frozen=True)
class _Block:
    """A candidate answer's text, and whether it is explicit: ``<answer>`` tags and fenced code
    blocks are, a bare ``{...}`` is not."""

    text: str
    explicit: bool


def _tagged(text: str, tag: str) -> list[tuple[int, int]]:
    """(start, end) of the contents of each ``<tag>...</tag>`` (case-insensitive), as the lazy
    regex ``<tag>(.*?)</tag>`` finds them, in linear time: once no closing tag follows an
    opening one, none follows any later one either, so the search stops there."""
    opening = re.compile(re.escape(f"<{tag}>"), re.IGNORECASE)
    closing = re.compile(re.escape(f"</{tag}>"), re.IGNORECASE)
    spans: list[tuple[int, int]] = []
    pos = 0
    while (m := opening.search(text, pos)) is not None:
        close = closing.search(text, m.end())
        if close is None:
            break
        spans.append((m.end(), close.start()))
        pos = close.end()
    return spans


class _Covered:
    """Spans, each list sorted and disjoint; ``holds(x)``: whether ``x`` lies in one of them."""

    def __init__(self, *lists: list[tuple[int, int]]) -> None:
        self.lists = [([a for a, _ in spans], [b for _, b in spans]) for spans in lists if spans]

    def holds(self, x: int) -> bool:
        for starts, ends in self.lists:
            i = bisect_right(starts, x) - 1
            if i >= 0 and x < ends[i]:
                return True
        return False


def _find_blocks(text: str) -> tuple[_Block, ...]:
    """The last ``MAX_CANDIDATES`` candidate answer blocks, ordered by where they end (the last
    one is the answer)."""
    # (end, explicit, start, stop): the block's text is text[start:stop], an explicit block's
    # the last object inside it; cut out only for the candidates kept. Ends never tie.
    found: list[tuple[int, bool, int, int]] = []
    answers: list[tuple[int, int]] = []
    for a, b in _tagged(text, "answer"):
        end = b + len("</answer>")
        found.append((end, True, a, b))
        answers.append((a - len("<answer>"), end))
    in_answer = _Covered(answers)
    fences: list[tuple[int, int]] = []
    for m in _FENCE_RE.finditer(text):
        start, end = m.span()
        if m.group(1).lower() in _FENCE_LANGUAGES and not (answers and in_answer.holds(start)):
            found.append((end, True, *m.span(2)))
            fences.append((start, end))
    inside = _Covered(answers, fences)
    found.extend((b, False, a, b) for a, b in _balanced_objects(text) if not inside.holds(a))
    found.sort()
    return tuple(
        _Block(_inner_object(text[a:b]) if explicit else text[a:b], explicit)
        for _, explicit, a, b in found[-MAX_CANDIDATES:]
    )


def _inner_object(content: str) -> str:
    spans = _balanced_objects(content)
    return content[slice(*spans[-1])] if spans else content.strip()


# -- balanced objects ------------------------------------------------------------------------
# The rule is that of a scan from every opening brace (counting braces outside double-quoted
# strings, with backslash escapes, until the depth returns to 0); an opening brace that never
# closes (a truncated or prose brace) is skipped, so a complete object after it is still found.
# Scanning from each brace in turn is quadratic on text full of unclosed braces; here every
# scan runs at once.

_STRUCTURE = re.compile(r'[{}"\\]')


def _balanced_objects(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of top-level balanced ``{...}`` objects, aware of double-quoted
    strings (see above)."""
    if "{" not in text:
        return []
    ends = _closing_ends(text)
    spans: list[tuple[int, int]] = []
    pos = 0
    for start in sorted(ends):
        if start >= pos:
            spans.append((start, ends[start]))
            pos = ends[start]
    return spans


class _Groups:
    """Union-find over opening braces: the scans that share a depth on one track close together.
    Only merged braces have an entry, so the common case (one track) costs nothing here."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, x: int) -> int:
        parent = self.parent
        root = x
        while (up := parent.get(root)) is not None:
            root = up
        while x != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    def join(self, levels: list[int], other: list[int]) -> list[int]:
        """Two tracks' stacks as one, joined depth by depth from the top; the cost is that of the
        shorter stack, whose levels disappear, so the total stays linear."""
        long, short = (levels, other) if len(levels) >= len(other) else (other, levels)
        for k in range(1, len(short) + 1):
            a, b = self.find(long[-k]), self.find(short[-k])
            if a != b:
                self.parent[b] = a
            long[-k] = a
        return long


def _closing_ends(text: str) -> dict[int, int]:
    """For each opening brace that closes, the end of its object: where a scan from it (counting
    braces outside double-quoted strings, with backslash escapes) first returns to depth 0.

    Every brace's scan runs at once. A scan's state is only whether it is inside a string and
    whether the next character is escaped; scans in the same state stay in step, so they form
    one track: at most one outside strings (``out``) and two inside (``inside``: levels and the
    position of a pending escaped character). A track holds its open braces as a stack of
    levels (the scans at one depth, a union-find group).
    """
    groups = _Groups()
    closed: dict[int, int] = {}
    opens: list[int] = []
    out: list[int] | None = None
    inside: list[tuple[list[int], int]] = []
    for m in _STRUCTURE.finditer(text):
        q, c = m.start(), m.group()
        if inside:
            still: list[tuple[list[int], int]] = []
            leaving: list[list[int]] = []
            for levels, skip in inside:
                if skip == q:  # the escaped character
                    still.append((levels, -1))
                elif c == "\\":
                    still.append((levels, q + 1))
                elif c == '"':
                    leaving.append(levels)
                else:
                    still.append((levels, -1))
            if out is not None and c == '"':
                still.append((out, -1))
                out = None
            for levels in leaving:
                out = levels if out is None else groups.join(out, levels)
            inside = _merge_inside(still, groups)
            if c == '"':
                continue
        elif c == '"':
            if out is not None:
                inside = [(out, -1)]
                out = None
            continue
        if c == "{":
            opens.append(q)
            if out is None:
                out = [q]
            else:
                out.append(q)
        elif c == "}" and out is not None:
            closed[groups.find(out.pop())] = q + 1
            if not out:
                out = None
    find = groups.find
    return {s: closed[r] for s in opens if (r := find(s)) in closed}


def _merge_inside(
    tracks: list[tuple[list[int], int]], groups: _Groups
) -> list[tuple[list[int], int]]:
    if len(tracks) < 2:
        return tracks
    merged: dict[int, list[int]] = {}
    for levels, skip in tracks:
        merged[skip] = groups.join(merged[skip], levels) if skip in merged else levels
    return [(levels, skip) for skip, levels in merged.items()]


# -- lenient loading -------------------------------------------------------------------------
# The lenient repair turns near-JSON into JSON in one pass of one regex (in C, linear): outside
# strings, a number followed by % becomes a string, a trailing comma goes, Python's words and
# number spellings become JSON's, a number used as a key is quoted, and a single-quoted string
# becomes a double-quoted one. (Python's own parser, the obvious tool, is superlinear.)

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"  # unambiguous: linear
_REPAIR = re.compile(
    r'(?P<dq>"(?:[^"\\]|\\.)*"?)'
    r"|(?P<sq>'(?:[^'\\]|\\.)*'?)"
    r"|(?<![^\W_])(?<!\.)(?P<pct>-?\d+(?:\.\d+)?)\s*%"
    rf"|(?<![\w.])(?P<key>{_NUMBER})(?![\w.])(?=\s*:)"
    rf"|(?<![\w.])(?P<num>{_NUMBER})(?![\w.])"
    r"|(?P<comma>,)(?=\s*[}\]])"
    r"|(?<![^\W_])(?P<word>[A-Za-z_]+)",
    re.DOTALL,
)
_WORDS = {"True": "true", "False": "false", "None": "null"}
_SQ_ESCAPE = re.compile(r"\\(.)|\"", re.DOTALL)
_CURLY = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'"})


def _json_number(text: str) -> str:
    """A Python spelling of a number (+1, .5, 5., 007) in JSON's."""
    sign = "-" if text.startswith("-") else ""
    body = text.lstrip("+-")
    mantissa, e, exponent = body.replace("E", "e").partition("e")
    whole, dot, frac = mantissa.partition(".")
    whole = whole.lstrip("0") or "0"
    return sign + whole + ("." + (frac or "0") if dot else "") + (e + exponent if e else "")


def _json_string(quoted: str) -> str:
    """A single-quoted string as a double-quoted one (\\' unescaped, " escaped); an unterminated
    one is left as it is."""
    if len(quoted) < 2 or not quoted.endswith("'"):
        return quoted
    inner = quoted[1:-1]
    body = _SQ_ESCAPE.sub(
        lambda m: '\\"' if m.group(1) is None else ("'" if m.group(1) == "'" else m.group()),
        inner,
    )
    return f'"{body}"'


def _repair_token(m: re.Match[str]) -> str:
    kind = m.lastgroup
    if kind == "dq":
        return m.group()
    if kind == "sq":
        return _json_string(m.group())
    if kind == "pct":
        return f'"{m.group("pct")}%"'
    if kind == "key":
        return f'"{m.group()}"'
    if kind == "num":
        return _json_number(m.group())
    if kind == "comma":
        return ""
    word = m.group()
    return _WORDS.get(word, word)


_INT_DIGITS = 4000


def _integer(digits: str) -> int | float:
    """A JSON integer; one too long for Python to convert (4300 digits) is beyond any float."""
    return int(digits) if len(digits) <= _INT_DIGITS else float(digits)


class _Object(dict[str, Any]):
    """A loaded JSON object that remembers the keys its text gave more than once (the last
    value is the one kept, as ``json.loads`` keeps it)."""

    repeated: frozenset[str] = frozenset()


def _object(pairs: list[tuple[str, Any]]) -> _Object:
    out = _Object(pairs)
    if len(out) < len(pairs):
        counts = Counter(k for k, _ in pairs)
        out.repeated = frozenset(k for k, n in counts.items() if n > 1)
    return out


def _loads(text: str, *, strict: bool = True) -> Any:
    """``json.loads``, or None for anything it refuses (bad syntax, nesting deeper than the
    interpreter's stack)."""
    try:
        return safejson.loads(text, strict=strict, parse_int=_integer, object_pairs_hook=_object)
    except ValueError:
        return None


def _load_object(text: str) -> dict[str, Any] | None:
    """A JSON object: loaded strictly first, then with the lenient repairs; None for anything
    else. Linear time."""
    obj = _loads(text)
    if obj is not None:  # valid JSON: an object, or not one at all
        return obj if isinstance(obj, dict) else None
    for candidate in (text, text.translate(_CURLY)):
        value = _loads(_REPAIR.sub(_repair_token, candidate), strict=False)
        if isinstance(value, dict):
            return value
    return None
