"""The request body sent to Claude, encoded once per turn, and the SDK's own stream.

Invariant: the body holds exactly what ``messages.create()`` would send (JSON as the SDK
writes it, a lone surrogate sent as U+FFFD), but each turn of a history (``ApiTurn``) and a
run's tools (``ApiTools``) is encoded only the first time it is sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..messages import ApiTools, ApiTurn, encodable
from ._anthropic_stream import EventStream, sdk_events
from ._base import ModelRequest

CACHE = {"type": "ephemeral"}
"""A prompt-caching breakpoint."""

# messages.create() walks and copies the whole request, then encodes it, at every step:
# the cost grows with the history, which is re-sent each time. And it builds a typed object
# for every event it streams back. Our own client posts the body we encode, each turn of the
# history (ApiTurn) and a run's tools (ApiTools) encoded once, and reads the events as the
# JSON they are. The SDK still does the rest: authentication, headers, retries of failed
# requests, status errors.


async def open_sdk_stream(
    client: Any, request: ModelRequest, params: dict[str, Any]
) -> EventStream:
    try:
        stream = await client.messages.create(**params, stream=True)
    except UnicodeEncodeError:  # a lone surrogate somewhere: sent as U+FFFD
        params = json.loads(encodable(_encode(params)))
        stream = await client.messages.create(**params, stream=True)
    return EventStream(sdk_events(stream), stream.close)


def _jsonable(value: Any) -> Any:
    if hasattr(value, "model_dump"):  # an SDK or pydantic object among the messages
        return value.model_dump(mode="json", exclude_none=True)
    if hasattr(value, "to_api"):  # one of our content blocks
        return value.to_api()
    raise TypeError(f"a {type(value).__name__} cannot be sent to the model")


_encode = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_jsonable
).encode
"""JSON as the SDK writes it."""


def _encoded_turn(turn: dict[str, Any]) -> str:
    if type(turn) is ApiTurn:
        try:
            return turn.encoded
        except AttributeError:
            encoded = turn.encoded = _encode(turn)
            return encoded
    return _encode(turn)


def _encoded_tools(sent: list[dict[str, Any]], given: Sequence[dict[str, Any]]) -> str:
    """``sent`` (``given`` with a cache breakpoint, or not), encoded once per ApiTools."""
    if type(given) is not ApiTools:
        return _encode(sent)
    marked = "cache_control" in sent[-1]
    kept: tuple[bool, str] | None = getattr(given, "encoded", None)
    if kept is None or kept[0] != marked:
        kept = given.encoded = (marked, _encode(sent))
    return kept[1]


def request_body(fields: dict[str, Any], given_tools: Sequence[dict[str, Any]]) -> bytes:
    """The request with ``fields``, with each turn of a history (ApiTurn), and the tools
    if they were given as ApiTools, encoded only the first time they are sent."""
    rest = {key: value for key, value in fields.items() if key not in ("messages", "tools")}
    turns = ",".join(map(_encoded_turn, fields["messages"]))
    tools = ""
    if "tools" in fields:
        tools = f',"tools":{_encoded_tools(fields["tools"], given_tools)}'
    body = f'{{"messages":[{turns}]{tools},{_encode(rest)[1:]}'
    try:
        return body.encode()
    except UnicodeEncodeError:  # a lone surrogate somewhere: sent as U+FFFD
        return encodable(body).encode()


def with_breakpoint_on_last(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with a cache breakpoint on the last block of the newest one."""
    last = messages[-1]
    content = last["content"]
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    if not content:
        return messages
    marked = [*content[:-1], {**content[-1], "cache_control": CACHE}]
    return [*messages[:-1], {**last, "content": marked}]
