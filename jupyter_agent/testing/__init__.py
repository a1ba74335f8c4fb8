"""Test support that ships with the package: a scripted Messages API server on loopback."""

from ._script import Fault, RecordedRequest, Reply, text, thinking, tool_use
from .messages_server import MessagesServer

__all__ = ["Fault", "MessagesServer", "RecordedRequest", "Reply", "text", "thinking", "tool_use"]
