"""Episodes of one event at two cutoffs, run by an isolated agent with two workers, try to pass
20 values from the later cutoff to the earlier one through the kernel state sandboxes share
(the host's task count, locks on shared files, record locks, watches on shared files). The
runner never has isolated episodes at two cutoffs in flight, and the sandbox refuses those
interfaces besides: nothing arrives."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from _tiny import ListBackend, tiny_dataset, tiny_documents
from pastcast.agents import agent_spec
from pastcast.runlog import read_run_log
from pastcast.runner import RunConfig, run_benchmark

_spec = importlib.util.spec_from_file_location(
    "sandbox_channels", Path(__file__).resolve().parents[1] / "sandbox" / "_channels.py"
)
assert _spec is not None and _spec.loader is not None
channels = sys.modules["sandbox_channels"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(channels)

SLOT = 0.15
SLOTS = 22  # two calibration values (0, 15), then the 20 of the payload
USED = ("host_task_count", "locks_on_shared_files", "record_locks_on_shared_files")

_AGENT = """\
import ctypes, errno, fcntl, json, os, struct, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
threading.stack_size(65536)
FILES = [os.__file__, json.__file__, threading.__file__, ctypes.__file__]
VALUES = json.loads(sys.argv[1])
SENDER_FROM = sys.argv[2]  # cutoffs from this one on send, earlier ones receive
SLOT, SLOTS = {slot!r}, {slots!r}
def err(e):
    return errno.errorcode.get(e, str(e))
fds = [os.open(f, os.O_RDONLY) for f in FILES]
_n = [0]
def request(method, params=None):
    _n[0] += 1
    sys.stdout.write(json.dumps({{"jsonrpc": "2.0", "id": _n[0], "method": method,
                                  "params": params or {{}}}}) + "\\n")
    sys.stdout.flush()
    while True:
        answer = json.loads(sys.stdin.readline())
        if answer.get("id") == _n[0]:
            return answer
episode = request("pastcast/episode")["result"]
sending = episode["question"]["cutoff"] >= SENDER_FROM
{hold_threads}
{lock_files}
set_locks = set_state
{record_lock_files}
set_record_locks = set_state
{read_sysinfo}
read_sysinfo = read
{read_locks}
read_locks = read
{read_record_locks}
read_record_locks = read
def slot_now():
    return int(time.time() / SLOT)
started = time.time()
readings = []
end = slot_now() + SLOTS + 2
while slot_now() < end:
    k = slot_now()
    v = VALUES[k % SLOTS]
    if sending:
        hold(v)
        set_locks(v)
        set_record_locks(v)
    else:
        time.sleep(max(0.0, (k + 0.6) * SLOT - time.time()))
        got = []
        for read in (read_sysinfo, read_locks, read_record_locks):
            try:
                got.append(read())
            except OSError as e:
                got.append(err(e.errno))
        readings.append([k % SLOTS, got])
    time.sleep(max(0.0, (k + 1) * SLOT - time.time()))
hold(0)
window = [started, time.time()]
rationale = json.dumps({{"sending": sending, "window": window, "readings": readings}})
labels = episode["question"]["labels"]
forecast = {{"probs": {{l: 1.0 / len(labels) for l in labels}}, "rationale": rationale}}
request("pastcast/forecast", {{"forecast": forecast}})
"""


def _script() -> str:
    by_name = {c.name: c for c in channels.CHANNELS}
    return _AGENT.format(
        slot=SLOT,
        slots=SLOTS,
        hold_threads=by_name["host_task_count"].set_state.replace("set_state", "hold"),
        lock_files=by_name["locks_on_shared_files"].set_state,
        record_lock_files=by_name["record_locks_on_shared_files"].set_state,
        read_sysinfo=by_name["host_task_count"].read,
        read_locks=by_name["locks_on_shared_files"].read,
        read_record_locks=by_name["record_locks_on_shared_files"].read,
    )


def _decoded(readings: list[list[object]], values: list[int]) -> int:
    """How many payload values the receiver's readings give back, over every channel."""
    by_slot = {int(k): got for k, got in readings}  # type: ignore[call-overload]
    matched = 0
    calibrated = by_slot.get(1)
    for k, got in by_slot.items():
        if k < 2:
            continue
        sysinfo, locks, record_locks = got
        if isinstance(sysinfo, int) and calibrated and isinstance(calibrated[0], int):
            matched += 15 + round((sysinfo - calibrated[0]) / 16) == values[k]
        matched += locks == values[k]
        matched += record_locks == values[k]
    return matched


def test_isolated_episodes_at_two_cutoffs_pass_nothing(
    open_dir: Path, bindable_environment: None
) -> None:
    values = [*channels.CALIBRATION, *channels.payload(SLOTS - 2)]
    script = open_dir / "channel_agent.py"
    script.write_text(_script())
    script.chmod(0o644)
    dataset = tiny_dataset()
    cutoffs = sorted(s.cutoff for s in dataset.steps if s.event_id == "ev-rocket")
    spec = agent_spec(
        "external", command=["python3", str(script), json.dumps(values), cutoffs[1].isoformat()]
    )
    out = open_dir / "run.jsonl"
    config = RunConfig(agents=(spec,), max_events=1, workers=2)
    run_benchmark(dataset, ListBackend(tiny_documents()), config, out, progress=False)
    steps = list(read_run_log(out).steps)
    assert len(steps) == 2 and all(s.episode.error is None for s in steps), steps
    told = {s.step_index: json.loads(s.forecast.rationale or "") for s in steps}
    sender, receiver = told[1], told[0]
    assert sender["sending"] and not receiver["sending"]
    assert receiver["readings"], receiver
    assert _decoded(receiver["readings"], values) == 0, receiver["readings"]
    # The runner ran them one after the other; the sandbox refuses those interfaces besides.
    (s0, s1), (r0, r1) = sender["window"], receiver["window"]
    assert s1 <= r0 or r1 <= s0, (sender["window"], receiver["window"])
