"""An external agent with no pastcast import: the tool server's protocol by hand, over stdin and
stdout (JSON-RPC, one message per line). It researches with the tools it is offered, asks the
model if it has one, tries a few things it should not be able to do, and answers.

Usage: python3 plain_agent.py [PATH ...]  (paths it tries to read, to show it cannot)
"""

import json
import re
import sys

_next = [0]


def request(method, params=None):
    _next[0] += 1
    message = {"jsonrpc": "2.0", "id": _next[0], "method": method, "params": params or {}}
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
    while True:
        answer = json.loads(sys.stdin.readline())
        if answer.get("id") == _next[0]:
            return answer


def main():
    request(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "plain-agent", "version": "1"},
        },
    )
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    sys.stdout.flush()
    episode = request("pastcast/episode")["result"]
    labels = episode["question"]["labels"]
    notes = []
    tools = [t["name"] for t in request("tools/list")["result"]["tools"]]
    text = ""
    if "search" in tools:
        found = request(
            "tools/call",
            {"name": "search", "arguments": {"query": episode["question"]["title"], "top_k": 3}},
        )["result"]
        hits = json.loads(found["content"][0]["text"])
        notes.append(f"{len(hits)} hits")
        if hits:
            doc = request("tools/call", {"name": "read", "arguments": {"doc_id": hits[0]["id"]}})
            text = doc["result"]["content"][0]["text"]
    if episode["model"]:
        reply = request(
            "pastcast/chat",
            {"request": {"messages": [{"role": "user", "content": episode["prompt"]}]}},
        )
        notes.append("model: " + reply["result"]["content"][:40])
    for path in sys.argv[1:]:
        try:
            with open(path, "rb") as f:
                notes.append(f"read {path}: {len(f.read())} bytes")
        except OSError as exc:
            notes.append(f"cannot read {path}: {type(exc).__name__}")
    try:
        import socket

        socket.create_connection(("127.0.0.1", 9), timeout=1)
        notes.append("socket connected")
    except OSError as exc:
        notes.append(f"no socket: {exc.errno}")
    words = re.findall(r"\w+", text.lower())
    weights = {label: 1.0 + sum(w in words for w in label.lower().split()) for label in labels}
    total = sum(weights.values())
    forecast = {"probs": {k: v / total for k, v in weights.items()}, "rationale": "; ".join(notes)}
    request("pastcast/forecast", {"forecast": forecast})


if __name__ == "__main__":
    main()
