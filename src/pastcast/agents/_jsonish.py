"""Finding and leniently loading JSON objects embedded in free model output.

Kept apart from the forecast-specific rules in ``_parsing`` so the notebook parser can reuse it.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Block", "find_blocks", "load_object", "strip_thinking"]

_THINK_RE = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.DOTALL | re.IGNORECASE)
_ANSWER_RE = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)
_FENCE_RE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n?(.*?)```", re.DOTALL)
_CURLY = str.maketrans({"“": '"', "”": '"', "„": '"', "‘": "'", "’": "'"})


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


def balanced_objects(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of top-level balanced ``{...}`` objects, aware of double-quoted strings.

    An opening brace that never closes (a truncated or prose brace) is skipped, so a complete
    object after it is still found.
    """
    spans: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while i < n:
        start = text.find("{", i)
        if start < 0:
            break
        depth, in_str, esc, j = 0, False, False, start
        end = -1
        while j < n:
            c = text[j]
            if in_str:
                if esc:
                    esc = False
                elif c == "\\":
                    esc = True
                elif c == '"':
                    in_str = False
            elif c == '"':
                in_str = True
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    end = j + 1
                    break
            j += 1
        if end < 0:
            i = start + 1
            continue
        spans.append((start, end))
        i = end
    return spans


def find_blocks(text: str) -> list[Block]:
    """All candidate answer blocks, ordered by where they end (the last one is the answer)."""
    blocks: list[Block] = []
    covered: list[tuple[int, int]] = []
    for m in _ANSWER_RE.finditer(text):
        blocks.append(Block(_inner_object(m.group(1)), m.end(), True))
        covered.append(m.span())
    for m in _FENCE_RE.finditer(text):
        if any(a <= m.start() < b for a, b in covered):
            continue
        if m.group(1).lower() not in ("", "json", "json5", "javascript", "js"):
            continue
        blocks.append(Block(_inner_object(m.group(2)), m.end(), True))
        covered.append(m.span())
    for a, b in balanced_objects(text):
        if not any(ca <= a < cb for ca, cb in covered):
            blocks.append(Block(text[a:b], b, False))
    blocks.sort(key=lambda blk: blk.end)
    return blocks


def _inner_object(content: str) -> str:
    spans = balanced_objects(content)
    if spans:
        a, b = spans[-1]
        return content[a:b]
    return content.strip()


_PCT_RE = re.compile(r"(-?\d+(?:\.\d+)?)\s*%")
_WORDS = {"true": "True", "false": "False", "null": "None"}


def _repair(text: str) -> str:
    """Outside strings: quote percentages, drop trailing commas, map JSON words to Python."""
    out: list[str] = []
    i, n = 0, len(text)
    quote: str | None = None
    while i < n:
        c = text[i]
        if quote is not None:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == quote:
                quote = None
            i += 1
            continue
        if c in "\"'":
            quote = c
            out.append(c)
            i += 1
            continue
        m = _PCT_RE.match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == ".")):
            out.append(f"'{m.group(1)}%'")
            i = m.end()
            continue
        if c == ",":
            k = i + 1
            while k < n and text[k].isspace():
                k += 1
            if k < n and text[k] in "}]":
                i += 1
                continue
        word = re.match(r"[A-Za-z_]+", text[i:])
        if word and (i == 0 or not text[i - 1].isalnum()):
            w = word.group(0)
            out.append(_WORDS.get(w, w))
            i += len(w)
            continue
        out.append(c)
        i += 1
    return "".join(out)


def load_object(text: str) -> tuple[dict[str, Any] | None, bool]:
    """Load a JSON object: strictly first, then with lenient repairs.

    Returns (object or None, repaired). Repairs: trailing commas, single quotes, Python/JSON
    literal words, unquoted percentages, and as a last resort curly quotes used as delimiters.
    """
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        obj = None
    else:
        return (obj, False) if isinstance(obj, dict) else (None, False)
    for candidate in (text, text.translate(_CURLY)):
        try:
            value = ast.literal_eval(_repair(candidate))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict):
            return {str(k): v for k, v in value.items()}, True
    return None, False
