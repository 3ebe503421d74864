"""Screens for documents that were written (or rewritten) after the date they carry.

A dated summary that was produced later can describe what happened after its date: that is
leakage even though the date looks right. Day-level screens (a whole day file is flagged):

* ``unparseable``: the file is not valid YAML;
* ``deep_context_schema``: the file is not in the same-day snapshot schema (the later
  "deep context" rewrites use a different schema: ``dataset`` / ``events``);
* ``size_outlier``: the day is more than ``SIZE_FACTOR`` times the rolling median of the
  previous ``WINDOW`` kept days.

Item-level screen: ``later_date_mention``, an explicit calendar date more than a day after the
document's date in a sentence without forward-looking wording (scheduled events such as
"postponed until 5 September 2021" are legitimate; "announced his death on January 10, 2020" in
a January 7 item is hindsight).
"""

from __future__ import annotations

import re
import statistics
from collections import deque
from datetime import date, timedelta

__all__ = ["SIZE_FACTOR", "WINDOW", "RollingSize", "later_date_mention"]

SIZE_FACTOR = 4.0
WINDOW = 30
_MIN_HISTORY = 7

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_MONTH_NO = {m: i + 1 for i, m in enumerate(_MONTHS)}
_M = "|".join(_MONTHS)
_DATE = re.compile(
    rf"\b(?:(\d{{1,2}}) ({_M}),? (\d{{4}})|({_M}) (\d{{1,2}}),? (\d{{4}})"
    r"|(\d{4})-(\d\d)-(\d\d))\b"
)
_FORWARD = re.compile(
    r"\b(will|until|till|scheduled|rescheduled|postpone\w*|deadline|set to|expected|expects|"
    r"plan\w*|to be|by|from|begin\w*|start\w*|effective|due|through|extend\w*|next|upcoming|"
    r"delay\w*|move\w* to|slated|announce\w* (?:that )?(?:the )?\w+ (?:will|would))\b",
    re.IGNORECASE,
)


def _dates(text: str) -> list[date]:
    out = []
    for m in _DATE.finditer(text):
        g = m.groups()
        try:
            if g[0]:
                out.append(date(int(g[2]), _MONTH_NO[g[1]], int(g[0])))
            elif g[3]:
                out.append(date(int(g[5]), _MONTH_NO[g[3]], int(g[4])))
            else:
                out.append(date(int(g[6]), int(g[7]), int(g[8])))
        except ValueError:
            continue
    return out


def later_date_mention(text: str, day: date) -> bool:
    """True if ``text`` states a date after ``day + 1`` without forward-looking wording."""
    if not any(d > day + timedelta(days=1) for d in _dates(text)):
        return False
    return _FORWARD.search(text) is None


class RollingSize:
    """Rolling median of the sizes of recently *kept* days (flagged days do not raise it)."""

    def __init__(self, window: int = WINDOW, factor: float = SIZE_FACTOR) -> None:
        self._sizes: deque[int] = deque(maxlen=window)
        self.factor = factor

    def is_outlier(self, size: int) -> bool:
        if len(self._sizes) < _MIN_HISTORY:
            return False
        return size > self.factor * statistics.median(self._sizes)

    def keep(self, size: int) -> None:
        self._sizes.append(size)
