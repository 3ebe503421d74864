"""Fixtures of the arena tests: one EVM deployment per test module and chain: the in-process
py-evm chain, and a local anvil node over JSON-RPC (skipped with a reason where the arena extra
or anvil is absent), so every contract test runs on both."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from arena_helpers import needs_evm


@pytest.fixture(scope="module", params=["py-evm", "anvil"])
def evm(request: pytest.FixtureRequest) -> Iterator[object]:
    needs_evm()
    from pastcast_arena import EvmArena, local_node
    from pastcast_arena._contracts import find_foundry_tool

    if request.param == "py-evm":
        yield EvmArena()
        return
    if find_foundry_tool("anvil") is None:
        pytest.skip("anvil is missing (make test installs @foundry-rs/anvil from npm)")
    with local_node() as node:
        yield EvmArena.connect(node.url)
