"""Content as the model sees it, for the tools whose answer depends on content.

A tool result is redacted once, by the dispatcher, before the model sees it. But a tool
that *computes* its answer from the real text — a search that says match or no match, an
edit that says found, not found or found twice, a diff, a count — would answer questions
about what the redaction hides, one character at a time. So those tools work on the
redacted view (:func:`secrets_for`, :meth:`~jupyter_agent.secrets.redaction.Masker.view`): the
same passes, with the same secrets, that the dispatcher applies, so every answer is one a
read of the text could have given.

An edit made through the view (:func:`find_in_view`, :func:`edited`):

- ``old_text`` is matched against the view, and the edit is made to the real text at the
  span it stands for; a match whose end falls inside a hidden span is refused, and the
  hidden value stays as it is;
- a hidden value inside the match is kept where new_text keeps, exactly, the line (or the
  part of a line) that holds it: that line is written back with its real value, so the
  model can edit, add or reorder the lines around a secret, and move its line whole,
  without knowing it. Left out, the value is removed (the model needed not know it to
  remove it). Masked text anywhere else in new_text is refused: a value the model cannot
  read cannot be written, copied or changed;
- nothing hidden before the edit may show after it: an edit to what marks a value as a
  secret (the ``password =`` before it, a key's ``sk-ant-`` prefix) is refused.

Not answers about content: what the file system reports (a file's size in bytes, its
number of lines) tells a value's length, never its characters. A shell command runs what
it runs; the user's approval of it is its guard, not this module.
"""

from __future__ import annotations

import bisect
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass

from ..errors import ToolError
from ..secrets.redacted import Hidden, Redacted
from ..secrets.redaction import Masker, Secrets
from ..secrets.shapes import MASK
from ..workspace.stamps import settled
from ._tool import ToolContext

SECRET_MARK = "‹secret:"


def secrets_for(ctx: ToolContext) -> Secrets:
    """The agent's secrets (the dispatcher's), or, outside an agent, the environment's."""
    return ctx.resources.get(Secrets) or Secrets()


def shows_mask(text: str) -> bool:
    """Whether ``text`` holds what a mask looks like in the view."""
    return MASK in text or SECRET_MARK in text


def raw_line(view: Redacted, position: int) -> int:
    """The line number (1-based) of the real text where ``position`` of the view falls."""
    return view.raw.count("\n", 0, view.raw_position(position)) + 1


# --- searching many files --------------------------------------------------------------


class CleanFiles:
    """The files whose text showed nothing hidden, as they were then: a search need not
    mask them again until they change. A file is known by its device, inode, size, and
    modification and change times (a program can set the first back, not the second),
    and by the passes it was masked with (other secrets: masked again); remembered once
    its status is settled (``stamps.settled``)."""

    LIMIT = 200_000
    """Files remembered at most (the oldest forgotten first)."""

    def __init__(self) -> None:
        self._known: OrderedDict[tuple[object, ...], None] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(st: os.stat_result, masker: Masker) -> tuple[object, ...]:
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, masker.passes)

    def clean(self, st: os.stat_result, masker: Masker) -> bool:
        with self._lock:
            return self.key(st, masker) in self._known

    def forget(self) -> None:
        with self._lock:
            self._known.clear()

    def mark(self, st: os.stat_result, masker: Masker) -> None:
        key = self.key(st, masker)
        with self._lock:
            self._known[key] = None
            self._known.move_to_end(key)
            while len(self._known) > self.LIMIT:
                self._known.popitem(last=False)


CLEAN_FILES = CleanFiles()


def seen_lines(
    masker: Masker, text: str, before: os.stat_result, after: os.stat_result
) -> list[str]:
    """The lines of a file's ``text`` as the model reads them; ``before`` and ``after``:
    the file's status before and after it was read (a file that changed meanwhile is not
    remembered as clean)."""
    unchanged = CleanFiles.key(before, masker) == CleanFiles.key(after, masker)
    if unchanged and CLEAN_FILES.clean(after, masker):
        return text.split("\n")
    view = masker.view(text)
    if unchanged and not view.hidden and settled(after):
        CLEAN_FILES.mark(after, masker)
    return view.lines()


# --- editing through the view -----------------------------------------------------------


@dataclass(frozen=True)
class Found:
    """Where ``old`` occurs in a view (non-overlapping, in order), and its replacement."""

    old: str
    new: str
    starts: list[int]


def find_in_view(view: Redacted, old_text: str, new_text: str) -> Found:
    """The occurrences of ``old_text`` in the view; a file with Windows line ends is
    matched with ``\\n`` text, and written with its own line ends."""
    starts = _occurrences(view.text, old_text)
    if not starts and "\r\n" in view.text and "\r\n" not in old_text:
        crlf = old_text.replace("\n", "\r\n")
        if crlf != old_text and (found := _occurrences(view.text, crlf)):
            return Found(crlf, new_text.replace("\r\n", "\n").replace("\n", "\r\n"), found)
    return Found(old_text, new_text, starts)


