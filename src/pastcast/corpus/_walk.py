"""Walking reply links (``parent_id``) under a cutoff, the same way for every backend."""

from __future__ import annotations

from collections.abc import Callable

from pastcast.corpus._protocol import DocumentNotVisible
from pastcast.records import Document

__all__ = ["MAX_DEPTH", "ancestors_of"]

MAX_DEPTH = 1000
"""The most ancestors listed: a guard against reply links that form a cycle in bad data."""


def ancestors_of(post: Callable[[str], Document], doc: Document) -> list[Document]:
    """The documents ``doc`` replies to, from the thread's root down to its direct parent.

    ``post`` reads a document under the cutoff. The walk stops at a parent that is not visible
    (or unknown), so nothing past the cutoff is listed and nothing tells which it was.
    """
    chain: list[Document] = []
    seen = {doc.id}
    parent = doc.parent_id
    while parent and parent not in seen and len(chain) < MAX_DEPTH:
        try:
            found = post(parent)
        except DocumentNotVisible:
            break
        chain.append(found)
        seen.add(parent)
        parent = found.parent_id
    chain.reverse()
    return chain
