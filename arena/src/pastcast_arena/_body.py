"""A request body bounded before it is read (an ASGI middleware in front of the relayer): refused
on its declared length, or as soon as it passes the bound, and refused unless JSON within
``safejson``'s limits (FastAPI's decoder recurses on the C stack: a deeply nested body would
crash the server); otherwise handed on as if unread."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from pastcast import safejson

__all__ = ["BoundedJsonBody"]

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]


class BoundedJsonBody:
    """Refuse (413) a body over ``limit`` bytes, declared or sent, and (400) one that is not JSON
    or declares a malformed length; pass everything else on to ``app``."""

    def __init__(self, app: App, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = [v for k, v in scope.get("headers", ()) if k.lower() == b"content-length"]
        if declared:
            text = declared[0].decode("latin-1").strip()
            if len(declared) > 1 or not text.isdigit():
                await _refuse(scope, receive, send, 400, "body: malformed Content-Length")
                return
            if int(text) > self.limit:
                await _refuse(scope, receive, send, 413, f"body over {self.limit} bytes")
                return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            if len(body) > self.limit:
                await _refuse(scope, receive, send, 413, f"body over {self.limit} bytes")
                return
            if not message.get("more_body", False):
                break
        if body:
            try:
                safejson.loads(bytes(body))
            except ValueError as exc:
                await _refuse(scope, receive, send, 400, f"body: not JSON ({exc})")
                return
        await self.app(scope, _replay(bytes(body), receive), send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the body already read, then waits as the original does."""
    given = False

    async def again() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return again


async def _refuse(
    scope: MutableMapping[str, Any], receive: Receive, send: Send, status: int, detail: str
) -> None:
    from starlette.responses import JSONResponse

    headers = {"Connection": "close"}  # what is left of the body is never read
    await JSONResponse({"detail": detail}, status, headers=headers)(scope, receive, send)
