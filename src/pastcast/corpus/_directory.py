"""An index directory opened as a corpus: the embedded index in it, which is the ``bm25`` backend
(registered in ``_open``). The dense backends open the same index under their vectors."""

from __future__ import annotations

from pathlib import Path

from pastcast.corpus.embedded import EmbeddedIndex
from pastcast.errors import FieldError

__all__ = ["open_index"]


def open_index(spec: str) -> EmbeddedIndex:
    """The embedded index in the directory ``spec`` (the ``bm25`` backend: statistics as of
    the cutoff); ``FieldError`` in one line when there is none or it is damaged."""
    if not (Path(spec) / "manifest.json").is_file():
        raise FieldError(
            "",
            f"{spec}: not an index directory (no manifest.json; build one with "
            "'pastcast corpus build'), nor a database URL (postgresql://...)",
        )
    try:
        return EmbeddedIndex.open(spec)
    except (OSError, ValueError) as exc:
        message = str(exc)
        raise FieldError("", message if spec in message else f"{spec}: {message}") from None
    except (KeyError, TypeError, IndexError) as exc:  # a manifest or array that was damaged
        raise FieldError("", f"{spec}: a damaged index ({type(exc).__name__}: {exc})") from None
