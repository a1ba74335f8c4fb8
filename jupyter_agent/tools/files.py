"""Workspace file tools: read, list, search, describe, edit, create and delete files.

Every path goes through the workspace :class:`~jupyter_agent.sandbox.Sandbox`; every
write is atomic (a temporary file renamed over the old one). Tool names, argument names
and the shape of their messages are part of the contract with the prompts.
"""

from __future__ import annotations

import asyncio
import codecs
import difflib
import fnmatch
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import regex

from .. import beneath
from .._wording import byte_size
from ..autorun import autorun_for
from ..errors import ToolError
from ..globs import glob_to_regex
from ..permissions import Hazard, Permission
from ..provenance import WrittenFiles
from ..sandbox import SKIP_DIRS, Sandbox
from ._sandbox import sandbox_for
from ._tool import ToolContext, ToolOutput, tool

READ_MAX_LINES = 2000
READ_MAX_BYTES = 100_000
LINE_MAX_CHARS = 2000
"""Longer lines are cut in read_file's output (minified files, data dumps)."""
GREP_LINE_CHARS = 300
GREP_MAX_FILE_BYTES = 10_000_000
GREP_MAX_PATTERN = 10_000
GREP_TIME_LIMIT = 10.0
"""Seconds of matching a search may take: a pattern that backtracks without end (``(a|aa)+$``)
is stopped, and matches without holding the interpreter, so the event loop (and Stop) runs."""
EDIT_MAX_BYTES = 10_000_000
DIFF_TEXT_LINES = 300
"""Diff lines shown to the model; the panel gets up to DIFF_MAX_LINES."""
DIFF_MAX_LINES = 2000
SNIFF_BYTES = 8192
COUNT_MORE_LIMIT = 10_000

T = TypeVar("T")


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
    return await _off_loop(_read_file, sandbox_for(ctx), path, start_line, end_line)


def _read_file(
    stop: threading.Event, sandbox: Sandbox, path: str, start_line: int, end_line: int | None
) -> ToolOutput:
    real = sandbox.resolve(path, must_exist=True)
    _require_regular_file(real, path)
    rel = sandbox.relative(real)
    lossy = False
    shown: list[str] = []
    stopped_at: int | None = None  # the first line left out because of a cap
    try:
        with open(real, "rb") as f:
            sample = f.read(SNIFF_BYTES)
            _sniff(sample, path, complete=len(sample) < SNIFF_BYTES)
            f.seek(0)
            size = n = 0
            for raw, beyond in _bounded_lines(f, stop):
                n += 1
                if n < start_line:
                    continue
                if end_line is not None and n > end_line:
                    break
                if b"\0" in raw:
                    raise ToolError(_binary_message(path))
                line, bad = _decode(raw, cut=beyond > 0)
                lossy = lossy or bad
                if len(line) > LINE_MAX_CHARS or beyond:
                    cut = len(line) - LINE_MAX_CHARS + beyond
                    line = f"{line[:LINE_MAX_CHARS]}… [{cut:,} more characters on this line]"
                entry = f"{n:>6}\t{line}"
                full = len(shown) >= READ_MAX_LINES or size + len(entry) + 1 > READ_MAX_BYTES
                if full and shown:
                    stopped_at = n
                    break
                shown.append(entry)
                size += len(entry) + 1
            total = n + _count_rest(f, stop)  # the lines read, then the unread rest
    except OSError as exc:
        raise ToolError(f"Could not read {path!r}: {exc.strerror or exc}.") from None

    if total == 0:
        return ToolOutput(f"{rel} is empty (0 lines).", data={"path": rel, "total_lines": 0})
    if start_line > total:
        raise ToolError(
            f"start_line={start_line} is past the end of {path!r}, which has {total:,} "
            f"line{'s' if total != 1 else ''}."
        )
    last = start_line + len(shown) - 1
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
        "\n".join(shown + notes),
        data={"path": rel, "start_line": start_line, "end_line": last, "total_lines": total},
    )


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
    return await _off_loop(_list_directory, sandbox_for(ctx), path, recursive, max_entries)


