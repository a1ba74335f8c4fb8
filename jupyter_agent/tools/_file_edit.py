"""The workspace editing tools: update_file, create_file and delete_file, and their diffs.

Invariants kept here:

- Every read and write goes through the path gate (:attr:`WorkspaceAccess.gate`): folder
  descriptors beneath the workspace's root, so a folder swapped for a link after the
  sandbox's check cannot lead it elsewhere; every write is atomic (a temporary file
  renamed over the old one).
- A write to a path that makes code run later (a git hook, .bashrc…) always asks.
- Only UTF-8 text files are edited; every change is returned as a unified diff, and each
  file written is recorded for the session
  (:class:`~jupyter_agent.workspace.provenance.WrittenFiles`).
- The model's ``old_text`` is matched against the file as the model reads it (secrets
  masked), and every diff is of that view: no answer of these tools depends on what the
  redaction hides, and no edit cuts, copies or reveals a hidden value (:mod:`._masked`).
- A write the user approved writes the diff its card showed: the card binds the file as the
  diff was computed from it, and the tool checks it right before writing (a file changed
  meanwhile is shown on a fresh card with the new diff).
- No write changes a file an approved command is running (see ``WrittenFiles.running``).
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from .._wording import byte_size
from ..approvals import Bound, FilePreview, Shown, file_digest, file_key
from ..errors import ToolError
from ..permissions import Hazard, Permission
from ..secrets.redacted import Redacted
from ..secrets.redaction import Masker
from ..workspace.access import WorkspaceAccess
from ..workspace.autorun import autorun_for
from ..workspace.paths import FileTooLarge, MovedUnderfoot, NotRegularFile, PathRefused
from ..workspace.provenance import WrittenFiles, code_digest
from ._masked import Found, edited, find_in_view, raw_line, secrets_for
from ._tool import ToolContext, ToolOutput, tool
from ._workspace_access import workspace_access

EDIT_MAX_BYTES = 10_000_000
DELETE_DIFF_BYTES = 2_000_000
"""The largest file whose deletion is shown as a diff."""
DIFF_TEXT_LINES = 300
"""Diff lines shown to the model; the panel gets up to DIFF_MAX_LINES."""
DIFF_MAX_LINES = 2000


# --- update_file -------------------------------------------------------------------------


def _assess_write(ctx: ToolContext, args: Mapping[str, Any]) -> list[Hazard]:
    """A write to a path that makes code run later (a git hook, .bashrc…) always asks."""
    sandbox = workspace_access(ctx)
    real = sandbox.resolve(str(args["path"]), for_write=True, follow_symlinks=False)
    why = autorun_for(sandbox.root).reason(real)
    if why is None:
        return []
    return [Hazard("ask", f"{sandbox.relative(real)}: {why}.", rememberable=False)]


def _wrote(ctx: ToolContext, real: Path) -> None:
    written = ctx.resources.get(WrittenFiles)
    if written is not None:
        written.add(real)


@contextlib.contextmanager
def _writing(ctx: ToolContext, real: Path, given: str) -> Iterator[None]:
    """Around a write: refused while an approved command runs the file."""
    written = ctx.resources.get(WrittenFiles)
    if written is None:
        yield
        return
    with written.writing(real, given):
        yield


def _base_digest(real: Path, text: str | None) -> str:
    """What an approval binds of a file a write replaces: the text its diff was computed
    from, or, for what is no text file (or not there), the file itself."""
    return file_digest(str(real), text) if text is not None else code_digest(real)


def _bound(given: str, rel: str, real: Path, text: str | None) -> tuple[Bound, ...]:
    return (Bound(file_key(given), rel, _base_digest(real, text)),)


# A preview reads the file and diffs it (quadratic at worst): in a thread, never on the
# event loop, which the kernel and the Stop button share.


async def _preview_update(ctx: ToolContext, args: Mapping[str, Any]) -> Shown:
    """The diff update_file would make, computed without writing; bound to the text it
    was computed from."""
    sandbox = workspace_access(ctx)
    real = sandbox.resolve(str(args["path"]), must_exist=True, for_write=True)
    given = str(args["path"])
    secrets = secrets_for(ctx)

    def work() -> Shown:
        content = _read_for_edit(sandbox, real, given)
        masker = secrets.masker()
        before = masker.view(content)
        _, after, _ = _replaced(
            masker,
            before,
            str(args["old_text"]),
            str(args["new_text"]),
            bool(args.get("replace_all")),
            given,
        )
        rel = sandbox.relative(real)
        diff = unified_diff(before.text, after.text, rel)
        card = FilePreview(path=rel, action="edit", diff=_cap_lines(diff, DIFF_MAX_LINES))
        return Shown(card, _bound(given, rel, real, content))

    return await asyncio.to_thread(work)


async def _preview_create(ctx: ToolContext, args: Mapping[str, Any]) -> Shown:
    """The diff create_file would make, computed without writing; bound to the file it
    replaces (to no file, for a new one)."""
    sandbox = workspace_access(ctx)
    given = str(args["path"])
    real = sandbox.resolve(given, for_write=True)
    rel = sandbox.relative(real)
    content = str(args["content"])
    secrets = secrets_for(ctx)

    def work() -> Shown:
        redact = secrets.masker().redact
        old: str | None = None
        if not os.path.lexists(real):
            diff: str | None = unified_diff("", redact(content), rel, new_file=True)
            action: Literal["create", "overwrite"] = "create"
        else:
            action = "overwrite"
            try:
                old = _read_for_edit(sandbox, real, given)
                diff = unified_diff(redact(old), redact(content), rel)
            except ToolError:
                diff = None  # not a text file: replaced whole
        card = FilePreview(
            path=rel, action=action, diff=_cap_lines(diff, DIFF_MAX_LINES) if diff else diff
        )
        return Shown(card, _bound(given, rel, real, old))

    return await asyncio.to_thread(work)


async def _preview_delete(ctx: ToolContext, args: Mapping[str, Any]) -> Shown:
    """What delete_file would remove, as a diff, computed without deleting; bound to the
    file as it is (a link: to where it leads)."""
    sandbox = workspace_access(ctx)
    given = str(args["path"])
    entry = sandbox.resolve(given, must_exist=True, for_write=True, follow_symlinks=False)
    rel = sandbox.relative(entry)
    secrets = secrets_for(ctx)

    def work() -> Shown:
        old = None if entry.is_symlink() else _deleted_text(sandbox, entry, given)
        diff = None
        if old is not None:
            seen = secrets.masker().redact(old)
            diff = _cap_lines(unified_diff(seen, "", rel, deleted=True), DIFF_MAX_LINES)
        card = FilePreview(path=rel, action="delete", diff=diff)
        return Shown(card, _bound(given, rel, entry, old))

    return await asyncio.to_thread(work)


def _deleted_text(sandbox: WorkspaceAccess, entry: Path, given: str) -> str | None:
    """The text delete_file shows it removes (None: not a text file, or too large)."""
    try:
        return _read_for_edit(sandbox, entry, given, limit=DELETE_DIFF_BYTES)
    except ToolError:
        return None


def _replaced(
    masker: Masker, view: Redacted, old_text: str, new_text: str, replace_all: bool, path: str
) -> tuple[str, Redacted, int]:
    """The file's text with the replacement made, matched against and made through the
    file as the model reads it (``view``); the edited text's view; and how many times
    old_text occurs there. Raises :class:`ToolError` saying what is wrong."""
    found = find_in_view(view, old_text, new_text)
    count = len(found.starts)
    if count == 0:
        raise ToolError(_not_found_message(path, view, old_text))
    if count > 1 and not replace_all:
        where = _occurrence_lines(view, found.starts)
        raise ToolError(
            f"old_text occurs {count} times in {path!r} (at lines {where}); add surrounding "
            "lines to old_text to make it unique, or set replace_all=true to replace every "
            "occurrence."
        )
    if not replace_all:
        found = Found(found.old, found.new, found.starts[:1])
    updated, after = edited(masker, view, found, repr(path))
    return updated, after, count


@tool(
    category="write",
    permissions={Permission.READ_FILES, Permission.WRITE_FILES},
    summary="Edit {path}",
    assess=_assess_write,
    preview=_preview_update,
)
async def update_file(
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
    sandbox = workspace_access(ctx)
    real = sandbox.resolve(path, must_exist=True, for_write=True)
    rel = sandbox.relative(real)
    secrets = secrets_for(ctx)

    def prepare() -> tuple[str, int, str, str]:
        content = _read_for_edit(sandbox, real, path)
        masker = secrets.masker()
        before = masker.view(content)
        updated, after, count = _replaced(masker, before, old_text, new_text, replace_all, path)
        diff = unified_diff(before.text, after.text, rel)
        return updated, count, diff, _base_digest(real, content)

    updated, count, diff, base = await asyncio.to_thread(prepare)
    ctx.check_shown(file_key(path), base)
    with _writing(ctx, real, path):
        _write(sandbox, real, updated, path)  # on the loop: after a Stop, nothing is written
    _wrote(ctx, real)
    what = f"{count} occurrence{'s' if count != 1 else ''}" if replace_all else "1 occurrence"
    text = f"Updated {rel}: replaced {what}.\n\n{_cap_lines(diff, DIFF_TEXT_LINES)}"
    return ToolOutput(
        text,
        diff=_cap_lines(diff, DIFF_MAX_LINES),
        data={"path": rel, "replacements": count if replace_all else 1},
    )


def _not_found_message(path: str, view: Redacted, old_text: str) -> str:
    """Why old_text is not in the file, and where the file looks most like it; all of it
    from the file as the model reads it (a likeness to hidden text would tell of it)."""
    text = f"old_text was not found in {path!r}."
    old_lines = old_text.split("\n")
    if all(re.match(r"\s*\d+\t", ln) for ln in old_lines if ln.strip()):
        text += " It seems to include read_file's line numbers: leave them out."
    squash = re.compile(r"\s+")
    if squash.sub(" ", old_text).strip() in squash.sub(" ", view.text):
        text += " The text is there with different whitespace or indentation."
    lines = view.lines()
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


def _occurrence_lines(view: Redacted, starts: list[int], limit: int = 10) -> str:
    shown = ", ".join(str(raw_line(view, at)) for at in starts[:limit])
    return shown + (", …" if len(starts) > limit else "")


# --- create_file -------------------------------------------------------------------------


@tool(
    category="write",
    assess=_assess_write,
    preview=_preview_create,
    permissions={Permission.WRITE_FILES, Permission.CREATE_FILES},
    summary=lambda a: f"{'Overwrite' if a.get('overwrite') else 'Create'} {a.get('path', '?')}",
)
async def create_file(
    ctx: ToolContext, path: str, content: str, overwrite: bool = False
) -> ToolOutput:
    """Create a text file (UTF-8) with the given content, creating missing parent folders.
    Refuses to replace an existing file unless overwrite is true; to change part of a file,
    use update_file instead.

    Args:
        path: File path, relative to the workspace root.
        content: The complete content of the file.
        overwrite: Replace the file if it already exists.
    """
    sandbox = workspace_access(ctx)
    real = sandbox.resolve(path, for_write=True)
    rel = sandbox.relative(real)
    if real.is_dir():
        raise ToolError(f"{path!r} is a folder; give a file path inside it.")
    secrets = secrets_for(ctx)

    def prepare() -> tuple[bool, str | None, str | None, str]:
        """Whether the file exists, its old text (None: none, or not text), the diff as the
        model reads it, and what binds the write (the file as the diff was made from it)."""
        redact = secrets.masker().redact
        if not os.path.lexists(real):
            new = unified_diff("", redact(content), rel, new_file=True)
            return False, None, new, _base_digest(real, None)
        if not overwrite:
            raise ToolError(
                f"{path!r} already exists ({_describe_size(sandbox, real)}); use update_file "
                "to change part of it, or set overwrite=true to replace it whole."
            )
        try:
            old = _read_for_edit(sandbox, real, path)
        except ToolError:
            return True, None, None, _base_digest(real, None)  # not text: replaced whole
        diff = unified_diff(redact(old), redact(content), rel)
        return True, old, diff, _base_digest(real, old)

    existed, old, diff, base = await asyncio.to_thread(prepare)
    ctx.check_shown(file_key(path), base)
    with _writing(ctx, real, path):
        _write(sandbox, real, content, path, make_folders=True)  # on the loop (see update_file)
    _wrote(ctx, real)
    n = _line_count(content)
    size = byte_size(len(content.encode()))
    if not existed:
        text = f"Created {rel} ({n:,} line{'s' if n != 1 else ''}, {size})."
    elif old is None:
        text = f"Replaced {rel}, which was not a UTF-8 text file, with {n:,} lines ({size})."
    else:
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
    preview=_preview_delete,
    permissions={Permission.READ_FILES, Permission.DELETE_FILES},
    summary="Delete {path}",
)
async def delete_file(ctx: ToolContext, path: str) -> ToolOutput:
    """Delete one file of the workspace (a symbolic link is removed, not its target).
    Folders are refused. Ask the user before deleting anything they did not ask you to.

    Args:
        path: File path, relative to the workspace root.
    """
    sandbox = workspace_access(ctx)
    entry = sandbox.resolve(path, must_exist=True, for_write=True, follow_symlinks=False)
    rel = sandbox.relative(entry)
    if entry.is_symlink():
        target = os.readlink(entry)
        ctx.check_shown(file_key(path), await asyncio.to_thread(_base_digest, entry, None))
        with _writing(ctx, entry, path):
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
    described = _describe_size(sandbox, entry)
    secrets = secrets_for(ctx)

    def prepare() -> tuple[str | None, str]:
        """What is removed, as a diff of the text the model reads; and what binds it."""
        old = _deleted_text(sandbox, entry, path)
        seen = unified_diff(secrets.masker().redact(old), "", rel, deleted=True) if old else None
        return seen, _base_digest(entry, old)

    diff, base = await asyncio.to_thread(prepare)
    ctx.check_shown(file_key(path), base)
    with _writing(ctx, entry, path):
        _unlink(sandbox, entry, path)  # on the loop (see update_file)
    return ToolOutput(
        f"Deleted {rel} ({described}).",
        diff=_cap_lines(diff, DIFF_MAX_LINES) if diff else None,
        data={"path": rel},
    )


def _unlink(sandbox: WorkspaceAccess, path: Path, given: str) -> None:
    try:
        sandbox.gate.remove(path)
    except (MovedUnderfoot, PathRefused):
        raise ToolError(_MOVED.format(given=given)) from None
    except OSError as exc:
        raise ToolError(f"Could not delete {given!r}: {exc.strerror or exc}.") from None


_MOVED = (
    "Refused {given!r}: a folder on its path was changed into a link or a file while it was "
    "being written; nothing was changed."
)


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


# --- reading and writing -----------------------------------------------------------------


def _read_for_edit(
    sandbox: WorkspaceAccess, real: Path, given: str, *, limit: int = EDIT_MAX_BYTES
) -> str:
    try:
        data = sandbox.gate.read(real, limit=limit)
    except IsADirectoryError:
        raise ToolError(f"{given!r} is a folder, not a file.") from None
    except FileTooLarge:
        size = _describe_size(sandbox, real)
        raise ToolError(
            f"{given!r} is too large to edit here ({size}; the limit is {byte_size(limit)})."
        ) from None
    except NotRegularFile as exc:
        raise ToolError(f"{given!r} is {exc.what}, not a regular file.") from None
    except PathRefused as exc:
        raise ToolError(str(exc)) from None
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
    sandbox: WorkspaceAccess, real: Path, text: str, given: str, *, make_folders: bool = False
) -> None:
    """Write ``real`` atomically, through folder descriptors beneath the workspace's root,
    so a folder swapped for a link after the check cannot lead the write elsewhere."""
    try:
        sandbox.gate.write(real, text.encode("utf-8"), make_folders=make_folders)
    except (MovedUnderfoot, PathRefused):
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


def _describe_size(sandbox: WorkspaceAccess, path: Path) -> str:
    try:
        size = sandbox.gate.stat(path).st_size
    except OSError:
        return "size unknown"
    return byte_size(size)
