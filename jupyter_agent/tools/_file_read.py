"""The workspace reading tools: read_file, list_directory and get_file_info.

Every path goes through :class:`~jupyter_agent.workspace.access.WorkspaceAccess`; bodies run
off the event loop and stop when asked. Listing never follows a symbolic link nor enters
the skipped folders (.git, node_modules…) unless asked for one directly; reading caps the
lines and bytes it returns and says how to read on.

A read shows the file as the model may see it, secrets masked, and masks a range of lines
together with what surrounds it (:data:`CONTEXT_CHARS`), so a range that starts inside a
private key or a value split over lines shows none of it; its caps and cuts are counted
on what it shows (:mod:`._masked`).
"""

from __future__ import annotations

import os
import stat
import threading
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from .._wording import byte_size
from ..errors import ToolError
from ..permissions import Permission
from ..secrets.redaction import Masker, Secrets
from ..workspace.access import SKIP_DIRS, WorkspaceAccess
from ._file_text import (
    SNIFF_BYTES,
    binary_message,
    bounded_lines,
    count_rest,
    decode_line,
    off_loop,
    require_regular_file,
    sniff,
)
from ._masked import secrets_for
from ._tool import ToolContext, ToolOutput, tool
from ._workspace_access import workspace_access

READ_MAX_LINES = 2000
READ_MAX_BYTES = 100_000
RAW_BUDGET = 2 * READ_MAX_BYTES
"""Bytes of the wanted lines read at most (their masked form is what the caps count)."""
LINE_MAX_CHARS = 2000
"""Longer lines are cut in read_file's output (minified files, data dumps)."""
CONTEXT_CHARS = 65_536
"""Characters read before and after the lines shown, masked with them: a secret is masked
as in a read of the whole file when it spans less than this (a private key, a value split
over lines), wherever a range starts or ends."""
UNREAD_GUARD = 12_000
"""Characters not shown at the end of what is read of a line too long to read whole
(LINE_READ_BYTES: 16,384 characters at least): a value the mask would know whole may
start there and go on unread."""
COUNT_MORE_LIMIT = 10_000
"""Most entries list_directory counts beyond those it shows."""


# --- read_file -------------------------------------------------------------------------


def _read_summary(a: Mapping[str, Any]) -> str:
    start, end = a.get("start_line"), a.get("end_line")
    if start in (None, 1) and end is None:
        return f"Read {a.get('path', '?')}"
    return f"Read {a.get('path', '?')} (lines {start or 1}–{end or 'end'})"


@tool(category="read", permissions={Permission.READ_FILES}, summary=_read_summary)
async def read_file(
    ctx: ToolContext, path: str, start_line: int = 1, end_line: int | None = None
) -> ToolOutput:
    """Read a text file of the workspace, with line numbers (`cat -n` style: the number,
    a tab, then the line). At most 2,000 lines or 100 KB per call; a note at the end says
    what was left out and which start_line reads on. Lines over 2,000 characters are cut.
    Binary files are refused. Notebooks (.ipynb) are JSON: prefer the notebook tools.

    Args:
        path: File path, relative to the workspace root.
        start_line: First line to show (1-based).
        end_line: Last line to show (inclusive); omit to read to the end (within the limits).
    """
    if start_line < 1:
        raise ToolError(f"start_line must be 1 or more, got {start_line}.")
    if end_line is not None and end_line < start_line:
        raise ToolError(f"end_line ({end_line}) is before start_line ({start_line}).")
    return await off_loop(
        _read_file, workspace_access(ctx), secrets_for(ctx), path, start_line, end_line
    )


@dataclass
class _Lines:
    """Lines of a file as read: each one's first bytes (at most LINE_READ_BYTES) and how
    many bytes of it were left unread."""

    lines: list[tuple[bytes, int]] = field(default_factory=list)
    size: int = 0

    def add(self, raw: bytes, beyond: int) -> None:
        self.lines.append((raw, beyond))
        self.size += len(raw) + 1