def _list_directory(
    stop: threading.Event, sandbox: Sandbox, path: str, recursive: bool, max_entries: int
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


def _list_entries(sandbox: Sandbox, folder: Path, recursive: bool) -> Iterator[str]:
    asked_for_skipped = any(p in SKIP_DIRS for p in Path(sandbox.relative(folder)).parts)
    try:
        with os.scandir(folder) as it:
            items = sorted(it, key=lambda e: (e.name.lower(), e.name))
    except OSError as exc:
        yield f"{sandbox.relative(folder)}/  (cannot list: {exc.strerror or exc})"
        return
    for entry in items:
        rel = sandbox.relative(entry.path)
        try:
            is_link = entry.is_symlink()
            is_dir = entry.is_dir()
        except OSError:
            is_link, is_dir = False, False
        slash = "/" if is_dir else ""
        if not sandbox.allows(Path(entry.path)):
            if is_link and not _inside_root(sandbox, entry.path):
                yield f"{rel}{slash} -> {os.readlink(entry.path)}  (leads outside the workspace)"
            else:
                yield f"{rel}{slash}  (access refused)"
            continue
        if is_link:
            yield f"{rel}{slash} -> {os.readlink(entry.path)}"
            continue  # never followed: no loops, no surprises
        if is_dir:
            if not recursive:
                yield f"{rel}/  ({_count_entries(entry.path)})"
            elif entry.name in SKIP_DIRS and not asked_for_skipped:
                yield f"{rel}/  (skipped; list it directly to see inside)"
            else:
                yield f"{rel}/"
                yield from _list_entries(sandbox, Path(entry.path), recursive)
            continue
        try:
            size = byte_size(entry.stat().st_size)
        except OSError:
            size = "?"
        kind = "" if entry.is_file() else "  (special file)"
        yield f"{rel}  {size}{kind}"


def _count_entries(path: str) -> str:
    try:
        n = len(os.listdir(path))
    except OSError:
        return "unreadable"
    return f"{n:,} entr{'y' if n == 1 else 'ies'}"


def _inside_root(sandbox: Sandbox, path: str) -> bool:
    real = os.path.realpath(path)
    root = str(sandbox.root)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


# --- grep --------------------------------------------------------------------------------


@tool(
    category="read",
    permissions={Permission.READ_FILES},
    summary=lambda a: f"Search /{a.get('pattern', '')}/ in {a.get('path', '.')}",
)
async def grep(
    ctx: ToolContext,
    pattern: str,
    path: str = ".",
    glob: str | None = None,
    ignore_case: bool = False,
    max_results: int = 200,
) -> ToolOutput:
    """Search the text files under a folder (or one file) for a Python regular expression,
    line by line. Each match is shown as `path:line: text` (text cut to 300 characters).
    Skips binary files, files over 10 MB, files refused by the sandbox, and the folders
    .git, node_modules, .jupyter_agent, __pycache__ and .ipynb_checkpoints unless path is
    inside one. At most max_results matches.

    Args:
        pattern: A Python regular expression (re module syntax), matched within each line.
        path: Folder or file to search, relative to the workspace root.
        glob: Only search files whose name matches this glob, e.g. "*.py" or "*.{py,ipynb}";
            a glob with a slash matches the path, e.g. "src/**/*.py".
        ignore_case: Match without regard to case.
        max_results: Maximum number of matching lines to show (1 to 5,000).
    """
    if not 1 <= max_results <= 5000:
        raise ToolError(f"max_results must be between 1 and 5,000, got {max_results}.")
    if len(pattern) > GREP_MAX_PATTERN:
        raise ToolError(
            f"The pattern {_clip(pattern)!r} is too long to search with (the limit is "
            f"{GREP_MAX_PATTERN:,} characters)."
        )
    try:
        compiled = regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)
    except (regex.error, ValueError, RecursionError) as exc:
        why = "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ToolError(f"Invalid regular expression {_clip(pattern)!r}: {why}.") from None
    globs = _expand_braces(glob) if glob else None
    return await _off_loop(_grep, sandbox_for(ctx), compiled, path, glob, globs, max_results)


