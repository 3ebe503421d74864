"""Database URLs, for every backend opened by URL: without their password (for messages and run
logs), and with pastcast's own ``schema`` parameter taken out before the URL reaches the
server."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit, urlunsplit

from pastcast.retrying import redact_url  # every client's: a URL without its password

__all__ = ["one_line", "redact_url", "split_schema"]


def split_schema(url: str) -> tuple[str, str | None]:
    """``url`` without a ``schema=NAME`` parameter, and NAME (None without one): the schema is
    pastcast's, not the server's, so a single URL can name a corpus inside a database."""
    parts = urlsplit(url)
    pieces = [p for p in parts.query.split("&") if p]
    schemas = [unquote(p.partition("=")[2]) for p in pieces if _key(p) == "schema"]
    if len(schemas) > 1:
        raise ValueError(f"{redact_url(url)}: the schema parameter is given twice")
    # the other parameters are passed on as written (libpq decodes them itself)
    rest = "&".join(p for p in pieces if _key(p) != "schema")
    return urlunsplit((*parts[:3], rest, parts.fragment)), (schemas[0] if schemas else None)


def one_line(exc: BaseException) -> str:
    """A server's message on one line (libpq adds indented hints on lines of their own)."""
    return "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())


def _key(param: str) -> str:
    return unquote(param.partition("=")[0])
