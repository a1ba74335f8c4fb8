"""Fixtures of the Messages server tests: a scripted ``server`` (no handler error leaked
once it closed) and an anthropic ``client`` on it. ``test_chat_completions_server.py``
defines its own ``server`` and ``client``, on the Chat Completions server."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import pytest

from jupyter_agent.testing import MessagesServer


@pytest.fixture
def server() -> Iterator[MessagesServer]:
    with MessagesServer() as server:
        yield server
    assert server.errors == []


@pytest.fixture
def client(server: MessagesServer) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=server.url, api_key="test-key") as client:
        yield client