def _grep(
    stop: threading.Event,
    sandbox: Sandbox,
    pattern: regex.Pattern[str],
    path: str,
    glob: str | None,
    globs: list[str] | None,
    max_results: int,
) -> ToolOutput:
    real = sandbox.resolve(path, must_exist=True)
    results: list[str] = []
    searched = skipped_binary = skipped_large = files_with_matches = 0
    capped = slow = False
    deadline = time.monotonic() + GREP_TIME_LIMIT
    for file in _walk_files(sandbox, real):
        if stop.is_set():
            break
        if globs is not None and not _glob_matches(globs, file, real, sandbox):
            continue
        try:
            st = file.stat()
            if not stat.S_ISREG(st.st_mode):
                continue
            if st.st_size > GREP_MAX_FILE_BYTES:
                skipped_large += 1
                continue
            data = file.read_bytes()
        except OSError:
            continue
        if b"\0" in data[:SNIFF_BYTES]:
            skipped_binary += 1
            continue
        searched += 1
        rel = sandbox.relative(file)
        found = False
        for lineno, line in enumerate(data.decode("utf-8", errors="replace").split("\n"), 1):
            left = deadline - time.monotonic()
            try:
                if left <= 0 or stop.is_set():
                    raise TimeoutError
                m = pattern.search(line := line.removesuffix("\r"), concurrent=True, timeout=left)
            except TimeoutError:
                slow = True
                break
            if m is None:
                continue
            if len(results) >= max_results:
                capped = True
                break
            found = True
            results.append(f"{rel}:{lineno}: {_around(line, m)}")
        files_with_matches += found
        if capped or slow:
            break

    skipped = []
    if skipped_binary:
        skipped.append(f"{skipped_binary:,} binary")
    if skipped_large:
        skipped.append(f"{skipped_large:,} over 10 MB")
    skipped_note = f"; skipped {' and '.join(skipped)} file(s)" if skipped else ""
    data_out = {"matches": len(results), "files": files_with_matches, "capped": capped}
    if slow and not stop.is_set():
        data_out["timed_out"] = True
        results.append(
            f"… stopped after {GREP_TIME_LIMIT:g} s of matching, in {sandbox.relative(file)}: "
            "the pattern may backtrack without end (nested repetition such as (a+)+ or "
            "(a|aa)+). Simplify it, or narrow the path or glob."
        )
        return ToolOutput("\n".join(results), data=data_out, is_error=len(results) == 1)
    if not results:
        return ToolOutput(
            f"No matches for /{_clip(pattern.pattern)}/ in {sandbox.relative(real)}"
            f"{f' (files matching {glob!r})' if glob else ''}: "
            f"{searched:,} file{'s' if searched != 1 else ''} searched{skipped_note}.",
            data=data_out,
        )
    if capped:
        results.append(
            f"… stopped at max_results={max_results}; there are more matches. Narrow the "
            "pattern, path or glob, or raise max_results."
        )
    else:
        results.append(
            f"[{len(results):,} match{'es' if len(results) != 1 else ''} in "
            f"{files_with_matches:,} file{'s' if files_with_matches != 1 else ''}; "
            f"{searched:,} searched{skipped_note}]"
        )
    return ToolOutput("\n".join(results), data=data_out)


def _walk_files(sandbox: Sandbox, start: Path) -> Iterator[Path]:
    """The readable files under ``start`` (or ``start`` itself), in a stable order."""
    if not start.is_dir():
        yield start
        return
    asked_for_skipped = any(p in SKIP_DIRS for p in Path(sandbox.relative(start)).parts)
    for folder, dirnames, filenames in os.walk(start):
        keep = []
        for d in sorted(dirnames):
            full = Path(folder, d)
            if d in SKIP_DIRS and not asked_for_skipped:
                continue
            if os.path.islink(full) or not sandbox.allows(full):
                continue  # links to folders are not followed (no loops, no escapes)
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            full = Path(folder, name)
            if sandbox.allows(full):
                yield full


