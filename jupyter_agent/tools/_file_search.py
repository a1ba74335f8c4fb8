"""The workspace search tool, grep: a regular expression over the text files of a folder.

Invariants kept here: the sandbox decides which files are searched (links to folders are
not followed); binary and very large files are skipped; a pattern is matched under a time
limit without holding the interpreter, so a pattern that backtracks without end is stopped
and the event loop (and Stop) keeps running; model-given text is echoed back cut.

What is searched is each file as the model would read it, secrets masked (and a glob is
matched against names as the model reads them): a match, its line, a count or a time-out
can only be one a read would show, never an answer about a hidden value, however many
searches ask (:mod:`._masked`).
"""

from __future__ import annotations

import fnmatch
import os
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import regex

from ..errors import ToolError
from ..permissions import Permission
from ..secrets.redaction import Masker, Secrets
from ..workspace.access import SKIP_DIRS, WorkspaceAccess
from ..workspace.globs import glob_to_regex
from ..workspace.paths import read_limited
from ._file_text import SNIFF_BYTES, off_loop
from ._masked import secrets_for, seen_lines
from ._tool import ToolContext, ToolOutput, tool
from ._workspace_access import workspace_access

GREP_LINE_CHARS = 300
GREP_MAX_FILE_BYTES = 10_000_000
GREP_MAX_PATTERN = 10_000
GREP_TIME_LIMIT = 10.0
"""Seconds of matching a search may take: a pattern that backtracks without end (``(a|aa)+$``)
is stopped, and matches without holding the interpreter, so the event loop (and Stop) runs."""


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
    return await off_loop(
        _grep, workspace_access(ctx), secrets_for(ctx), compiled, path, glob, globs, max_results
    )


@dataclass
class _Tally:
    """What a search found and passed over so far."""

    results: list[str] = field(default_factory=list)
    searched: int = 0
    skipped_binary: int = 0
    skipped_large: int = 0
    files_with_matches: int = 0
    capped: bool = False
    """More matches than max_results."""
    slow_in: str | None = None
    """The file whose matching ran out of time (the pattern may backtrack without end)."""


def _grep(
    stop: threading.Event,
    sandbox: WorkspaceAccess,
    secrets: Secrets,
    pattern: regex.Pattern[str],
    path: str,
    glob: str | None,
    globs: list[str] | None,
    max_results: int,
) -> ToolOutput:
    real = sandbox.resolve(path, must_exist=True)
    masker = secrets.masker()
    tally = _Tally()
    deadline = time.monotonic() + GREP_TIME_LIMIT
    for file in _walk_files(sandbox, real):
        if stop.is_set():
            break
        if globs is not None and not _glob_matches(globs, file, real, sandbox, masker):
            continue
        lines = _file_lines(sandbox, file, masker, tally)
        if lines is not None:
            rel = sandbox.relative(file)
            _search_file(pattern, lines, rel, deadline, stop, max_results, tally)
        if tally.capped or tally.slow_in is not None:
            break
    return _grep_output(tally, sandbox.relative(real), pattern, glob, max_results, stop)


