"""An external agent that sends its tool server what no client should: a line nested 100,000
deep, a request whose id is an object, bytes that are not UTF-8, a number of 10,000 digits and a
line of 17 MiB; it notes the error code of each answer and then answers the question.

Usage: python3 hostile_agent.py  (standard library only; one message per line on stdin/stdout)
"""

import json
import sys

LINES = [
    b"[" * 100_000,
    b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}',
    b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"x": "\xff\xfe"}}',
    b'{"jsonrpc": "2.0", "id": 4, "method": "ping", "params": {"n": ' + b"9" * 10_000 + b"}}",
    b"x" * (17 << 20),
]


def send(line):
    sys.stdout.buffer.write(line + b"\n")
    sys.stdout.buffer.flush()
    return json.loads(sys.stdin.readline())


def main():
    codes = [str(send(line)["error"]["code"]) for line in LINES]
    ping = send(b'{"jsonrpc": "2.0", "id": 9, "method": "ping"}')
    episode = send(b'{"jsonrpc": "2.0", "id": 10, "method": "pastcast/episode"}')["result"]
    labels = episode["question"]["labels"]
    forecast = {
        "probs": {label: 1 / len(labels) for label in labels},
        "rationale": "codes " + " ".join(codes) + f"; ping {ping['result']}",
    }
    message = {"jsonrpc": "2.0", "id": 11, "method": "pastcast/forecast"}
    send(json.dumps({**message, "params": {"forecast": forecast}}).encode())


main()
