"""Database URLs, for every backend opened by URL: without their password (for messages and run
logs), and with pastcast's own ``schema`` parameter taken out before the URL reaches the
server."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = ["one_line", "redact_url", "split_schema"]


def redact_url(url: str) -> str:
    """The database URL without its password (in the user part or as a ``password`` parameter),
    for messages and run logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable database URL>"
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}@{host}"
    query = "&".join(p for p in parts.query.split("&") if _key(p) != "password")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


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
