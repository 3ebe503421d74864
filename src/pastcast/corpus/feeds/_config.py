"""The feeds file (``FEEDS.toml``): which feeds to fetch, and the limits of each fetch; one
``[[feed]]`` table per feed, shown in docs/corpus.md ("Live feeds"). A relative ``path`` or
``folder`` is relative to the feeds file's folder."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Self

from pydantic import Field, ValidationError, model_validator

from pastcast.records import Record
from pastcast.textfiles import read_text_file
from pastcast.validation import first_problem


class FeedConfig(Record):
    """One feed: exactly one of ``url``, ``path`` (an RSS/Atom file) or ``folder`` (a drop folder
    of JSONL document files)."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
    url: str | None = Field(default=None, pattern=r"^https?://\S+$")
    path: Path | None = None
    folder: Path | None = None
    source: str = ""
    timeout_s: float = Field(default=10.0, gt=0, le=300)
    max_bytes: int = Field(default=5_000_000, ge=1, le=1_000_000_000)
    retries: int = Field(default=2, ge=0, le=10)
    backoff_s: float = Field(default=1.0, ge=0, le=600)

    @model_validator(mode="after")
    def _one_location(self) -> Self:
        given = [n for n in ("url", "path", "folder") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(
                f"feed {self.name!r}: exactly one of url, path or folder "
                f"(got {', '.join(given) or 'none'})"
            )
        return self

    @property
    def location(self) -> str:
        return str(self.url or self.path or self.folder)


class FeedsFile(Record):
    feed: tuple[FeedConfig, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_names(self) -> Self:
        seen: set[str] = set()
        for feed in self.feed:
            if feed.name in seen:
                raise ValueError(f"feed name {feed.name!r} given twice")
            seen.add(feed.name)
        return self


def read_feeds_file(path: Path | str) -> FeedsFile:
    """The feeds of a TOML file, local paths resolved against its folder; ``ValueError`` in one
    line (``FILE: field feed[0].url: ...``)."""
    path = Path(path)
    try:
        data = tomllib.loads(read_text_file(path))  # a FIFO or a folder: refused, never waited on
    except OSError as exc:
        raise ValueError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: not TOML ({exc})") from None
    try:
        feeds = FeedsFile.model_validate(data)
    except ValidationError as exc:
        raise ValueError(first_problem(exc, str(path))) from None
    base = path.parent
    resolved = []
    for feed in feeds.feed:
        update = {
            name: base / value
            for name in ("path", "folder")
            if (value := getattr(feed, name)) is not None and not value.is_absolute()
        }
        resolved.append(feed.model_copy(update=update))
    return FeedsFile(feed=tuple(resolved))
