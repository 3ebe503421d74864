"""Fixtures of the arena tests: one EVM deployment per test module (skipped with a reason where
the arena extra is absent)."""

from __future__ import annotations

import pytest
from arena_helpers import needs_evm


@pytest.fixture(scope="module")
def evm() -> object:
    needs_evm()
    from pastcast.arena import EvmArena

    return EvmArena()
