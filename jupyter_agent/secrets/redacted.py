"""Text as the model sees it, and where each hidden span of it lies in the real text.

Redaction (:mod:`jupyter_agent.secrets.redaction`, :mod:`jupyter_agent.secrets.shapes`) is a
series of
*passes*; each finds spans of the text and says what replaces them (``‹secret:NAME›``,
``sk-a•••``). :func:`fold` runs the passes one after the other, as the redaction of a tool
result does, and can also keep a map: the result is a :class:`Redacted`, the text the
model would see (:attr:`Redacted.text`) with, for each *hidden* span of it (the part of a
replacement that differs from what it replaced: ``•••`` in ``sk-a•••``, where ``sk-a`` is
shown as it is), the span of the real text it stands for.

Tools whose answer depends on content (a search, an edit's match, a diff) work on
:attr:`Redacted.text`, so their answers say nothing a read would not; an edit goes back to
the real text through the map (:meth:`Redacted.raw_span`), and a hidden span is never
cut: a query that would fall inside one is refused by whoever asks.

Invariant: ``fold(text, passes).text`` is exactly what applying the passes in turn gives
(the map is bookkeeping beside it, never a second redaction).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

Edit = tuple[int, int, str]
"""Replace ``text[start:end]`` by the string."""
Pass = Callable[[str], Iterable[Edit]]
"""A redaction pass: the edits it makes to a text, in order, not overlapping."""


class Hidden(NamedTuple):
    """One hidden span: ``text[start:end]`` of the view stands for ``raw[raw_start:raw_end]``."""

    raw_start: int
    raw_end: int
    start: int
    end: int


class Redacted:
    """A text as the model sees it (:attr:`text`) beside the real one (:attr:`raw`), with
    where each hidden span lies in both (:attr:`hidden`, in order, not overlapping)."""

    def __init__(self, raw: str, text: str, hidden: Sequence[Hidden]) -> None:
        self.raw = raw
        self.text = text
        self.hidden = tuple(hidden)
        self._starts = [h.start for h in self.hidden]
        self._ends = [h.end for h in self.hidden]
        self._raw_ends = [h.raw_end for h in self.hidden]

    def __repr__(self) -> str:
        return f"Redacted({self.text[:60]!r}…, {len(self.hidden)} hidden)"

    # --- from the view to the real text ------------------------------------------------

    def inside(self, position: int) -> Hidden | None:
        """The hidden span ``position`` (of the view) falls strictly inside, if any."""
        i = bisect.bisect_right(self._starts, position) - 1
        if i >= 0 and self.hidden[i].start < position < self.hidden[i].end:
            return self.hidden[i]
        return None

    def raw_position(self, position: int) -> int:
        """Where ``position`` of the view is in the real text (not inside a hidden span:
        there, where that span's real text begins)."""
        inside = self.inside(position)
        if inside is not None:
            return inside.raw_start
        i = bisect.bisect_right(self._ends, position) - 1
        if i < 0:
            return position
        last = self.hidden[i]
        return position + (last.raw_end - last.end)

    def raw_span(self, start: int, end: int) -> tuple[int, int] | None:
        """The real span of the view's ``[start, end)``; None when either end falls inside
        a hidden span (the view's text there is no text of the file's)."""
        if self.inside(start) is not None or self.inside(end) is not None:
            return None
        return self.raw_position(start), self.raw_position(end)

    def hidden_within(self, start: int, end: int) -> list[Hidden]:
        """The hidden spans wholly inside the view's ``[start, end)``."""
        i = bisect.bisect_left(self._starts, start)
        found = []
        while i < len(self.hidden) and self.hidden[i].end <= end:
            found.append(self.hidden[i])
            i += 1
        return found

    # --- from the real text to the view ------------------------------------------------

    def view_position(self, raw: int) -> int:
        """Where position ``raw`` of the real text shows in the view (inside a hidden span:
        at its end, so the mask shows with the line it begins on)."""
        i = bisect.bisect_right(self._raw_ends, raw) - 1
        nxt = self.hidden[i + 1] if i + 1 < len(self.hidden) else None
        if nxt is not None and nxt.raw_start < raw:
            return nxt.end
        if i < 0:
            return raw
        last = self.hidden[i]
        return raw - (last.raw_end - last.end)

    def lines(self) -> list[str]:
        """The view of each line of the real text (split at ``\\n``): a line a hidden span
        covers shows empty, the mask showing on the line the span begins on."""
        if not self.hidden:
            return self.text.split("\n")
        out: list[str] = []
        start = 0
        while True:
            end = self.raw.find("\n", start)
            stop = len(self.raw) if end < 0 else end
            out.append(self.text[self.view_position(start) : self.view_position(stop)])
            if end < 0:
                return out
            start = end + 1

    def hides(self, raw_start: int, raw_end: int) -> bool:
        """Whether every character of ``raw[raw_start:raw_end]`` is hidden."""
        at = raw_start
        i = bisect.bisect_right(self._raw_ends, at)
        while at < raw_end:
            if i >= len(self.hidden) or self.hidden[i].raw_start > at:
                return False
            at = self.hidden[i].raw_end
            i += 1
        return True


def fold(text: str, passes: Iterable[Pass], *, keep_map: bool = True) -> Redacted:
    """``text`` through each pass in turn; with ``keep_map``, where each hidden span of
    the result lies in ``text`` (without it the result has no hidden spans listed)."""
    raw = text
    hidden: list[Hidden] = []
    for redaction in passes:
        edits = list(redaction(text))
        if not edits:
            continue
        if keep_map:
            text, hidden = _apply_mapped(text, hidden, edits)
        else:
            text = _apply(text, edits)
    return Redacted(raw, text, hidden)


def _apply(text: str, edits: Iterable[Edit]) -> str:
    out: list[str] = []
    done = 0
    for start, end, new in edits:
        out.append(text[done:start])
        out.append(new)
        done = end
    out.append(text[done:])
    return "".join(out)


def _apply_mapped(text: str, hidden: list[Hidden], edits: list[Edit]) -> tuple[str, list[Hidden]]:
    """One pass's edits applied to ``text``, and the hidden spans of the result: each edit
    is cut to what it changes, widened to whole spans hidden before, and edits that share
    a span become one."""
    starts = [h.start for h in hidden]
    groups: list[tuple[int, int, list[Edit]]] = []  # (start, end, the edits), widened
    for start, end, new in edits:
        start, end, new = _trimmed(text, start, end, new)
        wide_start, wide_end = start, end
        i = bisect.bisect_right(starts, start) - 1
        if i >= 0 and hidden[i].start < start < hidden[i].end:
            wide_start = hidden[i].start
        j = bisect.bisect_left(starts, end) - 1
        if j >= 0 and hidden[j].start < end < hidden[j].end:
            wide_end = hidden[j].end
        if groups and wide_start < groups[-1][1]:
            first, last, members = groups[-1]
            groups[-1] = (first, max(last, wide_end), [*members, (start, end, new)])
        else:
            groups.append((wide_start, wide_end, [(start, end, new)]))

    out: list[str] = []
    mapped: list[Hidden] = []
    done = shift = offset = 0  # offset: raw position minus old-text position
    i = 0
    for start, end, members in groups:
        while i < len(hidden) and hidden[i].end <= start:
            h = hidden[i]
            mapped.append(Hidden(h.raw_start, h.raw_end, h.start + shift, h.end + shift))
            offset = h.raw_end - h.end
            i += 1
        raw_start = start + offset
        while i < len(hidden) and hidden[i].start < end:  # hidden before, inside this edit
            offset = hidden[i].raw_end - hidden[i].end
            i += 1
        raw_end = end + offset
        if len(members) == 1 and members[0][:2] == (start, end):
            new = members[0][2]
        else:
            new = _apply(text[start:end], ((s - start, e - start, n) for s, e, n in members))
        out.append(text[done:start])
        out.append(new)
        mapped.append(Hidden(raw_start, raw_end, start + shift, start + shift + len(new)))
        shift += len(new) - (end - start)
        done = end
    for h in hidden[i:]:
        mapped.append(Hidden(h.raw_start, h.raw_end, h.start + shift, h.end + shift))
    out.append(text[done:])
    return "".join(out), mapped


def _trimmed(text: str, start: int, end: int, new: str) -> Edit:
    """The edit cut to the part that changes: what it keeps of the old text at either end
    is left as text (``sk-a`` of ``sk-a•••``). At least one character of ``new`` stays,
    so every hidden span shows."""
    old = text[start:end]
    keep = len(new) - 1 if new else 0
    head = 0
    limit = min(len(old), keep)
    while head < limit and old[head] == new[head]:
        head += 1
    tail = 0
    limit = min(len(old) - head, keep - head)
    while tail < limit and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    return start + head, end - tail, new[head : len(new) - tail]
