"""Top-level balanced ``{...}`` objects in free text, in linear time on any input.

The rule is that of a scan from every opening brace (counting braces outside double-quoted
strings, with backslash escapes, until the depth returns to 0); an opening brace that never
closes (a truncated or prose brace) is skipped, so a complete object after it is still found.
Scanning from each brace in turn is quadratic on text full of unclosed braces; here every scan
runs at once.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["balanced_objects"]

_STRUCTURE = re.compile(r'[{}"\\]')
_OPEN, _CLOSE = ord("{"), ord("}")


def balanced_objects(text: str) -> list[tuple[int, int]]:
    """(start, end) spans of top-level balanced ``{...}`` objects, aware of double-quoted strings
    (see the module's docstring)."""
    if "{" not in text:
        return []
    ends = _closing_ends(text) if '"' in text else _closing_ends_unquoted(text)
    spans: list[tuple[int, int]] = []
    pos = 0
    for start in sorted(ends):
        if start >= pos:
            spans.append((start, ends[start]))
            pos = ends[start]
    return spans


def _closing_ends_unquoted(text: str) -> dict[int, int]:
    """``_closing_ends`` for text without a double quote, vectorised: a brace at depth d (after
    it) closes at the first later brace where the depth is d - 1."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    where = np.flatnonzero((codes == _OPEN) | (codes == _CLOSE))
    opening = codes[where] == _OPEN
    depth = np.cumsum(np.where(opening, 1, -1)).astype(np.int64)
    n = len(where)
    # One sorted key per brace, (depth, index): the first brace after k at depth d - 1 is the
    # next key after (d - 1, k), if it still has depth d - 1.
    keys = (depth + n + 1) * (n + 1) + np.arange(n, dtype=np.int64)
    order = np.sort(keys)
    starts = np.flatnonzero(opening)
    queries = keys[starts] - (n + 1)
    found = np.searchsorted(order, queries, side="right")
    ok = found < n
    nxt = order[np.minimum(found, n - 1)]
    ok &= nxt // (n + 1) == queries // (n + 1)
    close = where[nxt[ok] % (n + 1)] + 1
    return dict(zip(where[starts[ok]].tolist(), close.tolist(), strict=True))


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
