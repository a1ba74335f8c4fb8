"""A conversation, a tool and a model on the loopback Chat Completions server, for the
OpenAI-compatible model tests (``test_openai_streaming.py``, ``test_openai_servers.py``)."""

from __future__ import annotations

from jupyter_agent.models import OpenAIModel
from jupyter_agent.testing import ChatCompletionsServer
from jupyter_agent.tools import tool

HI = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


@tool
def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def loopback_gpt(chat_server: ChatCompletionsServer) -> OpenAIModel:
    """``gpt-4o`` on the loopback server, with a key, retrying at once."""
    return OpenAIModel(
        "gpt-4o", api_key="test-key", base_url=chat_server.base_url, retry_delay=0.001
    )


def deltas(handle, kind: str = "text_delta") -> str:
    return "".join(e.text for e in handle.events_so_far if e.kind == kind)
