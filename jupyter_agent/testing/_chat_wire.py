"""The Chat Completions wire format, for :class:`~jupyter_agent.testing.ChatCompletionsServer`.

One job: turn a scripted :class:`~jupyter_agent.testing.Reply` (the same script the
Messages API server takes: text, tool_use and thinking blocks, a stop reason in the
Messages API's words) into the chat-completion chunks an OpenAI-compatible server
streams for it, and an error into OpenAI's error body. Pure functions of the reply, the
request and the server's :class:`ChatStyle`: no I/O.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from typing import Any, Literal

from ._script import _MESSAGES, RecordedRequest, Reply

__all__ = ["ChatStyle", "chat_chunks", "chat_error_body"]

Chunk = dict[str, Any]

FINISH_REASONS = {
    "tool_use": "tool_calls",
    "end_turn": "stop",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "content_filter",
}


@dataclass
class ChatStyle:
    """How a server streams, where servers differ."""

    tool_calls: Literal["split", "whole", "repeat", "no_id"] = "split"
    """``split``: id and name in the first delta of a call, then its arguments in pieces
    (OpenAI); ``whole``: each call in one delta; ``repeat``: id and name again in every
    delta; ``no_id``: no id at all."""
    reasoning_field: str = "reasoning_content"
    """Where reasoning deltas go: ``reasoning_content`` (vLLM, DeepSeek) or ``reasoning``
    (OpenRouter, Ollama)."""
    usage: bool = True
    """Send a usage chunk when the request asks for one (some servers never do)."""


# OpenAI's error type, code and wording for what a script says in the Messages API's terms.
_OPENAI_ERRORS: dict[str, tuple[str, str | None, str]] = {
    "authentication_error": (
        "invalid_request_error",
        "invalid_api_key",
        "Incorrect API key provided: sk-...abcd.",
    ),
    "not_found_error": (
        "invalid_request_error",
        "model_not_found",
        "The model `{model}` does not exist or you do not have access to it.",
    ),
    "rate_limit_error": (
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for requests. Please try again in 1ms.",
    ),
    "api_error": ("server_error", None, "The server had an error while processing your request."),
    "overloaded_error": ("server_error", None, "The server is overloaded."),
    "invalid_request_error": ("invalid_request_error", None, "Invalid request."),
    "permission_error": ("invalid_request_error", None, "You are not allowed to do this."),
}


def chat_error_body(kind: str, message: str, model: str = "") -> dict[str, Any]:
    """OpenAI's error body for a scripted error (an error type of the Messages API, or
    any other string, which is then the error's ``code``)."""
    known = _OPENAI_ERRORS.get(kind)
    if known is None:
        error_type = (
            "insufficient_quota" if kind == "insufficient_quota" else "invalid_request_error"
        )
        error = {"message": message, "type": error_type, "param": None, "code": kind}
    else:
        error_type, code, default = known
        if not message or message == _MESSAGES.get(kind):  # the script left it to the API
            message = default.format(model=model)
        error = {"message": message, "type": error_type, "param": None, "code": code}
    return {"error": error}


def chat_chunks(reply: Reply, request: RecordedRequest, style: ChatStyle) -> list[Chunk | None]:
    """The chunks of a streamed reply in order; ``None`` stands for ``data: [DONE]``."""
    body = request.body
    model = reply.model or body.get("model") or "gpt-test"
    base = {
        "id": f"chatcmpl-{secrets.token_hex(12)}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "system_fingerprint": None,
    }
    size = max(1, reply.chunk_size)

    def pieces(s: str) -> list[str]:
        return [s[i : i + size] for i in range(0, len(s), size)] or [""]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Chunk:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {**base, "choices": [choice]}

    chunks: list[Chunk | None] = [chunk({"role": "assistant", "content": ""})]
    call_index = 0
    for block in reply.content:
        kind = block.get("type")
        if kind == "thinking":
            chunks += [chunk({style.reasoning_field: p}) for p in pieces(block["thinking"])]
        elif kind == "text":
            chunks += [chunk({"content": p}) for p in pieces(block["text"])]
        elif kind == "tool_use":
            chunks += [
                chunk({"tool_calls": [call]})
                for call in _call_deltas(call_index, block, style, pieces)
            ]
            call_index += 1
    finish = FINISH_REASONS.get(reply.stop_reason, "stop")
    chunks.append(chunk({}, finish))
    wants_usage = (body.get("stream_options") or {}).get("include_usage")
    if style.usage and wants_usage:
        chunks.append({**base, "choices": [], "usage": _usage(reply, request)})
    chunks.append(None)
    return chunks


def _call_deltas(
    index: int, block: dict[str, Any], style: ChatStyle, pieces: Any
) -> list[dict[str, Any]]:
    arguments = json.dumps(block["input"])
    head: dict[str, Any] = {"index": index, "id": block["id"], "type": "function"}
    if style.tool_calls == "whole":
        return [{**head, "function": {"name": block["name"], "arguments": arguments}}]
    if style.tool_calls == "no_id":
        del head["id"]
    first = {**head, "function": {"name": block["name"], "arguments": ""}}
    rest = [
        {**head, "function": {"name": block["name"], "arguments": p}}
        if style.tool_calls == "repeat"
        else {"index": index, "function": {"arguments": p}}
        for p in pieces(arguments)
    ]
    return [first, *rest]


def _usage(reply: Reply, request: RecordedRequest) -> dict[str, Any]:
    given = reply.usage or {}
    usage: dict[str, Any]
    if "prompt_tokens" in given:  # written in OpenAI's terms
        usage = dict(given)
        usage.setdefault("completion_tokens", 1)
    else:  # in the Messages API's terms, or left to the server
        cached = given.get("cache_read_input_tokens", 0)
        uncached = given.get("input_tokens", len(request.raw) // 4)
        output = given.get("output_tokens", max(1, len(json.dumps(reply.content)) // 4))
        usage = {
            "prompt_tokens": uncached + cached,
            "completion_tokens": output,
            "prompt_tokens_details": {"cached_tokens": cached},
        }
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage
