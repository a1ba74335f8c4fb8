"""Test support that ships with the package: a scripted Messages API server on loopback."""

from .messages_server import Fault, MessagesServer, RecordedRequest, Reply, text, thinking, tool_use

__all__ = ["Fault", "MessagesServer", "RecordedRequest", "Reply", "text", "thinking", "tool_use"]