def _expand_braces(pattern: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", pattern)
    if m is None:
        return [pattern]
    out: list[str] = []
    for option in m.group(1).split(","):
        out.extend(_expand_braces(pattern[: m.start()] + option + pattern[m.end() :]))
    return out


def _glob_matches(globs: list[str], file: Path, start: Path, sandbox: Sandbox) -> bool:
    for g in globs:
        if "/" not in g:
            if fnmatch.fnmatchcase(file.name, g):
                return True
            continue
        compiled = glob_to_regex(g.lstrip("/"), ignore_case=False)
        candidates = [sandbox.relative(file)]
        if start.is_dir():
            candidates.append(file.relative_to(start).as_posix())
        if any(compiled.match(c) for c in candidates):
            return True
    return False


def _clip(text: str, limit: int = 200) -> str:
    """Model-given text echoed in a message, cut: a 10 MB pattern is not sent back whole."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def _around(line: str, m: regex.Match[str]) -> str:
    line = line.rstrip()
    if len(line) <= GREP_LINE_CHARS:
        return line
    start = max(0, min(m.start() - 100, len(line) - GREP_LINE_CHARS))
    snippet = line[start : start + GREP_LINE_CHARS]
    return ("…" if start else "") + snippet + ("…" if start + GREP_LINE_CHARS < len(line) else "")


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
    return await _off_loop(_get_file_info, sandbox_for(ctx), path)


def _get_file_info(stop: threading.Event, sandbox: Sandbox, path: str) -> ToolOutput:
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
        st = entry.stat()
    except OSError as exc:
        raise ToolError(f"Could not inspect {path!r}: {exc.strerror or exc}.") from None
    details: list[str] = []
    if stat.S_ISDIR(st.st_mode):
        kind = "folder"
        try:
            info["entries"] = count = len(os.listdir(entry))
            details.append(f"entries: {count:,}")
        except OSError:
            pass
    elif stat.S_ISREG(st.st_mode):
        text_kind, n_lines = _describe_text(entry, stop)
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


def _describe_text(path: Path, stop: threading.Event) -> tuple[str, int | None]:
    try:
        with open(path, "rb") as f:
            sample = f.read(SNIFF_BYTES)
            if b"\0" in sample:
                return "binary", None
            try:
                lossy = _sniff(sample, str(path), complete=len(sample) < SNIFF_BYTES)
            except ToolError:
                return "binary", None
            kind = "text, not valid UTF-8" if lossy else "text"
            f.seek(0)
            return kind, _count_rest(f, stop)
    except OSError:
        return "unreadable", None


# --- update_file -------------------------------------------------------------------------


def _assess_write(ctx: ToolContext, args: Mapping[str, Any]) -> list[Hazard]:
    """A write to a path that makes code run later (a git hook, .bashrc…) always asks."""
    sandbox = sandbox_for(ctx)
    real = sandbox.resolve(str(args["path"]), for_write=True, follow_symlinks=False)
    why = autorun_for(sandbox.root).reason(real)
    if why is None:
        return []
    return [Hazard("ask", f"{sandbox.relative(real)}: {why}.")]


def _wrote(ctx: ToolContext, real: Path) -> None:
    written = ctx.resources.get(WrittenFiles)
    if written is not None:
        written.add(real)


@tool(
    category="write",
    permissions={Permission.READ_FILES, Permission.WRITE_FILES},
    summary="Edit {path}",
    assess=_assess_write,
)
def update_file(
    ctx: ToolContext, path: str, old_text: str, new_text: str, replace_all: bool = False
) -> ToolOutput:
    """Edit a text file by exact replacement: find old_text (it must occur exactly once,
    unless replace_all is true) and replace it with new_text. Copy old_text exactly from
    the file, whitespace and indentation included, without read_file's line numbers;
    include enough surrounding lines to make it unique. Returns the unified diff.

    Args:
        path: File path, relative to the workspace root.
        old_text: The exact text to replace (not empty).
        new_text: The text to put in its place (may be empty to delete old_text).
        replace_all: Replace every occurrence instead of requiring exactly one.
    """
    if old_text == "":
        raise ToolError(
            "old_text is empty: give the exact text to replace (use create_file to write a "
            "whole new file)."
        )
    if old_text == new_text:
        raise ToolError("old_text and new_text are the same: there is nothing to change.")
    sandbox = sandbox_for(ctx)
    real = sandbox.resolve(path, must_exist=True, for_write=True)
    content = _read_for_edit(real, path)
    rel = sandbox.relative(real)

    count = content.count(old_text)
    if count == 0 and "\r\n" in content and "\r\n" not in old_text:
        # The model writes "\n"; a Windows file has "\r\n". Match and write CRLF.
        crlf_old = old_text.replace("\n", "\r\n")
        if crlf_old != old_text and content.count(crlf_old):
            old_text, new_text = crlf_old, new_text.replace("\r\n", "\n").replace("\n", "\r\n")
            count = content.count(old_text)
    if count == 0:
        raise ToolError(_not_found_message(path, content, old_text))
    if count > 1 and not replace_all:
        where = _occurrence_lines(content, old_text)
        raise ToolError(
            f"old_text occurs {count} times in {path!r} (at lines {where}); add surrounding "
            "lines to old_text to make it unique, or set replace_all=true to replace every "
            "occurrence."
        )
    updated = content.replace(old_text, new_text, -1 if replace_all else 1)
    _write(sandbox, real, updated, path)
    _wrote(ctx, real)
    diff = unified_diff(content, updated, rel)
    what = f"{count} occurrence{'s' if count != 1 else ''}" if replace_all else "1 occurrence"
    text = f"Updated {rel}: replaced {what}.\n\n{_cap_lines(diff, DIFF_TEXT_LINES)}"
    return ToolOutput(
        text,
        diff=_cap_lines(diff, DIFF_MAX_LINES),
        data={"path": rel, "replacements": count if replace_all else 1},
    )


def _not_found_message(path: str, content: str, old_text: str) -> str:
    text = f"old_text was not found in {path!r}."
    old_lines = old_text.split("\n")
    if all(re.match(r"\s*\d+\t", ln) for ln in old_lines if ln.strip()):
        text += " It seems to include read_file's line numbers: leave them out."
    squash = re.compile(r"\s+")
    if squash.sub(" ", old_text).strip() in squash.sub(" ", content):
        text += " The text is there with different whitespace or indentation."
    lines = content.split("\n")
    best = _closest_window(lines, old_lines)
    if best is not None:
        start, length, ratio = best
        end = min(start + length, len(lines))
        shown = [f"{i + 1:>6}\t{lines[i].removesuffix(chr(13))}" for i in range(start, end)]
        if len(shown) > 20:
            shown = [*shown[:20], f"   … {len(shown) - 20} more lines"]
        text += (
            f" The closest text is at lines {start + 1}–{end} "
            f"({ratio:.0%} similar):\n" + "\n".join(shown)
        )
    text += "\nCopy old_text exactly from the file (read it again if it may have changed)."
    return text


def _closest_window(lines: list[str], old_lines: list[str]) -> tuple[int, int, float] | None:
    """Where the file looks most like ``old_lines``: (first index, length, similarity)."""
    anchors = [(i, ln.strip()) for i, ln in enumerate(old_lines) if ln.strip()]
    if not anchors or not lines:
        return None
    offset, anchor = anchors[0]
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(anchor)
    scored: list[tuple[float, int]] = []
    for i, line in enumerate(lines[:50_000]):
        stripped = line.strip()
        if not stripped:
            continue
        matcher.set_seq1(stripped)
        if matcher.real_quick_ratio() < 0.5 or matcher.quick_ratio() < 0.5:
            continue
        scored.append((matcher.ratio(), i))
    if not scored:
        return None
    scored.sort(reverse=True)
    old = "\n".join(old_lines)
    best: tuple[float, int] | None = None
    for _, i in scored[:20]:
        start = max(0, i - offset)
        window = "\n".join(lines[start : start + len(old_lines)])
        ratio = difflib.SequenceMatcher(None, window, old, autojunk=False).ratio()
        if best is None or ratio > best[0]:
            best = (ratio, start)
    assert best is not None
    if best[0] < 0.4:
        return None
    return best[1], len(old_lines), best[0]


def _occurrence_lines(content: str, needle: str, limit: int = 10) -> str:
    found: list[int] = []
    at = content.find(needle)
    while at != -1 and len(found) < limit + 1:
        found.append(content.count("\n", 0, at) + 1)
        at = content.find(needle, at + len(needle))
    shown = ", ".join(str(n) for n in found[:limit])
    return shown + (", …" if len(found) > limit else "")


# --- create_file -------------------------------------------------------------------------


@tool(
    category="write",
    assess=_assess_write,
    permissions={Permission.WRITE_FILES, Permission.CREATE_FILES},
    summary=lambda a: f"{'Overwrite' if a.get('overwrite') else 'Create'} {a.get('path', '?')}",
)
def create_file(ctx: ToolContext, path: str, content: str, overwrite: bool = False) -> ToolOutput:
    """Create a text file (UTF-8) with the given content, creating missing parent folders.
    Refuses to replace an existing file unless overwrite is true; to change part of a file,
    use update_file instead.

    Args:
        path: File path, relative to the workspace root.
        content: The complete content of the file.
        overwrite: Replace the file if it already exists.
    """
    sandbox = sandbox_for(ctx)
    real = sandbox.resolve(path, for_write=True)
    rel = sandbox.relative(real)
    if real.is_dir():
        raise ToolError(f"{path!r} is a folder; give a file path inside it.")
    existed = os.path.lexists(real)
    old: str | None = None
    if existed:
        if not overwrite:
            raise ToolError(
                f"{path!r} already exists ({_describe_size(real)}); use update_file to change "
                "part of it, or set overwrite=true to replace it whole."
            )
        try:
            old = _read_for_edit(real, path)
        except ToolError:
            old = None  # binary or unreadable: replaced whole, with no text diff
    _write(sandbox, real, content, path, make_folders=True)
    _wrote(ctx, real)
    n = _line_count(content)
    size = byte_size(len(content.encode()))
    diff: str | None
    if not existed:
        diff = unified_diff("", content, rel, new_file=True)
        text = f"Created {rel} ({n:,} line{'s' if n != 1 else ''}, {size})."
    elif old is None:
        diff = None
        text = f"Replaced {rel}, which was not a UTF-8 text file, with {n:,} lines ({size})."
    else:
        diff = unified_diff(old, content, rel)
        text = f"Replaced {rel} ({_line_count(old):,} → {n:,} lines, {size})."
        text += f"\n\n{_cap_lines(diff, DIFF_TEXT_LINES)}" if diff else " The content is unchanged."
    return ToolOutput(
        text,
        diff=_cap_lines(diff, DIFF_MAX_LINES) if diff else None,
        data={"path": rel, "lines": n, "created": not existed},
    )


# --- delete_file -------------------------------------------------------------------------


@tool(
    category="delete",
    assess=_assess_write,
    permissions={Permission.READ_FILES, Permission.DELETE_FILES},
    summary="Delete {path}",
)
def delete_file(ctx: ToolContext, path: str) -> ToolOutput:
    """Delete one file of the workspace (a symbolic link is removed, not its target).
    Folders are refused. Ask the user before deleting anything they did not ask you to.

    Args:
        path: File path, relative to the workspace root.
    """
    sandbox = sandbox_for(ctx)
    entry = sandbox.resolve(path, must_exist=True, for_write=True, follow_symlinks=False)
    rel = sandbox.relative(entry)
    if entry.is_symlink():
        target = os.readlink(entry)
        _unlink(sandbox, entry, path)
        return ToolOutput(
            f"Deleted the symbolic link {rel} (it pointed to {target}; the target is untouched).",
            data={"path": rel, "link_target": target},
        )
    if entry.is_dir():
        raise ToolError(
            f"{path!r} is a folder; delete_file removes single files only. Delete the files "
            "inside it one by one, or ask the user to remove the folder."
        )
    described = _describe_size(entry)
    try:
        old: str | None = _read_for_edit(entry, path, limit=2_000_000)
    except ToolError:
        old = None
    _unlink(sandbox, entry, path)
    diff = unified_diff(old, "", rel, deleted=True) if old is not None else None
    return ToolOutput(
        f"Deleted {rel} ({described}).",
        diff=_cap_lines(diff, DIFF_MAX_LINES) if diff else None,
        data={"path": rel},
    )


def _unlink(sandbox: Sandbox, path: Path, given: str) -> None:
    try:
        beneath.unlink(sandbox.root, _parts(sandbox, path))
    except beneath.MovedUnderfoot:
        raise ToolError(_MOVED.format(given=given)) from None
    except OSError as exc:
        raise ToolError(f"Could not delete {given!r}: {exc.strerror or exc}.") from None


_MOVED = (
    "Refused {given!r}: a folder on its path was changed into a link or a file while it was "
    "being written; nothing was changed."
)


def _parts(sandbox: Sandbox, real: Path) -> list[str]:
    """``real`` (resolved, inside the workspace) as names beneath the workspace's root."""
    return list(real.relative_to(sandbox.root).parts)


FILE_TOOLS = (
    read_file,
    list_directory,
    grep,
    get_file_info,
    update_file,
    create_file,
    delete_file,
)
"""The file tools, in the order the model sees them."""


# --- diffs -------------------------------------------------------------------------------


def unified_diff(
    old: str, new: str, rel: str, *, new_file: bool = False, deleted: bool = False
) -> str:
    """A git-style unified diff of ``old`` → ``new`` (``/dev/null`` for a new or gone file)."""
    before = "/dev/null" if new_file else f"a/{rel}"
    after = "/dev/null" if deleted else f"b/{rel}"
    out = []
    for line in difflib.unified_diff(_split_lines(old), _split_lines(new), before, after):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _split_lines(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _cap_lines(text: str, limit: int) -> str:
    lines = text.splitlines(keepends=True)
    if len(lines) <= limit:
        return text
    rest = len(lines) - limit
    return "".join(lines[:limit]) + f"… {rest:,} more diff lines not shown\n"


# --- reading helpers ---------------------------------------------------------------------


def _require_regular_file(real: Path, given: str) -> None:
    if real.is_dir():
        raise ToolError(f"{given!r} is a folder; use list_directory to see what it holds.")
    if not real.is_file():
        raise ToolError(f"{given!r} is not a regular file (a device, pipe or socket).")


def _binary_message(given: str) -> str:
    return (
        f"{given!r} is a binary file; read_file shows text only. Use get_file_info for its "
        "size and type, or a command (execute_command) that understands the format."
    )


def _sniff(sample: bytes, given: str, *, complete: bool) -> bool:
    """Refuse a binary sample; return whether the text is not valid UTF-8 (read lossily)."""
    if b"\0" in sample:
        raise ToolError(_binary_message(given))
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
        raise ToolError(_binary_message(given))
    return True


def _decode(raw: bytes, *, cut: bool = False) -> tuple[str, bool]:
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


LINE_READ_BYTES = 1 << 16
"""The most of one line read into memory: a 1 GB file with no newline is one line."""


def _bounded_lines(f: BinaryIO, stop: threading.Event) -> Iterator[tuple[bytes, int]]:
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


def _count_rest(f: BinaryIO, stop: threading.Event) -> int:
    """How many lines lie between the current position and the end of the file."""
    count = 0
    last = b"\n"
    while not stop.is_set() and (chunk := f.read(1 << 20)):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


async def _off_loop(fn: Callable[..., T], *args: Any) -> T:
    """Run a reading tool's body in a thread, so a big folder or file never blocks the
    event loop (where the Stop button is heard); on cancel, tell the thread to give up."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(fn, stop, *args)
    finally:
        stop.set()


def _read_for_edit(real: Path, given: str, *, limit: int = EDIT_MAX_BYTES) -> str:
    if real.is_dir():
        raise ToolError(f"{given!r} is a folder, not a file.")
    if not real.is_file():
        raise ToolError(f"{given!r} is not a regular file (a device, pipe or socket).")
    try:
        size = real.stat().st_size
        if size > limit:
            raise ToolError(
                f"{given!r} is too large to edit here ({byte_size(size)}; the limit is "
                f"{byte_size(limit)})."
            )
        data = real.read_bytes()
    except OSError as exc:
        raise ToolError(f"Could not read {given!r}: {exc.strerror or exc}.") from None
    if b"\0" in data:
        raise ToolError(f"{given!r} is a binary file; only text files can be edited.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            f"{given!r} is not valid UTF-8 text; it cannot be edited safely with these tools."
        ) from None


def _write(
    sandbox: Sandbox, real: Path, text: str, given: str, *, make_folders: bool = False
) -> None:
    """Write ``real`` atomically, through folder descriptors beneath the workspace's root,
    so a folder swapped for a link after the check cannot lead the write elsewhere."""
    try:
        beneath.write_bytes(
            sandbox.root, _parts(sandbox, real), text.encode("utf-8"), make_folders=make_folders
        )
    except beneath.MovedUnderfoot:
        raise ToolError(_MOVED.format(given=given)) from None
    except (FileExistsError, NotADirectoryError):
        raise ToolError(
            f"Cannot create {given!r}: a part of its folder path is a file, not a folder."
        ) from None
    except OSError as exc:
        raise ToolError(f"Could not write {given!r}: {exc.strerror or exc}.") from None


def _line_count(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _describe_size(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError:
        return "size unknown"
    return byte_size(size)
