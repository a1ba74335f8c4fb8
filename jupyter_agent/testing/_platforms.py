"""Where Claude is served besides the Messages API, for
:class:`~jupyter_agent.testing.MessagesServer`: Amazon Bedrock and Google Vertex AI.

One job: what differs on those platforms, as pure functions — which route a request
took (the model moves into the URL there: :func:`route`), how Bedrock frames a stream
(the AWS event-stream binary encoding, :func:`bedrock_event` and
:func:`bedrock_exception`), and how each platform words an HTTP error
(:func:`error_response`). The events inside are the Messages API's own (``_wire.py``).

The AWS event-stream framing, per message: a prelude of total length and headers
length (big-endian uint32 each), the prelude's CRC32, the headers (name length, name,
value type 7 = string, value length, value), the payload, and the CRC32 of all of it.
"""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from ._wire import error_body

__all__ = [
    "BEDROCK_STREAM_TYPE",
    "Route",
    "bedrock_event",
    "bedrock_exception",
    "error_response",
    "route",
]

Platform = Literal["anthropic", "bedrock", "vertex"]

BEDROCK_STREAM_TYPE = "application/vnd.amazon.eventstream"

_BEDROCK = re.compile(r"/model/(?P<model>[^/]+)/(?P<action>invoke-with-response-stream|invoke)")
_VERTEX = re.compile(
    r"/v1/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)"
    r"/publishers/anthropic/models/(?P<model>[^/:]+):(?P<action>streamRawPredict|rawPredict)"
)


@dataclass(frozen=True)
class Route:
    """What a request asked for: on which platform, of which model, streamed or not."""

    platform: Platform
    model: str | None
    stream: bool
    project: str | None = None
    region: str | None = None


def route(method: str, path: str, body: dict[str, Any]) -> Route | None:
    """The route of a request, or None for one this server does not serve."""
    if method != "POST":
        return None
    where = urlsplit(path).path
    if where == "/v1/messages":
        model = body.get("model")
        return Route(
            "anthropic", model if isinstance(model, str) else None, bool(body.get("stream"))
        )
    if found := _BEDROCK.fullmatch(where):
        stream = found["action"] == "invoke-with-response-stream"
        return Route("bedrock", unquote(found["model"]), stream)
    if found := _VERTEX.fullmatch(where):
        stream = found["action"] == "streamRawPredict"
        return Route(
            "vertex",
            unquote(found["model"]),
            stream,
            project=unquote(found["project"]),
            region=unquote(found["region"]),
        )
    return None


# --- Bedrock's stream framing ----------------------------------------------------------------


def _frame(headers: dict[str, str], payload: bytes) -> bytes:
    encoded = b"".join(
        struct.pack(">B", len(name)) + name + b"\x07" + struct.pack(">H", len(value)) + value
        for name, value in ((n.encode(), v.encode()) for n, v in headers.items())
    )
    prelude = struct.pack(">II", 12 + len(encoded) + len(payload) + 4, len(encoded))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + encoded + payload
    return message + struct.pack(">I", zlib.crc32(message))


def bedrock_event(data: dict[str, Any]) -> bytes:
    """One Messages API stream event as Bedrock sends it: a ``chunk`` whose payload
    carries the event's JSON, base64-encoded."""
    payload = json.dumps({"bytes": base64.b64encode(json.dumps(data).encode()).decode()})
    headers = {
        ":event-type": "chunk",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return _frame(headers, payload.encode())


# The stream exceptions Bedrock sends, for the Messages API's error types.
_BEDROCK_STREAM_EXCEPTIONS = {
    "overloaded_error": "serviceUnavailableException",
    "rate_limit_error": "throttlingException",
    "api_error": "internalServerException",
    "invalid_request_error": "validationException",
    "timeout_error": "modelTimeoutException",
}


def bedrock_exception(error_type: str, message: str) -> bytes:
    """An error in the middle of a Bedrock stream: an ``exception`` message. A Messages
    API error type is sent as Bedrock's name for it; any other name as it is."""
    kind = _BEDROCK_STREAM_EXCEPTIONS.get(error_type, error_type)
    headers = {
        ":exception-type": kind,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return _frame(headers, json.dumps({"message": message}).encode())


# --- errors as each platform words them ------------------------------------------------------

_BEDROCK_ERRORS = {
    400: "ValidationException",
    401: "UnrecognizedClientException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    424: "ModelErrorException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
_GOOGLE_STATUS = {401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND"}


def error_response(
    platform: Platform, status: int, kind: str, message: str
) -> tuple[dict[str, Any], dict[str, str]]:
    """The JSON body and extra headers of an HTTP error on ``platform``. Bedrock answers
    ``{"message": …}`` and names the exception in a header; Google's front end answers
    401, 403 and 404 in Google's error format; the rest as the Messages API does."""
    if platform == "bedrock":
        # a Fault that names one of Bedrock's exceptions gets it; others, the status's own
        name = kind if kind.endswith("Exception") else _BEDROCK_ERRORS.get(status)
        name = name or "InternalServerException"
        return {"message": message}, {"x-amzn-errortype": f"{name}:http://internal.amazon.com/"}
    if platform == "vertex" and status in _GOOGLE_STATUS:
        return {"error": {"code": status, "message": message, "status": _GOOGLE_STATUS[status]}}, {}
    return error_body(kind, message), {}