def _read_file(
    stop: threading.Event,
    sandbox: WorkspaceAccess,
    secrets: Secrets,
    path: str,
    start_line: int,
    end_line: int | None,
) -> ToolOutput:
    real = sandbox.resolve(path, must_exist=True)
    require_regular_file(real, path)
    rel = sandbox.relative(real)
    try:
        with sandbox.open_file(real) as f:
            sample = f.read(SNIFF_BYTES)
            sniff(sample, path, complete=len(sample) < SNIFF_BYTES)
            f.seek(0)
            window = _read_window(f, stop, path, start_line, end_line)
    except OSError as exc:
        raise ToolError(f"Could not read {path!r}: {exc.strerror or exc}.") from None
    total, wanted = window.total, window.wanted
    if total == 0:
        return ToolOutput(f"{rel} is empty (0 lines).", data={"path": rel, "total_lines": 0})
    if start_line > total:
        raise ToolError(
            f"start_line={start_line} is past the end of {path!r}, which has {total:,} "
            f"line{'s' if total != 1 else ''}."
        )
    masker = secrets.masker()
    shown, lossy = _shown_lines(masker, list(window.before), wanted.lines, window.after.lines)
    entries, stopped_at = _numbered(shown, start_line)
    last = start_line + len(entries) - 1
    capped = len(wanted.lines) >= READ_MAX_LINES or wanted.size >= RAW_BUDGET
    if stopped_at is None and capped and last < total and (end_line is None or last < end_line):
        stopped_at = last + 1
    notes = []
    if lossy:
        notes.append("[the file is not valid UTF-8: undecodable bytes are shown as �]")
    if stopped_at is not None:
        more = total - last
        notes.append(
            f"… {more:,} more line{'s' if more != 1 else ''}; "
            f"call read_file with start_line={stopped_at}"
        )
    elif start_line > 1 or last < total:
        notes.append(f"[showing lines {start_line:,}–{last:,} of {total:,}]")
    return ToolOutput(
        "\n".join(entries + notes),
        data={"path": rel, "start_line": start_line, "end_line": last, "total_lines": total},
    )


@dataclass
class _Window:
    """The lines asked for, with the context around them that masking needs."""

    before: deque[tuple[bytes, int]] = field(default_factory=deque)
    """Lines just before the first one shown (at most about CONTEXT_CHARS)."""
    wanted: _Lines = field(default_factory=_Lines)
    after: _Lines = field(default_factory=_Lines)
    total: int = 0
    """Lines in the whole file."""


def _read_window(
    f: BinaryIO, stop: threading.Event, path: str, start_line: int, end_line: int | None
) -> _Window:
    """Read the lines from ``start_line`` to ``end_line`` (within the caps), the context
    around them, and count the rest of the file's lines."""
    window = _Window()
    before, wanted, after = window.before, window.wanted, window.after
    held = 0
    n = 0
    for raw, beyond in bounded_lines(f, stop):
        n += 1
        if n < start_line:
            before.append((raw, beyond))
            held += len(raw) + 1
            while held - len(before[0][0]) - 1 >= CONTEXT_CHARS:
                held -= len(before.popleft()[0]) + 1
            continue
        within = end_line is None or n <= end_line
        if within and len(wanted.lines) < READ_MAX_LINES and wanted.size < RAW_BUDGET:
            if b"\0" in raw:
                raise ToolError(binary_message(path))
            wanted.add(raw, beyond)
            continue
        after.add(raw, beyond)
        if after.size >= CONTEXT_CHARS:
            break
    window.total = n + count_rest(f, stop)  # the lines read, then the unread rest
    return window


def _numbered(shown: list[str], start_line: int) -> tuple[list[str], int | None]:
    """The lines numbered from ``start_line``, within READ_MAX_BYTES, and the first line
    left out for that cap (``None``: none was)."""
    entries: list[str] = []
    size = 0
    for number, line in enumerate(shown, start_line):
        entry = f"{number:>6}\t{line}"
        if entries and size + len(entry) + 1 > READ_MAX_BYTES:
            return entries, number
        entries.append(entry)
        size += len(entry) + 1
    return entries, None