def _file_lines(
    sandbox: WorkspaceAccess, file: Path, masker: Masker, tally: _Tally
) -> list[str] | None:
    """The lines of ``file`` as the model reads them; ``None`` for a file passed over (one
    that cannot be opened, too large, or binary)."""
    try:  # through the gate: never a FIFO or a device, never a link swapped in
        fd = sandbox.gate.open_file(file)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if st.st_size > GREP_MAX_FILE_BYTES:
            tally.skipped_large += 1
            return None
        data, _cut = read_limited(fd, GREP_MAX_FILE_BYTES)
        after = os.fstat(fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    if b"\0" in data[:SNIFF_BYTES]:
        tally.skipped_binary += 1
        return None
    tally.searched += 1
    return seen_lines(masker, data.decode("utf-8", errors="replace"), st, after)


def _search_file(
    pattern: regex.Pattern[str],
    lines: list[str],
    rel: str,
    deadline: float,
    stop: threading.Event,
    max_results: int,
    tally: _Tally,
) -> None:
    """Add the matching lines of one file to ``tally``, until max_results or the deadline."""
    found = False
    for lineno, line in enumerate(lines, 1):
        left = deadline - time.monotonic()
        try:
            if left <= 0 or stop.is_set():
                raise TimeoutError
            m = pattern.search(line := line.removesuffix("\r"), concurrent=True, timeout=left)
        except TimeoutError:
            tally.slow_in = rel
            break
        if m is None:
            continue
        if len(tally.results) >= max_results:
            tally.capped = True
            break
        found = True
        tally.results.append(f"{rel}:{lineno}: {_around(line, m)}")
    tally.files_with_matches += found


def _grep_output(
    tally: _Tally,
    where: str,
    pattern: regex.Pattern[str],
    glob: str | None,
    max_results: int,
    stop: threading.Event,
) -> ToolOutput:
    """The matches, and a last line saying how the search ended."""
    results, searched, files = tally.results, tally.searched, tally.files_with_matches
    skipped = []
    if tally.skipped_binary:
        skipped.append(f"{tally.skipped_binary:,} binary")
    if tally.skipped_large:
        skipped.append(f"{tally.skipped_large:,} over 10 MB")
    skipped_note = f"; skipped {' and '.join(skipped)} file(s)" if skipped else ""
    data_out = {"matches": len(results), "files": files, "capped": tally.capped}
    if tally.slow_in is not None and not stop.is_set():
        data_out["timed_out"] = True
        results.append(
            f"… stopped after {GREP_TIME_LIMIT:g} s of matching, in {tally.slow_in}: "
            "the pattern may backtrack without end (nested repetition such as (a+)+ or "
            "(a|aa)+). Simplify it, or narrow the path or glob."
        )
        return ToolOutput("\n".join(results), data=data_out, is_error=len(results) == 1)
    if not results:
        return ToolOutput(
            f"No matches for /{_clip(pattern.pattern)}/ in {where}"
            f"{f' (files matching {glob!r})' if glob else ''}: "
            f"{searched:,} file{'s' if searched != 1 else ''} searched{skipped_note}.",
            data=data_out,
        )
    if tally.capped:
        results.append(
            f"… stopped at max_results={max_results}; there are more matches. Narrow the "
            "pattern, path or glob, or raise max_results."
        )
    else:
        results.append(
            f"[{len(results):,} match{'es' if len(results) != 1 else ''} in "
            f"{files:,} file{'s' if files != 1 else ''}; "
            f"{searched:,} searched{skipped_note}]"
        )
    return ToolOutput("\n".join(results), data=data_out)


def _walk_files(sandbox: WorkspaceAccess, start: Path) -> Iterator[Path]:
    """The readable files under ``start`` (or ``start`` itself), in a stable order; walked
    through the gate, so a folder swapped for a link meanwhile is not followed."""
    if not start.is_dir():
        yield start
        return
    asked_for_skipped = any(p in SKIP_DIRS for p in Path(sandbox.relative(start)).parts)
    try:
        walk = sandbox.gate.walk(start)
        for parts, dirnames, filenames, _fd in walk:
            folder = sandbox.root.joinpath(*parts)
            keep = []
            for d in sorted(dirnames):
                full = folder / d
                if d in SKIP_DIRS and not asked_for_skipped:
                    continue
                if os.path.islink(full) or not sandbox.allows(full):
                    continue  # links to folders are not followed (no loops, no escapes)
                keep.append(d)
            dirnames[:] = keep
            for name in sorted(filenames):
                full = folder / name
                if sandbox.allows(full):
                    yield full
    except OSError:
        return


def _expand_braces(pattern: str) -> list[str]:
    m = re.search(r"\{([^{}]*)\}", pattern)
    if m is None:
        return [pattern]
    out: list[str] = []
    for option in m.group(1).split(","):
        out.extend(_expand_braces(pattern[: m.start()] + option + pattern[m.end() :]))
    return out


def _glob_matches(
    globs: list[str], file: Path, start: Path, sandbox: WorkspaceAccess, masker: Masker
) -> bool:
    """Whether a glob matches ``file``'s name or path, as the model reads them."""
    for g in globs:
        if "/" not in g:
            if fnmatch.fnmatchcase(masker.redact(file.name), g):
                return True
            continue
        compiled = glob_to_regex(g.lstrip("/"), ignore_case=False)
        candidates = [masker.redact(sandbox.relative(file))]
        if start.is_dir():
            candidates.append(masker.redact(file.relative_to(start).as_posix()))
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
