"""A loopback HTTP server for tests: serves a folder (with Range support) or scripted routes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

Route = Callable[[str, dict[str, list[str]]], tuple[int, dict[str, str], bytes]]


@contextmanager
def serve(root: Path | None = None, route: Route | None = None) -> Iterator[str]:
    """Yield the base URL of a server on 127.0.0.1; ``route`` answers (path, query) requests."""
    log: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            log.append(self.path)
            if route is not None:
                status, headers, body = route(parts.path, parse_qs(parts.query))
            else:
                assert root is not None
                path = (root / parts.path.lstrip("/")).resolve()
                if not path.is_file() or root.resolve() not in path.parents:
                    status, headers, body = 404, {}, b"not found"
                else:
                    data = path.read_bytes()
                    rng = self.headers.get("Range")
                    if rng and rng.startswith("bytes="):
                        start = int(rng[6:].split("-")[0])
                        if start >= len(data):
                            status, headers, body = 416, {}, b""
                        else:
                            status, body = 206, data[start:]
                            headers = {
                                "Content-Range": f"bytes {start}-{len(data) - 1}/{len(data)}"
                            }
                    else:
                        status, headers, body = 200, {}, data
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        serve.log = log  # type: ignore[attr-defined]
        yield url
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
