"""A source allow-list for corpus builds: keep only documents from named sources (as Hindcast
builds its archive from a fixed set of subreddits). How names match ``Document.source`` and what
the report says are in docs/corpus.md ("A source allow-list"); names that matched nothing are
reported, since a typo would otherwise silently empty a community."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from pastcast.corpus.sources._registry import SourceRun
from pastcast.records import Document
from pastcast.textfiles import read_text_file


def source_matches(source: str, name: str) -> bool:
    """Whether a document's ``source`` is the allow-list entry ``name``: the whole source or its
    last part after a ``/`` or ``:``, case-insensitively."""
    s, n = source.lower(), name.strip().strip("/").lower()
    return bool(n) and (s == n or s.endswith("/" + n) or s.endswith(":" + n))


def read_allow_list(path: str | Path) -> tuple[str, ...]:
    """Source names from a text file: one a line; blank lines and ``#`` comments ignored."""
    p = Path(path)
    try:
        lines = read_text_file(p).splitlines()
    except OSError as exc:
        raise ValueError(f"{p}: cannot read ({exc.strerror or exc})") from None
    names = tuple(n for line in lines if (n := line.split("#", 1)[0].strip()))
    if not names:
        raise ValueError(f"{p}: no source names (one a line; # starts a comment)")
    return names


def allow_sources(run: SourceRun, names: Sequence[str]) -> SourceRun:
    """``run`` with only the documents of the sources ``names``; its report says how many
    documents were left out and which names matched none."""
    wanted = tuple(dict.fromkeys(n.strip() for n in names if n.strip()))
    hits: Counter[str] = Counter()
    removed = Counter[str]()

    def kept() -> Iterator[Document]:
        for doc in run.documents:
            name = next((n for n in wanted if source_matches(doc.source, n)), None)
            if name is None:
                removed[doc.source or "(no source)"] += 1
                continue
            hits[name] += 1
            yield doc

    def lines() -> list[str]:
        out = run.report_lines()
        out.append(
            f"source allow-list ({len(wanted)} names): kept {sum(hits.values())} documents, "
            f"removed {sum(removed.values())} from other sources"
            + (
                " (most: " + ", ".join(f"{s} {k}" for s, k in removed.most_common(3)) + ")"
                if removed
                else ""
            )
        )
        unused = [n for n in wanted if not hits[n]]
        if unused:
            out.append("source allow-list: no document from: " + ", ".join(unused))
        return out

    return replace(run, documents=kept(), report_lines=lines)
