"""Serving a web app (the dashboard, the arena's relayer) on an address checked before it starts.

The listening socket is bound here, before the server runs, and handed to it: a host that does
not resolve or a port that is taken or not allowed is one ``ValueError`` line, not the server's
own log lines and exit status, and nothing else (a ledger, an index) is made first.
"""

from __future__ import annotations

import socket
from typing import Any

__all__ = ["listen", "serve_app"]


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket listening on ``host``:``port``; ``ValueError`` (one line) where it cannot."""
    shown = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError, ValueError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        raise ValueError(f"cannot listen on {shown}: the host does not resolve ({why})") from None
    family, kind, proto, _, address = found[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ValueError(f"cannot listen on {shown}: {exc.strerror or exc}") from None
    return sock


def serve_app(app: Any, sock: socket.socket, log_level: str = "warning") -> None:
    """Serve the ASGI ``app`` on ``sock`` (from ``listen``) until interrupted."""
    import uvicorn

    config = uvicorn.Config(app, log_level=log_level)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
