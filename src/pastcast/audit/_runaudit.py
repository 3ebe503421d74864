"""What agents saw and wrote in a run, checked after the fact from its log: the checks
``CHECKS`` that docs/audits.md ("pastcast audit run") tabulates, with ``SHINGLE`` words in a row
counting as verbatim text.

Every finding is counted; only the first ``EXAMPLES`` of each check (in log order) are kept,
and each pass streams the log's records, so memory is bounded whatever the log's length and
however many findings it holds.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Literal, get_args

from pydantic import Field

from pastcast import safejson
from pastcast.corpus.sources import screen_document
from pastcast.cutoff import is_visible, last_complete_day, to_micros
from pastcast.dataset import Dataset
from pastcast.records import Document, Record, Setting
from pastcast.runlog import StepColumns, StepRecord

Check = Literal[
    "document_after_cutoff",
    "unknown_document",
    "flagged_document",
    "resolved_label",
    "post_cutoff_price",
    "post_cutoff_text",
]
CHECKS: tuple[Check, ...] = get_args(Check)
SHINGLE = 8
"""Words in a row that count as verbatim text."""
EXAMPLES = 10
"""Findings of each check an audit keeps (the first in log order); every one is counted."""

_WORD = re.compile(r"\w+")
_NUMBER = re.compile(r"(?<![\d.])\d+\.\d+(?![\d.])")
_DAY_FIELD = re.compile(r'"day"\s*:\s*"(\d{4}-\d{2}-\d{2})"')
_DATE_FORMAT = "%Y-%m-%d %H:%M"  # how tool results show a document's date


class Finding(Record):
    """One problem at one step of one agent."""

    check: Check
    agent: str
    setting: Setting
    event_id: str
    step_index: int
    rollout: int
    detail: str

    def line(self) -> str:
        return (
            f"{self.agent}/{self.setting} {self.event_id}#{self.step_index} rollout "
            f"{self.rollout}: {self.check}: {self.detail}"
        )


class RunAudit(Record):
    """The run audit of one log: what was checked, every finding counted by check, and the
    first ``examples`` findings of each check."""

    run_log: str
    steps: int
    documents_seen: int
    texts_checked: int
    """Prompt messages and tool results given to agents."""
    outputs_checked: int
    checks: tuple[Check, ...]
    """The checks that ran (some need the corpus or the dataset)."""
    findings: tuple[Finding, ...] = ()
    """The first ``examples`` findings of each check in log order (by step, check, detail)."""
    finding_counts: dict[Check, int] = Field(default_factory=dict)
    """Every finding by check (the checks with any, in ``CHECKS`` order)."""
    examples: int = EXAMPLES

    @property
    def ok(self) -> bool:
        return not self.finding_counts

    @property
    def total(self) -> int:
        """Findings in all (``findings`` holds at most ``examples`` of each check)."""
        return sum(self.finding_counts.values())

    def counts(self) -> dict[str, int]:
        return {str(c): n for c, n in self.finding_counts.items()}


def _label_patterns(label: str) -> list[re.Pattern[str]]:
    lab = re.escape(label)
    quote = r"[\"'“”]?"
    return [
        re.compile(rf"\bresolved\s+(?:to\s+|as\s+)?{quote}{lab}\b", re.IGNORECASE),
        re.compile(rf"\bresolution\s*(?:was|:|=)\s*{quote}{lab}\b", re.IGNORECASE),
        re.compile(rf"\boutcome\s+(?:was|has\s+been)\s+{quote}{lab}\b", re.IGNORECASE),
        re.compile(rf"\"(?:resolved_to|truth|resolution)\"\s*:\s*{quote}{lab}\b", re.IGNORECASE),
    ]


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _shingles(text: str, n: int) -> set[str]:
    w = _words(text)
    return {" ".join(w[i : i + n]) for i in range(len(w) - n + 1)}


def _question(ds: Dataset | None, rec: StepRecord) -> list[str]:
    """The question's text as the step showed it (its snapshot at the cutoff, if any)."""
    if ds is None:
        return []
    try:
        e = ds.event_at(rec.event_id, rec.cutoff)
    except KeyError:
        return []
    return [e.title, e.description, e.resolution_criteria, *e.labels]


def _inputs(rec: StepRecord, ds: Dataset | None = None) -> list[str]:
    """Every text the agent was given: the question, prompt messages (not its own replies),
    tool results, the notebook it was handed."""
    ep = rec.episode
    texts = _question(ds, rec)
    texts += [m.content for m in ep.messages if m.role != "assistant"]
    texts += [c.result for c in ep.tool_calls]
    texts.append(ep.notebook_in.text() if ep.notebook_in else "")
    return [t for t in texts if t]


