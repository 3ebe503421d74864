"""Fixtures of the runner tests: a scripted provider on loopback, shared models forgotten."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from scripted_provider import ProviderState, start_provider

from pastcast.agents import clear_models


@pytest.fixture
def provider() -> Iterator[ProviderState]:
    state, server = start_provider()
    yield state
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def _forget_models() -> Iterator[None]:
    yield
    clear_models()  # models are shared per spec within a process; each test has its own server
