"""A command's output as the model and the panel see it.

Invariant: whatever a command prints, what is kept stays bounded: the first and last lines
within :data:`MAX_OUTPUT_LINES` and :data:`MAX_OUTPUT_CHARS` (the middle counted, not
kept), each line cut to :data:`LINE_MAX_CHARS`, colours and carriage returns applied as a
terminal would, and progress sent in pieces of at most :data:`PROGRESS_MAX_CHARS`.
"""

from __future__ import annotations

import codecs
import re
from collections import deque

MAX_OUTPUT_LINES = 200
MAX_OUTPUT_CHARS = 30_000
"""What the model sees of a command's output: the first and last part of it."""
LINE_MAX_CHARS = 2000
PROGRESS_MAX_LINES = 200
PROGRESS_MAX_CHARS = 16_000

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Za-z0-9]|\x1b[=>]")


class CommandOutput:
    """A command's output as lines: the first and last part, and what is new for progress."""

    def __init__(
        self, max_lines: int = MAX_OUTPUT_LINES, max_chars: int = MAX_OUTPUT_CHARS
    ) -> None:
        self.head_lines, self.head_chars = max_lines // 2, max_chars // 2
        self.tail_lines, self.tail_chars = max_lines - self.head_lines, max_chars - self.head_chars
        self.head: list[str] = []
        self.head_size = 0
        self.head_full = False
        self.tail: deque[str] = deque()
        self.tail_size = 0
        self.omitted = 0
        """Lines left out between the head and the tail."""
        self.pending: list[str] = []
        """Lines not yet sent as progress."""
        self._partial = ""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, data: bytes) -> None:
        text = self._partial + self._decoder.decode(data)
        *lines, self._partial = text.split("\n")
        for line in lines:
            self._add(line)
        if len(self._partial) > 4 * LINE_MAX_CHARS:  # a very long line: keep memory bounded
            self._add(self._partial)
            self._partial = ""

    def close(self) -> None:
        rest = self._partial + self._decoder.decode(b"", final=True)
        self._partial = ""
        if rest:
            self._add(rest)

    def text(self) -> str:
        gap = [f"… {self.omitted:,} lines omitted …"] if self.omitted else []
        return "\n".join([*self.head, *gap, *self.tail])

    def take_pending(self) -> str:
        lines, self.pending = self.pending, []
        if len(lines) > PROGRESS_MAX_LINES or sum(len(ln) + 1 for ln in lines) > PROGRESS_MAX_CHARS:
            kept: list[str] = []
            size = 0
            for line in reversed(lines[-PROGRESS_MAX_LINES:]):
                if size + len(line) + 1 > PROGRESS_MAX_CHARS:
                    break
                kept.append(line)
                size += len(line) + 1
            kept.reverse()
            lines = [f"… {len(lines) - len(kept):,} lines …", *kept]
        return "".join(line + "\n" for line in lines)

    def _add(self, line: str) -> None:
        line = _clean(line)
        if len(line) > LINE_MAX_CHARS:
            line = f"{line[:LINE_MAX_CHARS]}… [{len(line) - LINE_MAX_CHARS:,} more characters]"
        self.pending.append(line)
        cost = len(line) + 1
        if (
            not self.head_full
            and len(self.head) < self.head_lines
            and self.head_size + cost <= self.head_chars
        ):
            self.head.append(line)
            self.head_size += cost
            return
        self.head_full = True
        self.tail.append(line)
        self.tail_size += cost
        while len(self.tail) > self.tail_lines or self.tail_size > self.tail_chars:
            self.tail_size -= len(self.tail.popleft()) + 1
            self.omitted += 1


def _clean(line: str) -> str:
    """A line as a terminal would end up showing it: no colours, carriage returns applied."""
    line = _ANSI.sub("", line.removesuffix("\r"))
    if "\r" in line:
        parts = [p for p in line.split("\r") if p]
        line = parts[-1] if parts else ""
    return line