def _outputs(rec: StepRecord) -> list[str]:
    """Everything the agent wrote."""
    ep = rec.episode
    texts = [m.content for m in ep.messages if m.role == "assistant"]
    texts += [rec.forecast.raw_text, rec.forecast.rationale]
    texts.append(ep.notebook_out.text() if ep.notebook_out else "")
    return [t for t in texts if t]


def _shown_dates(result: str) -> Iterator[tuple[str, datetime]]:
    """(id, date) of every document a tool result lists with its date."""
    try:
        value: Any = safejson.loads(result)
    except ValueError:
        return
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            try:
                when = datetime.strptime(str(item.get("date")), _DATE_FORMAT).replace(tzinfo=UTC)
            except ValueError:
                continue
            yield item["id"], when


def _post_cutoff_prices(ds: Dataset, rec: StepRecord) -> dict[str, str]:
    """Price text printed only on days that had not ended by the step's cutoff -> its day."""
    last = last_complete_day(rec.cutoff)
    before: set[str] = set()
    after: dict[str, str] = {}
    for b in ds.beliefs.get(rec.event_id, ()):
        for label, p in b.probs.items():
            for s in {repr(p), f"{p:.4f}"}:  # how a price may be printed
                if len(s.partition(".")[2].rstrip("0")) < 4:
                    continue  # not distinctive enough to search for (4+ decimals)
                if b.day <= last:
                    before.add(s)
                else:
                    after.setdefault(s, f"{b.day} {label}")
    return {s: d for s, d in after.items() if s not in before}


def _strip_question(text: str, ds: Dataset | None, rec: StepRecord) -> str:
    """The text without the question's own wording (criteria say how it *would* resolve)."""
    # title, description, criteria; the longest first, as one may hold another
    for part in sorted(_question(ds, rec)[:3], key=len, reverse=True):
        if part:
            text = text.replace(part, " ")
    return text


_Example = tuple[int, str, Finding]
"""A kept finding with its step's position in the log and its detail (the order kept)."""


@dataclass
class _Collector:
    """Every finding counted, each (step, check, detail) once; the first ``examples`` of each
    check by (step, detail) kept. The passes visit the steps in log order, each check in one
    pass, so a step's findings arrive together and nothing kept is ever displaced by a later
    step: memory is bounded by the examples, however many findings there are."""

    examples: int = EXAMPLES
    counts: dict[Check, int] = field(default_factory=dict)
    kept: dict[Check, list[_Example]] = field(default_factory=dict)
    _step: int = -1
    _this_step: set[tuple[Check, str]] = field(default_factory=set)

    def add(self, i: int, rec: StepRecord, check: Check, detail: str) -> None:
        if i != self._step:
            self._step, self._this_step = i, set()
        if (check, detail) in self._this_step:
            return
        self._this_step.add((check, detail))
        self.counts[check] = self.counts.get(check, 0) + 1
        kept = self.kept.setdefault(check, [])
        if len(kept) >= self.examples and (not kept or kept[-1][:2] < (i, detail)):
            return  # the examples of this check are all earlier in the log
        finding = Finding(
            check=check,
            agent=rec.agent,
            setting=rec.setting,
            event_id=rec.event_id,
            step_index=rec.step_index,
            rollout=rec.rollout,
            detail=detail,
        )
        bisect.insort(kept, (i, detail, finding), key=lambda e: e[:2])
        del kept[self.examples :]

    def findings(self) -> tuple[Finding, ...]:
        """The kept findings by step, check and detail."""
        every = [(i, CHECKS.index(c), d, f) for c, kept in self.kept.items() for i, d, f in kept]
        return tuple(f for *_, f in sorted(every, key=lambda e: e[:3]))

    def counted(self) -> dict[Check, int]:
        return {c: self.counts[c] for c in CHECKS if self.counts.get(c)}


def _seen(rec: StepRecord) -> set[str]:
    """The documents the step's tool calls exposed (made again in each pass, so that memory does
    not grow with the log)."""
    return {d for c in rec.episode.tool_calls for d in c.doc_ids}


def _visible(
    rec: StepRecord, ids: set[str], docs: Mapping[str, Document] | None
) -> list[str] | None:
    """The texts of the documents in ``ids`` visible at the step's cutoff (None: no corpus)."""
    if docs is None:
        return None
    return [
        f"{d.title}\n{d.text}"
        for doc_id in ids
        if (d := docs.get(doc_id)) is not None and is_visible(d.timestamp, rec.cutoff)
    ]


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_ESCAPED = re.compile(r"[\\\x00-\x1f]")


