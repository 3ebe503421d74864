"""Documents from the Wikipedia "Portal:Current events" archive (WCEP): one document per news
sentence, titled by its heading, dated at the last microsecond of its day (a day summary is
complete only when the day is over). Days come from ``yaml/YYYY/MM/YYYY-MM-DD.yaml``, else from
``wcep_2020_2026_compact.jsonl.gz``; the hindsight screen is ``_hindsight``. See
docs/corpus.md, "The Wikipedia current-events archive"."""

from __future__ import annotations

import gzip
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from pastcast import safejson
from pastcast.corpus.sources._hindsight import RollingSize, later_date_mention
from pastcast.cutoff import end_of_day
from pastcast.records import Document

COMPACT_NAME = "wcep_2020_2026_compact.jsonl.gz"
_CITATION = re.compile(r"\(([^()]+)\)\s*\.?\s*$")
_PORTAL = "https://en.wikipedia.org/wiki/Portal:Current_events/"


@dataclass
class WcepReport:
    """Counts of what was read, kept and removed (by reason)."""

    days_read: int = 0
    days_kept: int = 0
    days_flagged: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    items_kept: int = 0
    items_removed: Counter[str] = field(default_factory=Counter)
    headings: int = 0
    days_by_source: Counter[str] = field(default_factory=Counter)

    def lines(self) -> list[str]:
        out = [
            f"days read {self.days_read} (yaml {self.days_by_source['yaml']}, compact "
            f"{self.days_by_source['compact']}), kept {self.days_kept}",
            f"news items kept {self.items_kept}; topic headings used as titles {self.headings}",
        ]
        for reason, days in sorted(self.days_flagged.items()):
            out.append(f"days removed ({reason}): {len(days)}: {', '.join(days)}")
        for reason, n in sorted(self.items_removed.items()):
            out.append(f"items removed ({reason}): {n}")
        return out


def _is_news(text: str) -> bool:
    """A news sentence ends with a source citation such as "(Reuters)"; a topic heading such as
    "Yemeni Civil War (2015–present)" is short and its parenthesis holds a date."""
    m = _CITATION.search(text)
    return (m is not None and not re.search(r"\d", m.group(1))) or len(text) > 150


@dataclass(frozen=True)
class _Day:
    day: date
    source: str
    size: int
    items: list[tuple[str, str, bool]]  # (category, text, is_news)
    flag: str | None = None


def _yaml_day(path: Path, day: date) -> _Day:
    raw = path.read_bytes()
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError:
        return _Day(day, "yaml", len(raw), [], "unparseable")
    if not isinstance(data, dict) or not isinstance(data.get("Intelligence_Payload"), dict):
        return _Day(day, "yaml", len(raw), [], "deep_context_schema")
    items = []
    for cat, entries in data["Intelligence_Payload"].items():
        for entry in entries or []:
            if isinstance(entry, str) and entry.strip():
                text = " ".join(entry.split())
                items.append((str(cat), text, _is_news(text)))
    return _Day(day, "yaml", len(raw), items)


def _compact_days(path: Path) -> dict[date, list[tuple[str, str, bool]]]:
    days: dict[date, list[tuple[str, str, bool]]] = defaultdict(list)
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            try:
                obj: Any = safejson.loads_line(line)
                day = date.fromisoformat(obj["date"])
                days[day].append((obj["cat"], " ".join(obj["text"].split()), bool(obj["item"])))
            except (KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"{path}:{lineno}: malformed record ({exc})") from None
    return days


def _all_days(root: Path, since: date | None, until: date | None) -> Iterator[_Day]:
    yaml_files = {date.fromisoformat(p.stem): p for p in (root / "yaml").glob("*/*/*.yaml")}
    compact = _compact_days(root / COMPACT_NAME) if (root / COMPACT_NAME).is_file() else {}
    for day in sorted(set(yaml_files) | set(compact)):
        if (since and day < since) or (until and day > until):
            continue
        if day in yaml_files:
            yield _yaml_day(yaml_files[day], day)
        else:
            items = compact[day]
            yield _Day(day, "compact", sum(len(t) + len(c) for c, t, _ in items), items)


def read_wcep(
    root: Path | str,
    *,
    since: date | None = None,
    until: date | None = None,
    include_flagged: bool = False,
    report: WcepReport | None = None,
) -> Iterator[Document]:
    """Yield one document per news sentence of the days in ``[since, until]``, in date order.

    The rolling size median is computed per source (YAML file bytes and compact text characters
    are different measures) over the days actually read.
    """
    root = Path(root)
    if not (root / "yaml").is_dir() and not (root / COMPACT_NAME).is_file():
        raise FileNotFoundError(f"{root}: no yaml/ folder nor {COMPACT_NAME}")
    report = report if report is not None else WcepReport()
    rolling = {"yaml": RollingSize(), "compact": RollingSize()}
    for d in _all_days(root, since, until):
        report.days_read += 1
        report.days_by_source[d.source] += 1
        flag = d.flag or ("size_outlier" if rolling[d.source].is_outlier(d.size) else None)
        if flag:
            report.days_flagged[flag].append(d.day.isoformat())
            if not include_flagged or not d.items:
                continue
        else:
            rolling[d.source].keep(d.size)
        report.days_kept += 1
        yield from _day_documents(d, include_flagged, report)


def _day_documents(d: _Day, include_flagged: bool, report: WcepReport) -> Iterator[Document]:
    heading: dict[str, str] = {}
    seen: set[str] = set()
    n = 0
    url = _PORTAL + f"{d.day.year}_{d.day.strftime('%B')}_{d.day.day}"
    for cat, text, is_news in d.items:
        if not is_news:
            heading[cat] = text
            report.headings += 1
            continue
        if text in seen:
            report.items_removed["duplicate_in_day"] += 1
            continue
        seen.add(text)
        if later_date_mention(text, d.day) and not include_flagged:
            report.items_removed["later_date_mention"] += 1
            continue
        n += 1
        report.items_kept += 1
        yield Document(
            id=f"wcep-{d.day.isoformat()}-{n:03d}",
            timestamp=end_of_day(d.day),  # a day's summary is complete once it is over
            title=heading.get(cat, cat),
            text=text,
            source=f"wcep:{cat}",
            url=url,
            dated_by="published",  # the day the page summarises (edited later: the screens)
        )
