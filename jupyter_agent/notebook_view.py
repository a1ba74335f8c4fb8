"""The notebook as the model reads it: compact text, images aside, secrets masked.

Sources are shown whole (long ones head and tail); outputs are trimmed head and tail
with a count of what was left out; errors are kept whole with ANSI colours stripped.
Each cell carries its provenance: whether it ran, ran out of order, or was edited after
it last ran — so the agent knows when the kernel's state may not match the code.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._wording import plural
from .messages import ImageBlock, ImageSource
from .notebook import Cell
from .secrets import mask_secrets

ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
MAX_IMAGE_BYTES = 400_000
"""Base64 size above which an image is described instead of attached."""


class ExecutionHistory(Protocol):
    """What the kernel ran: the source of an execution count, when it knows it."""

    def source_of(self, execution_count: int) -> str | None: ...


@dataclass
class Limits:
    output_head: int = 25
    output_tail: int = 10
    output_chars: int = 4_000
    source_lines: int = 300
    error_chars: int = 20_000
    images: int = 3


@dataclass
class View:
    text: str
    images: list[ImageBlock] = field(default_factory=list)


def strip_ansi(text: str) -> str:
    return ANSI.sub("", text)


def trim_lines(text: str, head: int, tail: int, max_chars: int) -> str:
    """Head and tail of ``text`` with a note of what was left out."""
    lines = text.splitlines()
    if len(lines) > head + tail:
        omitted = len(lines) - head - tail
        lines = [*lines[:head], f"… {omitted:,} lines omitted …", *lines[-tail:]]
    out = "\n".join(lines)
    if len(out) > max_chars:
        keep = max_chars // 2
        out = f"{out[:keep]}\n… {len(out) - 2 * keep:,} characters omitted …\n{out[-keep:]}"
    return out


def provenance(cells: Sequence[Cell], history: ExecutionHistory | None) -> dict[str, str]:
    """Flags per cell id: 'not run', 'edited since it ran', 'ran out of order'."""
    flags: dict[str, list[str]] = {}
    last = 0
    for cell in cells:
        if cell.cell_type != "code":
            continue
        notes = flags.setdefault(cell.id, [])
        count = cell.execution_count
        if count is None:
            if cell.source.strip():
                notes.append("not run")
            continue
        if count < last:
            notes.append("ran out of order")
        last = max(last, count)
        if history is not None:
            ran = history.source_of(count)
            if ran is not None and ran.strip() != cell.source.strip():
                notes.append("edited since it ran")
    return {cid: ", ".join(n) for cid, n in flags.items() if n}


def render_output(output: dict[str, Any], limits: Limits, images: list[ImageBlock]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        text = _text(output.get("text", ""))
        name = output.get("name", "stdout")
        return f"{name}:\n" + trim_lines(
            mask_secrets(strip_ansi(text)),
            limits.output_head,
            limits.output_tail,
            limits.output_chars,
        )
    if kind == "error":
        traceback = "\n".join(output.get("traceback") or [])
        text = strip_ansi(traceback) or f"{output.get('ename')}: {output.get('evalue')}"
        if len(text) > limits.error_chars:
            text = (
                text[: limits.error_chars // 2]
                + "\n… traceback shortened …\n"
                + text[-limits.error_chars // 2 :]
            )
        evalue = mask_secrets(str(output.get("evalue", "")))
        return f"error {output.get('ename')}: {evalue}\n{mask_secrets(text)}"
    data = output.get("data") or {}
    parts = []
    for mime in IMAGE_TYPES:
        if mime in data:
            parts.append(_image(mime, _text(data[mime]), limits, images))
            break
    if "application/vnd.jupyter.widget-view+json" in data:
        parts.append("[interactive widget]")
    if "text/plain" in data and not parts:
        parts.append(
            trim_lines(
                mask_secrets(strip_ansi(_text(data["text/plain"]))),
                limits.output_head,
                limits.output_tail,
                limits.output_chars,
            )
        )
    elif "text/html" in data and not parts:
        html = _text(data["text/html"])
        plain = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()
        parts.append(f"[HTML, {len(html):,} characters] " + mask_secrets(plain[:300]))
    elif "text/markdown" in data and not parts:
        parts.append(
            trim_lines(
                mask_secrets(_text(data["text/markdown"])),
                limits.output_head,
                limits.output_tail,
                limits.output_chars,
            )
        )
    elif "application/json" in data and not parts:
        parts.append(
            trim_lines(
                mask_secrets(json.dumps(data["application/json"], indent=1)),
                limits.output_head,
                limits.output_tail,
                limits.output_chars,
            )
        )
    if not parts:
        parts.append("[" + ", ".join(sorted(data)) + " output]")
    label = "result" if kind == "execute_result" else "display"
    return f"{label}:\n" + "\n".join(parts)


def _image(mime: str, data: str, limits: Limits, images: list[ImageBlock]) -> str:
    data = "".join(data.split())
    if len(data) > MAX_IMAGE_BYTES:
        return f"[{mime} image, about {len(data) * 3 // 4:,} bytes — too large to attach]"
    try:
        size = len(base64.b64decode(data, validate=True))
    except ValueError:
        return f"[{mime} image — unreadable data]"
    if len(images) >= limits.images:
        most = limits.images
        return f"[{mime} image, {size:,} bytes — not attached (max {most} per call); use read_cell]"
    images.append(ImageBlock(source=ImageSource(media_type=mime, data=data)))
    return f"[{mime} image, {size:,} bytes — attached as image {len(images)}]"


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def render_cell(
    cell: Cell,
    position: int,
    flags: str,
    limits: Limits,
    images: list[ImageBlock],
) -> str:
    head = f"── cell {position} · id {cell.id} · {cell.cell_type}"
    if cell.cell_type == "code":
        head += f" · [{cell.execution_count if cell.execution_count is not None else ' '}]"
    if flags:
        head += f" · {flags}"
    source = mask_secrets(cell.source)
    lines = source.splitlines()
    if len(lines) > limits.source_lines:
        half = limits.source_lines // 2
        source = "\n".join(
            [
                *lines[:half],
                f"… {len(lines) - 2 * half:,} source lines omitted (read_cell shows all) …",
                *lines[-half:],
            ]
        )
    parts = [head, source if source.strip() else "(empty)"]
    for output in cell.outputs:
        parts.append("⤷ " + render_output(output, limits, images))
    return "\n".join(parts)


def render_notebook(
    cells: Sequence[Cell],
    title: str,
    history: ExecutionHistory | None = None,
    limits: Limits | None = None,
) -> View:
    limits = limits or Limits()
    flags = provenance(cells, history)
    images: list[ImageBlock] = []
    body = [render_cell(c, i + 1, flags.get(c.id, ""), limits, images) for i, c in enumerate(cells)]
    header = f"{title}\n{plural(len(cells), 'cell')}"
    return View("\n\n".join([header, *body]), images)