def _pieces(text: str) -> list[str]:
    """The text's JSON string values, each on its own, and what lies between them (a tool
    result, or a message quoting one, is mostly JSON)."""
    out, last = [], 0
    for m in _JSON_STRING.finditer(text):
        out.append(text[last : m.start()])
        quoted = m.group(0)
        if not _ESCAPED.search(quoted):  # no escape, no control character: its value as written
            out.append(quoted[1:-1])
            last = m.end()
            continue
        try:
            out.append(str(json.loads(quoted)))
        except ValueError:
            out.append(quoted)
        last = m.end()
    out.append(text[last:])
    return [p for p in out if p.strip()]


def _quotes_a_document(piece: str, visible: list[str]) -> bool:
    """``piece`` is (a cut of) a document visible at the cutoff: public knowledge then."""
    core = piece.strip().strip("…").strip()
    return bool(core) and any(core in text for text in visible)


def _check_step_texts(
    out: _Collector,
    i: int,
    rec: StepRecord,
    ds: Dataset | None,
    docs: Mapping[str, Document] | None,
    patterns: dict[str, list[re.Pattern[str]]],
) -> int:
    """The resolved-label and price checks over every text given to the agent at step ``i``. A
    statement of an outcome inside a document visible at the cutoff is that document's (dated
    and screened by the document checks); elsewhere (prompts the harness wrote, other tool
    output) it is a leak. Without the corpus (``docs`` None) every statement counts.
    ``patterns``: each truth's label patterns, made once."""
    checked = 0
    truth = rec.grading.truth
    pats = patterns.setdefault(truth, _label_patterns(truth))
    last = last_complete_day(rec.cutoff)
    prices = _post_cutoff_prices(ds, rec) if ds is not None else {}
    visible: list[str] | None = None  # made for the step's first statement only
    for text in _inputs(rec):
        checked += 1  # the question itself is not checked: it is the dataset's, not a leak
        for piece in _pieces(_strip_question(text, ds, rec)):
            for pat in pats:
                m = pat.search(piece)
                if not m:
                    continue
                if visible is None:
                    visible = _visible(rec, _seen(rec), docs)
                if not (visible is not None and _quotes_a_document(piece, visible)):
                    out.add(
                        i, rec, "resolved_label", f"a text given to the agent says {m.group(0)!r}"
                    )
        for m in _DAY_FIELD.finditer(text):
            if date.fromisoformat(m.group(1)) > last:
                out.add(i, rec, "post_cutoff_price", f"market day {m.group(1)} had not ended")
        for s in sorted(set(_NUMBER.findall(text)) & prices.keys()):
            out.add(i, rec, "post_cutoff_price", f"price {s} of {prices[s]}, after the cutoff")
    return checked


def _check_step_shown_dates(out: _Collector, i: int, rec: StepRecord) -> None:
    for call in rec.episode.tool_calls:
        for doc_id, when in _shown_dates(call.result):
            if not is_visible(when, rec.cutoff):
                shown = f"{when:%Y-%m-%d %H:%M}"
                out.add(i, rec, "document_after_cutoff", f"{doc_id} shown dated {shown}")


def _scan_corpus(
    documents: Iterable[Document], seen: set[str], wanted: set[str], n: int
) -> tuple[dict[str, Document], dict[str, tuple[int, str]]]:
    """One pass over the corpus: the documents seen, and the earliest document holding each
    wanted shingle (microseconds, id)."""
    found: dict[str, Document] = {}
    earliest: dict[str, tuple[int, str]] = {}
    starts = {s.partition(" ")[0] for s in wanted}  # only join words where a wanted run starts
    for doc in documents:
        if doc.id in seen:
            found[doc.id] = doc
        if not wanted:
            continue
        at = to_micros(doc.timestamp)
        words = _words(f"{doc.title} {doc.text}")
        for i in range(len(words) - n + 1):
            if words[i] not in starts:
                continue
            s = " ".join(words[i : i + n])
            if s in wanted and (s not in earliest or at < earliest[s][0]):
                earliest[s] = (at, doc.id)
    return found, earliest


def _shingles_of(texts: Iterable[str], n: int) -> set[str]:
    return set().union(*(_shingles(t, n) for t in texts))