def _shown_lines(
    masker: Masker,
    before: list[tuple[bytes, int]],
    wanted: list[tuple[bytes, int]],
    after: list[tuple[bytes, int]],
) -> tuple[list[str], bool]:
    """The wanted lines as the model reads them: masked together with the lines around
    them (so a private key, or a value over several lines, is masked as in the whole
    file), each cut to LINE_MAX_CHARS; and whether any was not valid UTF-8."""
    texts: list[str] = []
    lossy = False
    for i, (raw, beyond) in enumerate([*before, *wanted, *after]):
        text, bad = decode_line(raw, cut=beyond > 0)
        texts.append(text)
        if len(before) <= i < len(before) + len(wanted):
            lossy = lossy or bad
    view = masker.view("\n".join(texts))
    shown: list[str] = []
    at = sum(len(t) + 1 for t in texts[: len(before)])  # where a wanted line begins (raw)
    for i, (_, beyond) in enumerate(wanted):
        text = texts[len(before) + i]
        start = view.view_position(at)
        end = view.view_position(at + len(text))
        line = view.text[start:end]
        if beyond:
            # The line goes on unread: its last characters may hold the start of a value
            # the mask would know whole. They are not shown.
            safe = view.view_position(at + max(0, len(text) - UNREAD_GUARD))
            cut = len(line) - (safe - start) + beyond
            line = line[: safe - start]
        else:
            cut = 0
        if len(line) > LINE_MAX_CHARS or cut:
            cut += max(0, len(line) - LINE_MAX_CHARS)
            line = f"{line[:LINE_MAX_CHARS]}… [{cut:,} more characters on this line]"
        shown.append(line)
        at += len(text) + 1
    return shown, lossy


# --- list_directory --------------------------------------------------------------------


@tool(
    category="read",
    permissions={Permission.READ_FILES},
    summary=lambda a: f"List {a.get('path', '.')}{' (recursive)' if a.get('recursive') else ''}",
)
async def list_directory(
    ctx: ToolContext, path: str = ".", recursive: bool = False, max_entries: int = 500
) -> ToolOutput:
    """List a folder of the workspace: one entry per line, paths relative to the workspace
    root, folders ending in `/`, files with their size, sorted by name. Folders .git,
    node_modules, .jupyter_agent, __pycache__ and .ipynb_checkpoints are shown but not
    entered unless you list them directly. At most max_entries lines.

    Args:
        path: Folder path, relative to the workspace root.
        recursive: Also list everything inside the subfolders.
        max_entries: Maximum number of entries to show (1 to 10,000).
    """
    if not 1 <= max_entries <= 10_000:
        raise ToolError(f"max_entries must be between 1 and 10,000, got {max_entries}.")
    return await off_loop(_list_directory, workspace_access(ctx), path, recursive, max_entries)


def _list_directory(
    stop: threading.Event, sandbox: WorkspaceAccess, path: str, recursive: bool, max_entries: int
) -> ToolOutput:
    real = sandbox.resolve(path, must_exist=True)
    if not real.is_dir():
        raise ToolError(f"{path!r} is a file, not a folder; use read_file or get_file_info on it.")
    rel = sandbox.relative(real)
    entries: list[str] = []
    more = 0
    for line in _list_entries(sandbox, real, recursive):
        if stop.is_set():
            break
        if len(entries) < max_entries:
            entries.append(line)
        else:
            more += 1
            if more > COUNT_MORE_LIMIT:
                break
    where = "the workspace root" if rel == "." else f"{rel}/"
    if not entries:
        return ToolOutput(f"{where} is empty.", data={"path": rel, "entries": 0})
    lines = [f"Contents of {where}{' (recursive)' if recursive else ''}:", *entries]
    if more:
        count = f"more than {COUNT_MORE_LIMIT:,}" if more > COUNT_MORE_LIMIT else f"{more:,}"
        lines.append(
            f"… {count} more entries not shown (max_entries={max_entries}); list a subfolder, "
            "or call again with a larger max_entries."
        )
    return ToolOutput("\n".join(lines), data={"path": rel, "entries": len(entries), "more": more})


