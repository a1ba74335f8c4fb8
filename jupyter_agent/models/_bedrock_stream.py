"""Reading a reply's stream from Amazon Bedrock: the Messages API's events, framed in
AWS's binary event-stream encoding.

Each frame is a message with headers and a payload; botocore (the ``bedrock`` extra)
splits the bytes into messages and checks their CRCs. An ``event`` of type ``chunk``
carries one Messages API event as base64 JSON (``{"bytes": "…"}``); an ``exception``
(or ``error``) message is Bedrock's error in the middle of a stream, given here as the
API's own ``error`` event, so :class:`~jupyter_agent.models._anthropic_stream.ReplyBuilder`
raises it and the model retries what is worth retrying.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncGenerator
from typing import Any


async def bedrock_events(response: Any) -> AsyncGenerator[dict[str, Any], None]:
    """The Messages API events of a Bedrock response stream, as their JSON dicts."""
    from botocore.eventstream import EventStreamBuffer

    frames = EventStreamBuffer()
    loads = json.loads
    async for chunk in response.aiter_bytes():
        frames.add_data(chunk)
        for message in frames:
            headers = message.headers
            kind = headers.get(":message-type")
            if kind == "event":
                if headers.get(":event-type") == "chunk":
                    yield loads(base64.b64decode(loads(message.payload)["bytes"]))
                continue
            yield _error_event(headers, message.payload)


def _error_event(headers: dict[str, Any], payload: bytes) -> dict[str, Any]:
    kind = headers.get(":exception-type") or headers.get(":error-code") or "bedrock_error"
    try:
        said = json.loads(payload)
    except ValueError:
        said = None
    if isinstance(said, dict):
        message = said.get("message") or said.get("Message") or ""
    else:
        message = headers.get(":error-message") or payload.decode(errors="replace")
    return {"type": "error", "error": {"type": str(kind), "message": str(message)}}
