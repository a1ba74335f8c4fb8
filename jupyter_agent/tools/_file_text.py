"""Reading a workspace file as text, off the event loop: the helpers the file tools share.

Invariants kept here:

- A reading tool's body runs in a thread (:func:`off_loop`) and polls a stop event, so a
  big folder or file never blocks the event loop where Stop is heard.
- A file is refused as binary from a sample of its first :data:`SNIFF_BYTES` bytes; text
  that is not valid UTF-8 is read lossily and said to be.
- At most :data:`LINE_READ_BYTES` of one line are held in memory; the rest is counted.
"""

from __future__ import annotations

import asyncio
import codecs
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from ..errors import ToolError

SNIFF_BYTES = 8192
"""Bytes read from the start of a file to tell text from binary."""
LINE_READ_BYTES = 1 << 16
"""The most of one line read into memory: a 1 GB file with no newline is one line."""

T = TypeVar("T")


async def off_loop(fn: Callable[..., T], *args: Any) -> T:
    """Run a reading tool's body in a thread, so a big folder or file never blocks the
    event loop (where the Stop button is heard); on cancel, tell the thread to give up."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(fn, stop, *args)
    finally:
        stop.set()


def require_regular_file(real: Path, given: str) -> None:
    if real.is_dir():
        raise ToolError(f"{given!r} is a folder; use list_directory to see what it holds.")
    if not real.is_file():
        raise ToolError(f"{given!r} is not a regular file (a device, pipe or socket).")


def binary_message(given: str) -> str:
    return (
        f"{given!r} is a binary file; read_file shows text only. Use get_file_info for its "
        "size and type, or a command (execute_command) that understands the format."
    )


def sniff(sample: bytes, given: str, *, complete: bool) -> bool:
    """Refuse a binary sample; return whether the text is not valid UTF-8 (read lossily)."""
    if b"\0" in sample:
        raise ToolError(binary_message(given))
    try:
        sample.decode("utf-8")
        return False
    except UnicodeDecodeError as exc:
        if not complete and exc.start >= len(sample) - 3:
            return False  # a character cut by the sample's end
    decoded = sample.decode("utf-8", errors="replace")
    bad = decoded.count("\ufffd")
    controls = sum(1 for c in decoded if ord(c) < 32 and c not in "\t\n\r\f\b\x1b")
    if bad + controls > 0.1 * max(len(decoded), 1):
        raise ToolError(binary_message(given))
    return True


def decode_line(raw: bytes, *, cut: bool = False) -> tuple[str, bool]:
    """One line of a file as text, without its line ending; and whether bytes were lost.
    ``cut``: the bytes stop inside the line, perhaps inside a character (not a loss)."""
    try:
        if cut:
            text, lossy = codecs.getincrementaldecoder("utf-8")().decode(raw), False
        else:
            text, lossy = raw.decode("utf-8"), False
    except UnicodeDecodeError:
        text, lossy = raw.decode("utf-8", errors="replace"), True
    return text.removesuffix("\n").removesuffix("\r"), lossy


def bounded_lines(f: BinaryIO, stop: threading.Event) -> Iterator[tuple[bytes, int]]:
    """Each line's first :data:`LINE_READ_BYTES` bytes, and how many bytes of it were
    skipped (counted, never held)."""
    while chunk := f.readline(LINE_READ_BYTES):
        beyond = 0
        if len(chunk) == LINE_READ_BYTES and not chunk.endswith(b"\n"):
            while not stop.is_set() and (rest := f.readline(1 << 20)):
                if rest.endswith(b"\n"):
                    beyond += len(rest) - 1
                    break
                beyond += len(rest)
        yield chunk, beyond


def count_rest(f: BinaryIO, stop: threading.Event) -> int:
    """How many lines lie between the current position and the end of the file."""
    count = 0
    last = b"\n"
    while not stop.is_set() and (chunk := f.read(1 << 20)):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")
