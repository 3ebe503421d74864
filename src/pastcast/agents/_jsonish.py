"""Finding and leniently loading JSON objects embedded in free model output.

Kept apart from the forecast-specific rules in ``_parsing`` so the notebook parser can reuse it.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass
from typing import Any

from pastcast import safejson
from pastcast.agents._braces import balanced_objects

__all__ = [
    "MAX_CANDIDATES",
    "Block",
    "balanced_objects",
    "find_blocks",
    "load_object",
    "repeated_keys",
    "strip_thinking",
    "tagged",
]

_THINK_RE = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.DOTALL | re.IGNORECASE)
# The header is possessive (it holds no backticks, so giving some of it back never finds a
# closing fence): a long language word with no closing fence costs one scan, not one per length.
_FENCE_RE = re.compile(r"```[ \t]*+([A-Za-z0-9_-]*+)[ \t]*+\n?+(.*?)```", re.DOTALL)
_CURLY = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'"})

MAX_CANDIDATES = 64
"""How many candidate blocks, counted from the end of the output, are offered for loading: the
answer is the last one that loads, and trying every earlier one would let a long output of
junk objects cost time in proportion to their number."""


@dataclass(frozen=True)
class Block:
    """A candidate answer: its text and where it ended in the output."""

    text: str
    end: int
    explicit: bool
    """True for ``<answer>`` tags and fenced code blocks, False for a bare ``{...}``."""


def strip_thinking(text: str) -> str:
    """Drop ``<think>`` spans (an unterminated one runs to the end), as reasoning models emit."""
    return _THINK_RE.sub("", text)


def tagged(text: str, tag: str) -> list[tuple[int, int]]:
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


def _fences(text: str) -> list[tuple[int, int, str, int, int]]:
    """(start, end, language, content start, content end) of each fenced block."""
    return [(*m.span(), m.group(1), *m.span(2)) for m in _FENCE_RE.finditer(text)]


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


_FENCE_LANGUAGES = frozenset({"", "json", "json5", "javascript", "js"})


def find_blocks(text: str) -> list[Block]:
    """The last ``MAX_CANDIDATES`` candidate answer blocks, ordered by where they end (the last
    one is the answer)."""
    # (end, explicit, start, stop): the block's text is text[start:stop], an explicit block's
    # the last object inside it; cut out only for the candidates kept. Ends never tie.
    found: list[tuple[int, bool, int, int]] = []
    answers: list[tuple[int, int]] = []
    for a, b in tagged(text, "answer"):
        end = b + len("</answer>")
        found.append((end, True, a, b))
        answers.append((a - len("<answer>"), end))
    in_answer = _Covered(answers)
    fences: list[tuple[int, int]] = []
    for start, end, lang, a, b in _fences(text):
        if lang.lower() in _FENCE_LANGUAGES and not (answers and in_answer.holds(start)):
            found.append((end, True, a, b))
            fences.append((start, end))
    inside = _Covered(answers, fences)
    found.extend((b, False, a, b) for a, b in balanced_objects(text) if not inside.holds(a))
    found.sort()
    return [
        Block(_inner_object(text[a:b]) if explicit else text[a:b], end, explicit)
        for end, explicit, a, b in found[-MAX_CANDIDATES:]
    ]


def _inner_object(content: str) -> str:
    spans = balanced_objects(content)
    if spans:
        a, b = spans[-1]
        return content[a:b]
    return content.strip()


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


def _repair(text: str) -> str:
    return _REPAIR.sub(_repair_token, text)


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


def repeated_keys(obj: Any) -> frozenset[str]:
    """The keys a loaded object's text gave more than once (none for any other value)."""
    return obj.repeated if isinstance(obj, _Object) else frozenset()


def _loads(text: str, *, strict: bool = True) -> Any:
    """``json.loads``, or None for anything it refuses (bad syntax, nesting deeper than the
    interpreter's stack)."""
    try:
        return safejson.loads(text, strict=strict, parse_int=_integer, object_pairs_hook=_object)
    except ValueError:
        return None


def load_object(text: str) -> tuple[dict[str, Any] | None, bool]:
    """Load a JSON object: strictly first, then with lenient repairs.

    Returns (object or None, repaired). Repairs: trailing commas, single quotes, Python literal
    words and number spellings, numbers as keys, unquoted percentages, control characters in
    strings, and as a last resort curly quotes used as delimiters. Never raises; linear time.
    """
    obj = _loads(text)
    if obj is not None:  # valid JSON: an object, or not one at all
        return (obj, False) if isinstance(obj, dict) else (None, False)
    for candidate in (text, text.translate(_CURLY)):
        value = _loads(_repair(candidate), strict=False)
        if isinstance(value, dict):
            return value, True
    return None, False