def _list_entries(sandbox: WorkspaceAccess, folder: Path, recursive: bool) -> Iterator[str]:
    asked_for_skipped = any(p in SKIP_DIRS for p in Path(sandbox.relative(folder)).parts)
    try:
        entries = sorted(sandbox.gate.entries(folder), key=lambda e: (e.name.lower(), e.name))
    except OSError as exc:
        yield f"{sandbox.relative(folder)}/  (cannot list: {exc.strerror or exc})"
        return
    for entry in entries:
        full = folder / entry.name
        rel = sandbox.relative(full)
        is_link = entry.is_link()
        is_dir = entry.is_dir() or (is_link and os.path.isdir(full))
        slash = "/" if is_dir else ""
        if not sandbox.allows(full):
            if is_link and not _inside_root(sandbox, str(full)):
                yield f"{rel}{slash} -> {_link_target(full)}  (leads outside the workspace)"
            else:
                yield f"{rel}{slash}  (access refused)"
            continue
        if is_link:
            yield f"{rel}{slash} -> {_link_target(full)}"
            continue  # never followed: no loops, no surprises
        if is_dir:
            if not recursive:
                yield f"{rel}/  ({_count_entries(sandbox, full)})"
            elif entry.name in SKIP_DIRS and not asked_for_skipped:
                yield f"{rel}/  (skipped; list it directly to see inside)"
            else:
                yield f"{rel}/"
                yield from _list_entries(sandbox, full, recursive)
            continue
        kind = "" if entry.is_file() else "  (special file)"
        yield f"{rel}  {byte_size(entry.info.st_size)}{kind}"


def _link_target(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def _count_entries(sandbox: WorkspaceAccess, path: Path) -> str:
    try:
        n = len(sandbox.gate.entries(path))
    except OSError:
        return "unreadable"
    return f"{n:,} entr{'y' if n == 1 else 'ies'}"


def _inside_root(sandbox: WorkspaceAccess, path: str) -> bool:
    real = os.path.realpath(path)
    root = str(sandbox.root)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


# --- get_file_info ---------------------------------------------------------------------


@tool(
    category="read",
    permissions={Permission.READ_FILES},
    summary="Inspect {path}",
)
async def get_file_info(ctx: ToolContext, path: str) -> ToolOutput:
    """Describe a file or folder of the workspace: type, size, line count (text files),
    last modification time (ISO 8601) and permissions. Cheaper than reading the file.

    Args:
        path: File or folder path, relative to the workspace root.
    """
    return await off_loop(_get_file_info, workspace_access(ctx), path)


def _get_file_info(stop: threading.Event, sandbox: WorkspaceAccess, path: str) -> ToolOutput:
    entry = sandbox.resolve(path, must_exist=True, follow_symlinks=False)
    rel = sandbox.relative(entry)
    info: dict[str, object] = {"path": rel}
    lines = [f"path: {rel}"]
    if entry.is_symlink():
        target = os.readlink(entry)
        entry = sandbox.resolve(path, must_exist=True)  # refuses a link leading outside
        lines.append(f"link: a symbolic link to {target} (resolves to {sandbox.relative(entry)})")
        info["link_target"] = target
    try:
        st = sandbox.gate.stat(entry)
    except OSError as exc:
        raise ToolError(f"Could not inspect {path!r}: {exc.strerror or exc}.") from None
    details: list[str] = []
    if stat.S_ISDIR(st.st_mode):
        kind = "folder"
        try:
            info["entries"] = count = len(sandbox.gate.entries(entry))
            details.append(f"entries: {count:,}")
        except OSError:
            pass
    elif stat.S_ISREG(st.st_mode):
        text_kind, n_lines = _describe_text(sandbox, entry, stop)
        kind = f"file ({text_kind})"
        if n_lines is not None:
            info["lines"] = n_lines
            details.append(f"lines: {n_lines:,}")
    else:
        kind = "special file (device, pipe or socket)"
    modified = datetime.fromtimestamp(st.st_mtime).astimezone().isoformat(timespec="seconds")
    mode = f"{stat.filemode(st.st_mode)} ({stat.S_IMODE(st.st_mode):04o})"
    lines += [
        f"type: {kind}",
        f"size: {st.st_size:,} bytes ({byte_size(st.st_size)})",
        *details,
        f"modified: {modified}",
        f"permissions: {mode}",
    ]
    info.update(type=kind, size=st.st_size, modified=modified, permissions=mode)
    return ToolOutput("\n".join(lines), data=info)


def _describe_text(
    sandbox: WorkspaceAccess, path: Path, stop: threading.Event
) -> tuple[str, int | None]:
    try:
        with sandbox.open_file(path) as f:
            sample = f.read(SNIFF_BYTES)
            if b"\0" in sample:
                return "binary", None
            try:
                lossy = sniff(sample, str(path), complete=len(sample) < SNIFF_BYTES)
            except ToolError:
                return "binary", None
            kind = "text, not valid UTF-8" if lossy else "text"
            f.seek(0)
            return kind, count_rest(f, stop)
    except OSError:
        return "unreadable", None
