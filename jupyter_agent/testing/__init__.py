"""Test support that ships with the package: scripted Messages API and Chat Completions
servers on loopback, played from the same script."""

from ._chat_wire import ChatStyle
from ._script import Fault, RecordedRequest, Reply, text, thinking, tool_use
from .chat_completions_server import ChatCompletionsServer
from .messages_server import MessagesServer

__all__ = [
    "ChatCompletionsServer",
    "ChatStyle",
    "Fault",
    "MessagesServer",
    "RecordedRequest",
    "Reply",
    "text",
    "thinking",
    "tool_use",
]
