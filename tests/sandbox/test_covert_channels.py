"""Two sandboxes running at once try to pass 20 values to each other through the kernel state
they share (task counts, per-user limits, locks and watches on the read-only files both see,
scratch space): none arrives. The channels that stay open (timing) are measured by
``benchmarks/sandbox_channels.py``; docs/isolation.md gives their bandwidth and the runner's
rule against them."""

from __future__ import annotations

import os

import pytest
from _attack import needs_sandbox, new_token, tasks_named
from _channels import CHANNELS, Channel, exchange, payload

pytestmark = needs_sandbox

_NEEDS_ROOT = {"per_user_task_limit"}  # a caller that is not root runs every sandbox as itself


@pytest.mark.parametrize("channel", CHANNELS, ids=[c.name for c in CHANNELS])
def test_no_value_crosses_between_concurrent_sandboxes(channel: Channel) -> None:
    if channel.name in _NEEDS_ROOT and os.getuid() != 0:
        pytest.skip("only a root caller gives each sandbox a user of its own")
    values = payload()
    tokens = (new_token(), new_token())
    got = exchange(channel, values, tokens)
    assert got.sender.stdout.strip() == "sent", got.sender
    assert got.receiver.exit_code == 0 and len(got.decoded) == len(values), got.receiver
    matched = sum(d == v for d, v in zip(got.decoded, values, strict=True))
    assert matched == 0, f"{matched}/20 values crossed: sent {values}, read {got.readings}"
    assert not tasks_named(tokens[0]) and not tasks_named(tokens[1])
