"""Conformance of the thread look-ups of a ``ThreadedBackend``, each against a reference
computed from the documents themselves (docs/corpus.md, "Conformance checks")."""

from __future__ import annotations

import bisect
import random
from collections.abc import Sequence
from datetime import datetime
from functools import partial

from pastcast.corpus._conformance import (
    _UNKNOWN_ID,
    _cutoffs,
    _refusal,
    _Report,
    _sorted,
    _Violations,
)
from pastcast.corpus._protocol import MAX_DEPTH, DocumentNotVisible, ThreadedBackend
from pastcast.cutoff import as_utc, is_visible
from pastcast.records import Document


class ThreadReport(_Report):
    cutoffs: int
    threads: int
    authors: int
    posts: int
    returned: int
    """Documents returned by ``thread``, ``author_posts``, ``ancestors`` and ``descendants``,
    each checked."""
    walks: int = 0
    """Visible documents whose ancestors and descendants were compared."""


def _ancestors(doc: Document, by_id: dict[str, Document], cutoff: datetime) -> list[Document]:
    """The reference walk up: visible parents only, each once, root first."""
    chain: list[Document] = []
    seen, parent = {doc.id}, doc.parent_id
    while parent and parent not in seen and len(chain) < MAX_DEPTH:
        found = by_id.get(parent)
        if found is None or not is_visible(found.timestamp, cutoff):
            break
        chain.append(found)
        seen.add(parent)
        parent = found.parent_id
    return chain[::-1]


def _descendants(
    doc: Document, replies: dict[str, list[Document]], cutoff: datetime
) -> list[Document]:
    """The reference walk down: visible replies of visible documents, in (timestamp, id) order."""
    seen, frontier, found = {doc.id}, [doc.id], []
    while frontier:
        nxt = []
        for key in frontier:
            for reply in replies.get(key, []):
                if reply.id not in seen and is_visible(reply.timestamp, cutoff):
                    seen.add(reply.id)
                    found.append(reply)
                    nxt.append(reply.id)
        frontier = nxt
    return sorted(found, key=lambda d: (as_utc(d.timestamp), d.id))


def check_thread_lookups(
    backend: ThreadedBackend,
    documents: Sequence[Document],
    *,
    n_probes: int = 300,
    seed: int = 0,
    raise_on_violation: bool = False,
) -> ThreadReport:
    """Probe the thread and author look-ups of ``backend`` (which holds exactly ``documents``)."""
    rng = random.Random(seed)
    docs = _sorted(documents)
    stamps = [as_utc(d.timestamp) for d in docs]
    out = _Violations()
    threads: dict[str, list[Document]] = {}
    authors: dict[str, list[Document]] = {}
    replies: dict[str, list[Document]] = {}
    for doc in docs:
        if doc.thread_id:
            threads.setdefault(doc.thread_id, []).append(doc)
        if doc.author:
            authors.setdefault(doc.author, []).append(doc)
        if doc.parent_id:
            replies.setdefault(doc.parent_id, []).append(doc)
    if backend.has_threads() != bool(threads):
        out.add(f"has_threads() = {not threads}, expected {bool(threads)}")
    thread_keys, author_keys = sorted(threads), sorted(authors)
    n_threads = n_authors = n_posts = returned = walks = 0
    by_id = {d.id: d for d in docs}

    def compare(what: str, got: list[Document], want: list[Document], cutoff: datetime) -> None:
        nonlocal returned
        returned += len(got)
        future = [d.id for d in got if not is_visible(d.timestamp, cutoff)]
        if future:
            out.add(f"{what}: future documents {future[:3]}")
        elif [d.id for d in got] != [d.id for d in want]:
            out.add(f"{what}: {[d.id for d in got][:5]}, expected {[d.id for d in want][:5]}")

    cutoffs = _cutoffs(docs, rng, n_probes)
    for cutoff in cutoffs:
        limit = rng.choice((1, 2, 5, 50))
        if thread_keys:
            key = thread_keys[rng.randrange(len(thread_keys))]
            want = [d for d in threads[key] if is_visible(d.timestamp, cutoff)][:limit]
            what = f"thread({key!r}, limit={limit}) at {cutoff}"
            n_threads += 1
            if want:
                try:
                    compare(what, backend.thread(key, as_of=cutoff, limit=limit), want, cutoff)
                except DocumentNotVisible:
                    out.add(f"{what}: refused, but {len(want)} documents are visible")
            else:
                _refusal(partial(backend.thread, as_of=cutoff, limit=limit), key, what, out)
        if author_keys:
            key = author_keys[rng.randrange(len(author_keys))]
            visible = [d for d in authors[key] if is_visible(d.timestamp, cutoff)]
            what = f"author_posts({key!r}, limit={limit}) at {cutoff}"
            n_authors += 1
            got = backend.author_posts(key, as_of=cutoff, limit=limit)
            compare(what, got, visible[-limit:], cutoff)
            if backend.author_posts(_UNKNOWN_ID, as_of=cutoff, limit=limit):
                out.add(f"author_posts of an unknown author at {cutoff} returned documents")
        n = bisect.bisect_left(stamps, cutoff)
        if n < len(docs):
            future = docs[rng.randrange(n, len(docs))]
            n_posts += 1
            call = partial(backend.post, as_of=cutoff)
            _refusal(call, future.id, f"post({future.id!r}) at {cutoff}", out)
            up_call = partial(backend.ancestors, as_of=cutoff)
            _refusal(up_call, future.id, f"ancestors({future.id!r}) at {cutoff}", out)
            down_call = partial(backend.descendants, as_of=cutoff, limit=limit)
            _refusal(down_call, future.id, f"descendants({future.id!r}) at {cutoff}", out)
        if n > 0:
            # documents with replies or a parent are the interesting ones: pick them often
            linked = [d for d in docs[:n] if d.parent_id or d.id in replies]
            doc = rng.choice(linked) if linked and rng.random() < 0.8 else docs[rng.randrange(n)]
            walks += 1
            up = _ancestors(doc, by_id, cutoff)
            down = _descendants(doc, replies, cutoff)[:limit]
            what = f"ancestors({doc.id!r}) at {cutoff}"
            try:
                compare(what, backend.ancestors(doc.id, as_of=cutoff), up, cutoff)
            except DocumentNotVisible:
                out.add(f"{what}: a visible document refused")
            what = f"descendants({doc.id!r}, limit={limit}) at {cutoff}"
            try:
                got = backend.descendants(doc.id, as_of=cutoff, limit=limit)
                compare(what, got, down, cutoff)
            except DocumentNotVisible:
                out.add(f"{what}: a visible document refused")
    return out.report(
        ThreadReport,
        raise_on_violation,
        cutoffs=len(cutoffs),
        threads=n_threads,
        authors=n_authors,
        posts=n_posts,
        returned=returned,
        walks=walks,
    )
