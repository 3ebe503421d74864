"""Stands in for ``python -m llama_cpp.server`` (installed as ``llama_cpp/server/__main__.py`` on
a test's PYTHONPATH): the same options, ``GET /v1/models``, and chat completions answering a
uniform forecast over the question's outcomes after ``$FAKE_LLAMA_DELAY`` seconds. It writes its
pid into the folder ``$FAKE_LLAMA_PIDS``, so a test can tell whether it outlived its run."""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def _labels(text: str) -> list[str]:
    found = re.search(r"Possible outcomes \(exactly one will occur\):\n((?:- .*\n?)+)", text)
    if not found:
        return ["Yes", "No"]
    return [ln[2:].strip() for ln in found.group(1).splitlines() if ln.startswith("- ")]


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    user = next((m["content"] for m in body.get("messages", []) if m.get("role") == "user"), "")
    labels = _labels(user if isinstance(user, str) else "")
    answer = json.dumps({label: 1 / len(labels) for label in labels})
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "local",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": f"```json\n{answer}\n```"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self._send({"object": "list", "data": [{"id": "local", "object": "model"}]})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        time.sleep(float(os.environ.get("FAKE_LLAMA_DELAY", "0")))
        self._send(_reply(body))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    args, _ = parser.parse_known_args()
    pids = os.environ.get("FAKE_LLAMA_PIDS")
    if pids:
        (Path(pids) / str(os.getpid())).touch()
    ThreadingHTTPServer((args.host, args.port), _Handler).serve_forever()


if __name__ == "__main__":
    main()
