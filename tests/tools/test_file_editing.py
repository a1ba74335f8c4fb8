"""The workspace editing tools (``update_file``, ``create_file``, ``delete_file``), called as
the model calls them (validation included): the diffs they return, what they refuse
(protected files, escapes, pointless or ambiguous edits), that a failed or cancelled write
leaves the file intact, and that no write leads outside the workspace, not even through a
folder swapped for a link mid-write or a huge path."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat

import pytest
from file_tool_calls import only_files, refused, run
from inline_snapshot import snapshot

from jupyter_agent.errors import ToolError
from jupyter_agent.tools import ToolContext
from jupyter_agent.tools.files import create_file, delete_file, update_file

# --- update_file -------------------------------------------------------------------------


async def test_update_file_replaces_and_returns_the_diff(workspace):
    target = workspace / "a.py"
    target.write_text("def f():\n    return 1\n\nprint(f())\n")
    out = await run(update_file, workspace, path="a.py", old_text="return 1", new_text="return 2")
    assert target.read_text() == "def f():\n    return 2\n\nprint(f())\n"
    diff = (
        "--- a/a.py\n"
        "+++ b/a.py\n"
        "@@ -1,4 +1,4 @@\n"
        " def f():\n"
        "-    return 1\n"
        "+    return 2\n"
        " \n"
        " print(f())\n"
    )
    assert out.diff == diff
    assert out.text == f"Updated a.py: replaced 1 occurrence.\n\n{diff}"
    assert out.data == {"path": "a.py", "replacements": 1}


async def test_update_file_diff_marks_a_missing_final_newline(workspace):
    (workspace / "a.txt").write_text("one\ntwo")
    out = await run(update_file, workspace, path="a.txt", old_text="two", new_text="three")
    assert out.diff is not None
    assert out.diff.endswith(
        "-two\n\\ No newline at end of file\n+three\n\\ No newline at end of file\n"
    )


async def test_update_file_refuses_missing_text_and_shows_the_closest_lines(workspace):
    (workspace / "a.py").write_text("def load(path):\n    return read_csv(path)\n")
    message = await refused(
        update_file,
        workspace,
        path="a.py",
        old_text="def load(pth):\n    return read_csv(pth)",
        new_text="x",
    )
    assert message.startswith("old_text was not found in 'a.py'. The closest text is at lines 1–2")
    assert "     1\tdef load(path):\n     2\t    return read_csv(path)" in message
    assert (workspace / "a.py").read_text() == "def load(path):\n    return read_csv(path)\n"


async def test_update_file_notices_whitespace_and_line_numbers(workspace):
    (workspace / "a.py").write_text("if x:\n    y = 1\n")
    message = await refused(
        update_file, workspace, path="a.py", old_text="if x:\n  y = 1", new_text="z"
    )
    assert "The text is there with different whitespace or indentation." in message
    message = await refused(
        update_file, workspace, path="a.py", old_text="     2\t    y = 1", new_text="z"
    )
    assert "It seems to include read_file's line numbers: leave them out." in message


async def test_update_file_refuses_ambiguous_text(workspace):
    (workspace / "a.py").write_text("x = 1\ny = 2\nx = 1\nx = 1\n")
    message = await refused(update_file, workspace, path="a.py", old_text="x = 1", new_text="x = 0")
    assert message == snapshot(
        "old_text occurs 3 times in 'a.py' (at lines 1, 3, 4); add surrounding lines to "
        "old_text to make it unique, or set replace_all=true to replace every occurrence."
    )
    out = await run(
        update_file, workspace, path="a.py", old_text="x = 1", new_text="x = 0", replace_all=True
    )
    assert (workspace / "a.py").read_text() == "x = 0\ny = 2\nx = 0\nx = 0\n"
    assert out.text.startswith("Updated a.py: replaced 3 occurrences.")


async def test_update_file_refuses_pointless_edits(workspace):
    (workspace / "a.py").write_text("x\n")
    assert "old_text is empty" in await refused(
        update_file, workspace, path="a.py", old_text="", new_text="y"
    )
    assert "the same" in await refused(
        update_file, workspace, path="a.py", old_text="x", new_text="x"
    )


async def test_update_file_keeps_windows_line_endings(workspace):
    (workspace / "win.txt").write_bytes(b"a\r\nb\r\nc\r\n")
    await run(update_file, workspace, path="win.txt", old_text="a\nb", new_text="A\nB")
    assert (workspace / "win.txt").read_bytes() == b"A\r\nB\r\nc\r\n"


async def test_update_file_keeps_permissions(workspace):
    target = workspace / "run.sh"
    target.write_text("echo 1\n")
    target.chmod(0o755)
    await run(update_file, workspace, path="run.sh", old_text="1", new_text="2")
    assert stat.S_IMODE(target.stat().st_mode) == 0o755


async def test_update_file_refuses_binary_and_protected_files(workspace):
    (workspace / "b.bin").write_bytes(b"ab\x00cd")
    assert "is a binary file" in await refused(
        update_file, workspace, path="b.bin", old_text="ab", new_text="x"
    )
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n")
    assert "may not write inside .git/" in await refused(
        update_file, workspace, path=".git/config", old_text="core", new_text="x"
    )


async def test_a_failed_write_leaves_the_file_intact_and_no_temp_file(workspace, monkeypatch):
    (workspace / "a.py").write_text("x = 1\n")

    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    message = await refused(update_file, workspace, path="a.py", old_text="1", new_text="2")
    assert message == "Could not write 'a.py': No space left on device."
    assert (workspace / "a.py").read_text() == "x = 1\n"
    assert only_files(workspace) == ["a.py"]


async def test_a_cancel_landing_in_a_write_leaves_the_file_intact_and_no_temp_file(
    workspace, monkeypatch
):
    (workspace / "a.py").write_text("x = 1\n")

    def cancelled(*args, **kwargs):
        raise asyncio.CancelledError  # the Stop arriving while the new file is renamed

    monkeypatch.setattr(os, "replace", cancelled)
    task = asyncio.create_task(run(update_file, workspace, path="a.py", old_text="1", new_text="2"))
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (workspace / "a.py").read_text() == "x = 1\n"
    assert only_files(workspace) == ["a.py"]


# --- create_file -------------------------------------------------------------------------


async def test_create_file_makes_parents_and_returns_a_diff(workspace):
    out = await run(create_file, workspace, path="pkg/sub/mod.py", content="a = 1\nb = 2\n")
    assert (workspace / "pkg" / "sub" / "mod.py").read_text() == "a = 1\nb = 2\n"
    assert out.text == "Created pkg/sub/mod.py (2 lines, 12 B)."
    assert out.diff == ("--- /dev/null\n+++ b/pkg/sub/mod.py\n@@ -0,0 +1,2 @@\n+a = 1\n+b = 2\n")


async def test_create_file_refuses_to_overwrite_unless_asked(workspace):
    (workspace / "a.txt").write_text("old\n")
    message = await refused(create_file, workspace, path="a.txt", content="new\n")
    assert message == snapshot(
        "'a.txt' already exists (4 B); use update_file to change part of it, or set "
        "overwrite=true to replace it whole."
    )
    assert (workspace / "a.txt").read_text() == "old\n"
    out = await run(create_file, workspace, path="a.txt", content="new\n", overwrite=True)
    assert (workspace / "a.txt").read_text() == "new\n"
    assert out.diff == "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-old\n+new\n"
    assert out.text.startswith("Replaced a.txt (1 → 1 lines, 4 B).\n\n--- a/a.txt")


async def test_create_file_refuses_folders_escapes_and_the_session_store(workspace):
    (workspace / "d").mkdir()
    assert "is a folder" in await refused(create_file, workspace, path="d", content="")
    assert "'..' leads outside" in await refused(create_file, workspace, path="../x", content="")
    assert "session store" in await refused(
        create_file, workspace, path=".jupyter_agent/x.json", content="{}"
    )
    assert ".env files may hold secrets" in await refused(
        create_file, workspace, path=".env", content="A=1"
    )
    (workspace / "f").write_text("")
    assert "is a file, not a folder" in await refused(
        create_file, workspace, path="f/x.txt", content=""
    )


# --- delete_file -------------------------------------------------------------------------


async def test_delete_file_removes_it_and_shows_what_was_removed(workspace):
    (workspace / "old.txt").write_text("a\nb\n")
    out = await run(delete_file, workspace, path="old.txt")
    assert not (workspace / "old.txt").exists()
    assert out.text == "Deleted old.txt (4 B)."
    assert out.diff == "--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"


async def test_delete_file_caps_the_diff(workspace):
    (workspace / "big.txt").write_text("x\n" * 5000)
    out = await run(delete_file, workspace, path="big.txt")
    assert out.diff is not None
    assert len(out.diff.split("\n")) < 2100
    assert out.diff.endswith("more diff lines not shown\n")


async def test_delete_file_refuses_folders(workspace):
    (workspace / "d").mkdir()
    message = await refused(delete_file, workspace, path="d")
    assert message.startswith("'d' is a folder; delete_file removes single files only.")
    assert (workspace / "d").is_dir()


async def test_delete_file_removes_a_link_not_its_target(workspace, tmp_path):
    (workspace / "real.txt").write_text("keep")
    (workspace / "link.txt").symlink_to("real.txt")
    (tmp_path / "outside.txt").write_text("keep")
    (workspace / "out.txt").symlink_to(tmp_path / "outside.txt")
    await run(delete_file, workspace, path="link.txt")
    await run(delete_file, workspace, path="out.txt")
    assert only_files(workspace) == ["real.txt"]
    assert (tmp_path / "outside.txt").read_text() == "keep"


async def test_delete_file_refuses_missing_and_protected_files(workspace):
    assert "does not exist" in await refused(delete_file, workspace, path="nope.txt")
    (workspace / ".git").mkdir()
    (workspace / ".git" / "HEAD").write_text("ref")
    assert "may not write inside .git/" in await refused(delete_file, workspace, path=".git/HEAD")
    assert (workspace / ".git" / "HEAD").exists()


# --- bounds: huge paths, a folder swapped mid-write ------------------------------------


def test_a_huge_path_is_refused_without_being_echoed(workspace):
    from jupyter_agent.workspace.access import WorkspaceAccess

    with pytest.raises(ToolError) as refused:
        WorkspaceAccess(workspace).resolve("a/" * 5_000_000)
    assert len(str(refused.value)) < 300
    assert "10,000,000 characters" in str(refused.value)


@pytest.mark.slow
def test_a_folder_swapped_for_a_link_mid_write_never_leads_the_write_outside(tmp_path):
    """Another process flips a folder between a real folder and a link to outside while the
    agent writes into it, over and over: the check and the write may straddle a flip, yet
    no write lands outside (the write goes through folder descriptors, never a path)."""
    import threading

    ws, outside = tmp_path / "work", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    flipping = ws / "sub"
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            try:
                if flipping.is_symlink():
                    flipping.unlink()
                    flipping.mkdir()
                else:
                    shutil.rmtree(flipping, ignore_errors=True)
                    flipping.symlink_to(outside)
            except OSError:
                pass

    flipping.mkdir()
    flipper = threading.Thread(target=flip, daemon=True)
    flipper.start()
    attempts = 300
    ctx = ToolContext(workspace=ws)

    async def write_all() -> tuple[int, int]:
        written = refused = 0
        for i in range(attempts):
            try:
                await create_file.call(ctx, {"path": f"sub/f{i}.txt", "content": "x"})
                written += 1
            except ToolError:
                refused += 1
        return written, refused

    try:
        written, refused = asyncio.run(write_all())
    finally:
        stop.set()
        flipper.join()
    assert list(outside.iterdir()) == []
    assert written + refused == attempts and written > 0  # the race was really run
