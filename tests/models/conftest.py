"""Fixtures for model tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fake_chat_server import FakeServer, start_fake_server


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    state, server = start_fake_server()
    yield state
    server.shutdown()
    server.server_close()
