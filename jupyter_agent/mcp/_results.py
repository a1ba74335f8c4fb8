"""An MCP tool result as one of our tool results.

Text stays text; images are attached (downscaled, a few at most; a PNG whose optional
chunk has a wrong checksum, as some tools write them, without that chunk: see
:func:`repaired_png`); structured content is
JSON text when no text says it (servers are asked to send both); a resource link or an
embedded resource is a line saying what it is (an embedded text resource with its text).
``isError`` makes an error result. The whole is bounded like other tools' results: a huge
result cannot flood the context. Secrets are hidden later, where every tool result is
(the dispatcher's one pass).
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
import zlib
from typing import Any

from ..messages import ImageBlock
from ..notebook.outputs import downscale
from ..tools import ToolOutput

MAX_RESULT_CHARS = 30_000
"""Characters of a result the model sees (the rest is cut, and it is told so)."""
MAX_IMAGES = 5
IMAGE_SIDE = 1024
"""Longest side, in pixels, of an attached image (screenshots need more than plots)."""
MAX_IMAGE_DATA = 20_000_000
"""Base64 characters of one image beyond which it is described, never decoded."""


def to_output(server: str, tool: str, result: dict[str, Any]) -> ToolOutput:
    """``result`` (a ``CallToolResult`` as the wire's JSON) as a :class:`ToolOutput`.
    Decodes and downscales images: call it off the event loop."""
    parts: list[str] = []
    images: list[ImageBlock] = []
    texts: list[str] = []
    content = result.get("content")
    for item in content if isinstance(content, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "text":
            text = str(item.get("text", ""))
            texts.append(text)
            parts.append(text)
        elif kind == "image":
            parts.append(_image(item, images))
        elif kind == "audio":
            parts.append(f"[audio {item.get('mimeType', '')}: not shown to you]")
        elif kind == "resource_link":
            parts.append(_resource_link(item))
        elif kind == "resource":
            parts.append(_embedded(item.get("resource")))
        else:
            parts.append(f"[content of type {kind!r}: not shown to you]")
    structured = result.get("structuredContent")
    if structured is not None and not any(t.strip() for t in texts):
        parts.append(json.dumps(structured, indent=1, ensure_ascii=False, default=str))
    text = "\n".join(p for p in parts if p) or "(the tool returned no content)"
    is_error = bool(result.get("isError"))
    return ToolOutput(
        _bounded(text),
        images=images,
        is_error=is_error,
        data={"server": server, "tool": tool},
    )


def _image(item: dict[str, Any], images: list[ImageBlock]) -> str:
    mime = str(item.get("mimeType", "image/png"))
    data = item.get("data")
    if not isinstance(data, str) or len(data) > MAX_IMAGE_DATA:
        return f"[image {mime}: too large to attach]"
    if len(images) >= MAX_IMAGES:
        return f"[image {mime}: not attached (at most {MAX_IMAGES} per result)]"
    block = downscale(mime, _mended(mime, data), IMAGE_SIDE)
    if block is None:
        return f"[image {mime}: unreadable, not attached]"
    images.append(block)
    return f"[image {len(images)} attached]"


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _mended(mime: str, data: str) -> str:
    """``data`` (base64), with a PNG's broken optional chunks left out."""
    if mime != "image/png":
        return data
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return data  # downscale says it is unreadable
    repaired = repaired_png(raw)
    return data if repaired is None else base64.b64encode(repaired).decode()


def repaired_png(raw: bytes) -> bytes | None:
    """``raw`` without its ancillary chunks (the optional ones: text, colour profiles,
    timestamps; a lowercase first letter says so) whose checksum is wrong, or None when
    there are none (or it is no PNG). Pillow refuses such a file unless told, for the
    whole process, to load truncated images; leaving the chunk out decides for this image
    only, and what is attached is a valid PNG. A wrong checksum on a critical chunk (the
    header, palette or pixels) is left for Pillow to refuse."""
    if not raw.startswith(PNG_SIGNATURE):
        return None
    kept = [PNG_SIGNATURE]
    dropped = False
    at = len(PNG_SIGNATURE)
    while at + 12 <= len(raw):
        (length,) = struct.unpack_from(">I", raw, at)
        end = at + 12 + length
        if end > len(raw):
            break  # truncated: left as it is
        kind = raw[at + 4 : at + 8]
        (crc,) = struct.unpack_from(">I", raw, end - 4)
        if kind[0] & 0x20 and zlib.crc32(raw[at + 4 : end - 4]) != crc:
            dropped = True
        else:
            kept.append(raw[at:end])
        at = end
        if kind == b"IEND":
            break
    if not dropped:
        return None
    kept.append(raw[at:])
    return b"".join(kept)


def _resource_link(item: dict[str, Any]) -> str:
    about = ", ".join(
        f"{k}: {item[k]}" for k in ("name", "title", "mimeType", "description") if item.get(k)
    )
    return f"[resource link {item.get('uri', '')}" + (f" ({about})" if about else "") + "]"


def _embedded(resource: Any) -> str:
    if not isinstance(resource, dict):
        return "[embedded resource]"
    uri, mime = resource.get("uri", ""), resource.get("mimeType", "")
    head = f"[embedded resource {uri}" + (f" ({mime})" if mime else "") + "]"
    if isinstance(resource.get("text"), str):
        return f"{head}\n{resource['text']}"
    if isinstance(resource.get("blob"), str):
        return f"{head} binary, {len(resource['blob']) * 3 // 4:,} bytes: not shown to you"
    return head


def _bounded(text: str) -> str:
    if len(text) <= MAX_RESULT_CHARS:
        return text
    cut = len(text) - MAX_RESULT_CHARS
    return (
        f"{text[:MAX_RESULT_CHARS]}\n… [{cut:,} more characters not shown: the result was "
        "cut. Ask the tool for less, e.g. a narrower query or a page of the result.]"
    )