def edited(masker: Masker, view: Redacted, found: Found, where: str) -> tuple[str, Redacted]:
    """The real text with ``found.new`` in place of each occurrence in ``found.starts``,
    and its view; :class:`ToolError` says why an edit cannot be made through the view."""
    pieces: list[str] = []
    keep: list[tuple[int, int]] = []  # real spans of the result that must stay hidden
    moves: list[tuple[int, int]] = []
    done = length = 0
    inside: set[Hidden] = set()
    for start in found.starts:
        end = start + len(found.old)
        span = view.raw_span(start, end)
        if span is None:
            raise ToolError(_cut_message(view, start, end, where))
        raw_start, raw_end = span
        within = view.hidden_within(start, end)
        inside.update(within)
        replacement, carried = _carried(view, start, found.old, found.new, within, where)
        pieces.append(view.raw[done:raw_start])
        length += raw_start - done
        keep += [(length + a, length + b) for a, b in carried]
        pieces.append(replacement)
        length += len(replacement)
        done = raw_end
        moves.append((raw_end, length))
    pieces.append(view.raw[done:])
    raw = "".join(pieces)
    keep += _survivors(view, inside, moves)
    after = masker.view(raw)
    for a, b in keep:
        if a < b and not after.hides(a, b):
            line = raw.count("\n", 0, a) + 1
            raise ToolError(
                f"Refused: this edit would show a value that is hidden from you, at line "
                f"{line} of {where}: what marks it as a secret (a name such as password=, "
                "a key's prefix, the quotes around it) would change. Leave the text around "
                "the masked value as it is; nothing was changed."
            )
    return raw, after


def _occurrences(text: str, needle: str) -> list[int]:
    found: list[int] = []
    at = text.find(needle)
    while at != -1 and needle:
        found.append(at)
        at = text.find(needle, at + len(needle))
    return found


def _carried(
    view: Redacted, start: int, old: str, new: str, within: list[Hidden], where: str
) -> tuple[str, list[tuple[int, int]]]:
    """``new`` as real text: each line of it that is, exactly, a line of ``old`` holding a
    hidden value gets that line's real text back. Returns the text and the spans, in it,
    of the values carried."""
    if not within:
        if view.hidden and shows_mask(new):
            raise ToolError(_orphan_message(where))
        return new, []
    old_lines = old.split("\n")
    offsets = [0]
    for line in old_lines[:-1]:
        offsets.append(offsets[-1] + len(line) + 1)
    holding: dict[str, list[int]] = {}  # a line's text -> the old lines with values
    for h in within:
        index = _line_index(offsets, h.start - start)
        places = holding.setdefault(old_lines[index], [])
        if index not in places:
            places.append(index)
    new_lines = new.split("\n")
    kept: dict[int, int] = {}  # new line -> old line it keeps
    for text, places in holding.items():
        targets = [j for j, line in enumerate(new_lines) if line == text]
        if targets and len(targets) != len(places):
            raise ToolError(
                f"old_text holds the line {_clip(text)!r}, with a masked value, "
                f"{len(places)} time(s) and new_text {len(targets)}: which value goes where "
                "cannot be told. Edit fewer of those lines at once; nothing was changed."
            )
        kept.update(zip(targets, places, strict=False))
    out: list[str] = []
    carried: list[tuple[int, int]] = []
    length = 0
    for j, line in enumerate(new_lines):
        if j in kept:
            i = kept[j]
            line_start = start + offsets[i]
            raw_start = view.raw_position(line_start)
            line = view.raw[raw_start : view.raw_position(line_start + len(old_lines[i]))]
            for h in view.hidden_within(line_start, line_start + len(old_lines[i])):
                carried.append((length + h.raw_start - raw_start, length + h.raw_end - raw_start))
        elif shows_mask(line):
            raise ToolError(_orphan_message(where))
        out.append(line)
        length += len(line) + 1
    return "\n".join(out), carried


def _survivors(
    view: Redacted, inside: set[Hidden], moves: list[tuple[int, int]]
) -> list[tuple[int, int]]:
    """The real spans, in the edited text, of the hidden values no occurrence touched;
    ``moves``: (where an occurrence ended in the real text, where that is now)."""
    ends = [end for end, _ in moves]
    spans = []
    for h in view.hidden:
        if h in inside:
            continue
        i = bisect.bisect_right(ends, h.raw_start) - 1
        shift = moves[i][1] - moves[i][0] if i >= 0 else 0
        spans.append((h.raw_start + shift, h.raw_end + shift))
    return spans


def _line_index(offsets: list[int], position: int) -> int:
    return bisect.bisect_right(offsets, position) - 1


def _cut_message(view: Redacted, start: int, end: int, where: str) -> str:
    h = view.inside(start) or view.inside(end)
    assert h is not None
    masked = view.text[h.start : h.end]
    return (
        f"old_text cuts through a value hidden from you at line {raw_line(view, h.start)} of "
        f"{where}: {masked!r} stands for a secret there. Include the whole masked text as you "
        "read it, or none of it; nothing was changed."
    )


def _orphan_message(where: str) -> str:
    return (
        f"new_text holds masked text (•••, ‹secret:…›) that is not on a line of old_text kept "
        f"exactly as it was, in {where}. A value hidden from you cannot be written, copied or "
        "moved into changed text: keep each line that holds one exactly as you read it (it "
        "keeps its real value), or leave that line out to remove the value. Nothing was "
        "changed."
    )


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