def _novel(rec: StepRecord, dataset: Dataset | None, n: int) -> set[str]:
    """Runs of ``n`` words the agent wrote but was not given."""
    return _shingles_of(_outputs(rec), n) - _shingles_of(_inputs(rec, dataset), n)


def _late_runs(
    rec: StepRecord, dataset: Dataset | None, n: int, earliest: Mapping[str, tuple[int, str]]
) -> list[tuple[str, str]]:
    """(run, document) of each run of ``_novel`` found first in a document dated at or after
    the step's cutoff: the runs the agent wrote found so, less those it was given (the inputs'
    runs made only for a step with such a run, which few steps have)."""
    cutoff = to_micros(rec.cutoff)
    late = {
        s
        for s in _shingles_of(_outputs(rec), n)
        if (hit := earliest.get(s)) is not None and hit[0] >= cutoff
    }
    if late:
        late -= _shingles_of(_inputs(rec, dataset), n)
    return [(s, earliest[s][1]) for s in sorted(late)]


def _check_documents(
    out: _Collector,
    steps: Iterable[StepRecord],
    docs: Mapping[str, Document],
    dataset: Dataset | None,
    n: int,
    earliest: Mapping[str, tuple[int, str]],
) -> None:
    for i, rec in enumerate(steps):
        for doc_id in sorted(_seen(rec)):
            doc = docs.get(doc_id)
            if doc is None:
                out.add(i, rec, "unknown_document", f"{doc_id} is not in the corpus")
                continue
            if not is_visible(doc.timestamp, rec.cutoff):
                shown = f"{doc.timestamp:%Y-%m-%d %H:%M}"
                out.add(i, rec, "document_after_cutoff", f"{doc_id} dated {shown}")
            reason = screen_document(doc)
            if reason is not None:
                out.add(i, rec, "flagged_document", f"{doc_id} ({reason}): {doc.title[:60]!r}")
        runs = _late_runs(rec, dataset, n, earliest) if earliest else []
        if runs:
            sources = sorted({doc_id for _, doc_id in runs})
            named = ", ".join(sources[:3]) + (
                f" and {len(sources) - 3} more" if len(sources) > 3 else ""
            )
            detail = (
                f"{len(runs)} runs of {len(runs[0][0].split())} words found only in documents "
                f"dated at or after the cutoff ({named}), such as {runs[0][0]!r}"
            )
            out.add(i, rec, "post_cutoff_text", detail)


def audit_run(
    log: StepColumns,
    *,
    documents: Iterable[Document] | None = None,
    dataset: Dataset | None = None,
    examples: int = EXAMPLES,
) -> RunAudit:
    """Audit ``log`` (each pass streams its records); ``documents`` is the corpus its agents
    searched (read once, streamed) and ``dataset`` the one it ran on (for post-cutoff prices and
    the question's own wording)."""
    if examples < 0:
        raise ValueError(f"audit_run: examples must be at least 0, not {examples}")
    out = _Collector(examples)
    checks: list[Check] = ["resolved_label", "post_cutoff_price", "document_after_cutoff"]
    seen: set[str] = set()
    wanted: set[str] = set()  # text agents wrote but were not given, of every step
    n_steps = outputs = texts = 0
    patterns: dict[str, list[re.Pattern[str]]] = {}
    for i, rec in enumerate(log.stream()):
        n_steps += 1
        seen |= _seen(rec)
        outputs += len(_outputs(rec))
        if documents is not None:  # only the corpus can tell where a run of words came from
            wanted |= _novel(rec, dataset, SHINGLE)
        else:  # no corpus to scan first: every check in this one pass (a step's findings together)
            _check_step_shown_dates(out, i, rec)
            texts += _check_step_texts(out, i, rec, dataset, None, patterns)
    docs: dict[str, Document] | None = None
    if documents is not None:
        checks += ["unknown_document", "flagged_document", "post_cutoff_text"]
        docs, earliest = _scan_corpus(documents, seen, wanted, SHINGLE)
        del wanted  # the corpus scan keeps the runs it found
        _check_documents(out, log.stream(), docs, dataset, SHINGLE, earliest)
        texts = sum(
            _check_step_texts(out, i, rec, dataset, docs, patterns)
            for i, rec in enumerate(log.stream())
        )
    return RunAudit(
        run_log=str(log.path),
        steps=n_steps,
        documents_seen=len(seen),
        texts_checked=texts,
        outputs_checked=outputs,
        checks=tuple(c for c in CHECKS if c in checks),
        findings=out.findings(),
        finding_counts=out.counted(),
        examples=examples,
    )
