"""The workspace file tools, called as the model calls them (validation included)."""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
from pathlib import Path

import pytest
from inline_snapshot import snapshot

from jupyter_agent.errors import ToolError
from jupyter_agent.permissions import Permission
from jupyter_agent.tools import Tool, ToolContext, ToolOutput
from jupyter_agent.tools.files import (
    FILE_TOOLS,
    create_file,
    delete_file,
    get_file_info,
    grep,
    list_directory,
    read_file,
    update_file,
)


async def run(tool: Tool, ws: Path, **args) -> ToolOutput:
    return await tool.call(ToolContext(workspace=ws), args)


async def refused(tool: Tool, ws: Path, **args) -> str:
    with pytest.raises(ToolError) as info:
        await run(tool, ws, **args)
    return str(info.value)


def only_files(folder: Path) -> list[str]:
    return sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink()
    )


# --- the contract ----------------------------------------------------------------------


def test_names_arguments_categories_and_permissions_match_the_contract():
    expected = {
        "read_file": (["path", "start_line", "end_line"], "read", {"read_files"}),
        "list_directory": (["path", "recursive", "max_entries"], "read", {"read_files"}),
        "grep": (
            ["pattern", "path", "glob", "ignore_case", "max_results"],
            "read",
            {"read_files"},
        ),
        "get_file_info": (["path"], "read", {"read_files"}),
        "update_file": (
            ["path", "old_text", "new_text", "replace_all"],
            "write",
            {"read_files", "write_files"},
        ),
        "create_file": (
            ["path", "content", "overwrite"],
            "write",
            {"write_files", "create_files"},
        ),
        "delete_file": (["path"], "delete", {"read_files", "delete_files"}),
    }
    assert [t.name for t in FILE_TOOLS] == list(expected)
    for t in FILE_TOOLS:
        args, category, permissions = expected[t.name]
        assert list(t.input_schema["properties"]) == args
        assert t.category == category
        assert t.permissions == permissions
        assert len(t.description) > 80
        assert "Args:" not in t.description
        assert all(p.get("description") for p in t.input_schema["properties"].values())
        assert t.path_args == ("path",)


def test_the_planner_may_call_only_the_reading_tools():
    readable = [t.name for t in FILE_TOOLS if t.permissions <= Permission.READ_ONLY]
    assert readable == ["read_file", "list_directory", "grep", "get_file_info"]


def test_summaries_are_one_line_for_humans():
    assert read_file.summary({"path": "a.py"}) == "Read a.py"
    assert read_file.summary({"path": "a.py", "start_line": 5, "end_line": 9}) == snapshot(
        "Read a.py (lines 5–9)"
    )
    assert update_file.summary({"path": "a.py", "old_text": "x", "new_text": "y"}) == "Edit a.py"
    assert create_file.summary({"path": "b.py", "content": ""}) == "Create b.py"
    assert create_file.summary({"path": "b.py", "overwrite": True}) == "Overwrite b.py"
    assert delete_file.summary({"path": "b.py"}) == "Delete b.py"
    assert grep.summary({"pattern": "def", "path": "src"}) == "Search /def/ in src"


# --- read_file ---------------------------------------------------------------------------


async def test_read_file_numbers_the_lines(workspace):
    (workspace / "a.py").write_text("import os\n\tprint(1)\n")
    out = await run(read_file, workspace, path="a.py")
    assert out.text == "     1\timport os\n     2\t\tprint(1)"
    assert out.data == {"path": "a.py", "start_line": 1, "end_line": 2, "total_lines": 2}


async def test_read_file_reads_a_range_and_says_so(workspace):
    (workspace / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    out = await run(read_file, workspace, path="a.txt", start_line=3, end_line=4)
    assert out.text == "     3\tline 3\n     4\tline 4\n[showing lines 3–4 of 10]"


async def test_read_file_caps_lines_and_says_how_to_read_on(workspace):
    (workspace / "big.txt").write_text("".join(f"{i}\n" for i in range(1, 3235)))
    out = await run(read_file, workspace, path="big.txt")
    lines = out.text.split("\n")
    assert len(lines) == 2001
    assert lines[1999] == "  2000\t2000"
    assert lines[-1] == "… 1,234 more lines; call read_file with start_line=2001"
    rest = await run(read_file, workspace, path="big.txt", start_line=2001)
    assert rest.text.split("\n")[-1] == "[showing lines 2,001–3,234 of 3,234]"


async def test_read_file_caps_bytes(workspace):
    (workspace / "wide.txt").write_text(("x" * 999 + "\n") * 300)
    out = await run(read_file, workspace, path="wide.txt")
    assert len(out.text) < 101_000
    assert out.data is not None
    shown = out.data["end_line"]
    assert 90 <= shown < 101
    assert out.text.endswith(
        f"… {300 - shown} more lines; call read_file with start_line={shown + 1}"
    )


async def test_read_file_cuts_very_long_lines(workspace):
    (workspace / "min.js").write_text("a" * 5000)
    out = await run(read_file, workspace, path="min.js")
    assert out.text == "     1\t" + "a" * 2000 + "… [3,000 more characters on this line]"


async def test_read_file_refuses_binary_files(workspace):
    (workspace / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    message = await refused(read_file, workspace, path="img.png")
    assert message.startswith("'img.png' is a binary file; read_file shows text only.")


async def test_read_file_refuses_non_text_bytes(workspace):
    (workspace / "blob.bin").write_bytes(bytes(range(128, 256)) * 10)
    assert "is a binary file" in await refused(read_file, workspace, path="blob.bin")


async def test_read_file_shows_a_latin1_file_with_a_note(workspace):
    (workspace / "old.csv").write_bytes("name;city\nJosé;Málaga\n".encode("latin-1"))
    out = await run(read_file, workspace, path="old.csv")
    assert "Jos\ufffd;M\ufffdlaga" in out.text
    assert out.text.endswith("[the file is not valid UTF-8: undecodable bytes are shown as �]")


async def test_read_file_on_a_missing_file_lists_close_matches(workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "main.py").write_text("")
    (workspace / "src" / "utils.py").write_text("")
    message = await refused(read_file, workspace, path="src/mian.py")
    assert message == "'src/mian.py' does not exist. Close matches: src/main.py."


async def test_read_file_on_a_folder_points_to_list_directory(workspace):
    (workspace / "src").mkdir()
    assert "use list_directory" in await refused(read_file, workspace, path="src")


async def test_read_file_validates_the_range(workspace):
    (workspace / "a.txt").write_text("one\ntwo\n")
    assert "start_line must be 1 or more" in await refused(
        read_file, workspace, path="a.txt", start_line=0
    )
    assert "end_line (1) is before start_line (2)" in await refused(
        read_file, workspace, path="a.txt", start_line=2, end_line=1
    )
    assert await refused(read_file, workspace, path="a.txt", start_line=5) == snapshot(
        "start_line=5 is past the end of 'a.txt', which has 2 lines."
    )
    assert "Invalid arguments for read_file" in await refused(read_file, workspace, file="a.txt")


async def test_read_file_of_an_empty_file(workspace):
    (workspace / "empty.txt").write_text("")
    assert (
        await run(read_file, workspace, path="empty.txt")
    ).text == "empty.txt is empty (0 lines)."


async def test_read_file_refuses_env_files(workspace):
    (workspace / ".env").write_text("ANTHROPIC_API_KEY=sk-123")
    message = await refused(read_file, workspace, path=".env")
    assert "sk-123" not in message
    assert ".env files may hold secrets" in message


async def test_read_file_counts_crlf_lines_and_hides_the_carriage_returns(workspace):
    (workspace / "win.txt").write_bytes(b"a\r\nb\r\n")
    assert (await run(read_file, workspace, path="win.txt")).text == "     1\ta\n     2\tb"


# --- list_directory ----------------------------------------------------------------------


@pytest.fixture
def project(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('app')\n")
    (workspace / "src" / "util.py").write_text("x" * 2048)
    (workspace / "README.md").write_text("# Project\n")
    (workspace / ".env").write_text("API_TOKEN=hunter2\n")
    for skipped in (".git", "node_modules", "__pycache__", ".ipynb_checkpoints", ".jupyter_agent"):
        (workspace / skipped).mkdir()
        (workspace / skipped / "inside.txt").write_text("needle\n")
    return workspace


async def test_list_directory_marks_folders_and_sizes(project):
    out = await run(list_directory, project)
    assert out.text == "\n".join(
        [
            "Contents of the workspace root:",
            ".env  (access refused)",
            ".git/  (1 entry)",
            ".ipynb_checkpoints/  (1 entry)",
            ".jupyter_agent/  (1 entry)",
            "__pycache__/  (1 entry)",
            "node_modules/  (1 entry)",
            "README.md  10 B",
            "src/  (2 entries)",
        ]
    )


async def test_list_directory_recursive_skips_heavy_folders_unless_asked(project):
    out = await run(list_directory, project, recursive=True)
    assert "src/app.py  13 B" in out.text
    assert "src/util.py  2.0 KB" in out.text
    assert "node_modules/  (skipped; list it directly to see inside)" in out.text
    assert "inside.txt" not in out.text
    direct = await run(list_directory, project, path="node_modules", recursive=True)
    assert "node_modules/inside.txt  7 B" in direct.text


async def test_list_directory_caps_entries_with_a_note(workspace):
    for i in range(30):
        (workspace / f"f{i:02}.txt").write_text("")
    out = await run(list_directory, workspace, max_entries=10)
    lines = out.text.split("\n")
    assert lines[1:11] == [f"f{i:02}.txt  0 B" for i in range(10)]
    assert lines[-1] == snapshot(
        "… 20 more entries not shown (max_entries=10); list a subfolder, "
        "or call again with a larger max_entries."
    )


async def test_list_directory_shows_links_without_following_them(workspace, tmp_path):
    (tmp_path / "outside").mkdir()
    (workspace / "out").symlink_to(tmp_path / "outside")
    (workspace / "real").mkdir()
    (workspace / "alias").symlink_to("real")
    out = await run(list_directory, workspace, recursive=True)
    assert f"out/ -> {tmp_path / 'outside'}  (leads outside the workspace)" in out.text
    assert "alias/ -> real" in out.text


async def test_list_directory_of_an_empty_folder_and_of_a_file(workspace):
    (workspace / "empty").mkdir()
    (workspace / "a.txt").write_text("")
    assert (await run(list_directory, workspace, path="empty")).text == "empty/ is empty."
    assert "is a file, not a folder" in await refused(list_directory, workspace, path="a.txt")
    assert "max_entries must be between" in await refused(list_directory, workspace, max_entries=0)


async def test_list_directory_refuses_paths_outside(workspace):
    assert "'..' leads outside" in await refused(list_directory, workspace, path="..")


# --- grep --------------------------------------------------------------------------------


async def test_grep_finds_lines_with_paths_and_numbers(project):
    (project / "src" / "app.py").write_text("import os\n\ndef main():\n    return os.getcwd()\n")
    out = await run(grep, project, pattern=r"os\.\w+")
    assert out.text == ("src/app.py:4:     return os.getcwd()\n[1 match in 1 file; 3 searched]")


async def test_grep_never_reveals_env_content(project):
    out = await run(grep, project, pattern=r"API_TOKEN=\w+")
    assert "hunter2" not in out.text
    assert out.text == r"No matches for /API_TOKEN=\w+/ in .: 3 files searched."
    assert ".env files may hold secrets" in await refused(grep, project, pattern="x", path=".env")


async def test_grep_skips_heavy_folders_unless_asked(project):
    out = await run(grep, project, pattern="needle")
    assert out.text.startswith("No matches")
    inside = await run(grep, project, pattern="needle", path=".git")
    assert inside.text.startswith(".git/inside.txt:1: needle")


async def test_grep_filters_by_glob_and_ignores_case(project):
    (project / "src" / "notes.txt").write_text("Main idea\n")
    (project / "src" / "app.py").write_text("def main(): pass\n")
    out = await run(grep, project, pattern="MAIN", glob="*.py", ignore_case=True)
    assert out.text.split("\n")[0] == "src/app.py:1: def main(): pass"
    both = await run(grep, project, pattern="main", glob="*.{py,txt}", ignore_case=True)
    assert both.data is not None
    assert both.data["matches"] == 2
    pathed = await run(grep, project, pattern="main", glob="src/**/*.py")
    assert pathed.data is not None
    assert pathed.data["matches"] == 1


async def test_grep_refuses_an_invalid_regex_with_the_re_error(workspace):
    message = await refused(grep, workspace, pattern="foo(")
    assert message == snapshot("Invalid regular expression 'foo(': missing ) at position 4.")


async def test_grep_caps_results_with_a_note(workspace):
    (workspace / "many.txt").write_text("hit\n" * 50)
    out = await run(grep, workspace, pattern="hit", max_results=5)
    lines = out.text.split("\n")
    assert lines[:5] == [f"many.txt:{i}: hit" for i in range(1, 6)]
    assert lines[5] == snapshot(
        "… stopped at max_results=5; there are more matches. Narrow the pattern, path or "
        "glob, or raise max_results."
    )


async def test_grep_trims_long_lines_around_the_match(workspace):
    (workspace / "min.js").write_text("a" * 1000 + "NEEDLE" + "b" * 1000 + "\n")
    out = await run(grep, workspace, pattern="NEEDLE")
    shown = out.text.split("\n")[0].split(": ", 1)[1]
    assert "NEEDLE" in shown
    assert len(shown) == 302  # 300 characters and an ellipsis at each end
    assert shown.startswith("…") and shown.endswith("…")


async def test_grep_skips_binary_files(workspace):
    (workspace / "data.bin").write_bytes(b"needle\x00\x01")
    (workspace / "a.txt").write_text("needle\n")
    out = await run(grep, workspace, pattern="needle")
    assert out.text == snapshot(
        "a.txt:1: needle\n[1 match in 1 file; 1 searched; skipped 1 binary file(s)]"
    )


async def test_grep_does_not_follow_links_outside(workspace, tmp_path):
    (tmp_path / "secret.txt").write_text("needle\n")
    (workspace / "link.txt").symlink_to(tmp_path / "secret.txt")
    out = await run(grep, workspace, pattern="needle")
    assert out.text.startswith("No matches")


async def test_grep_can_be_cancelled_without_blocking_the_loop(workspace):
    for i in range(300):
        (workspace / f"f{i}.txt").write_text("line\n" * 2000)
    task = asyncio.create_task(run(grep, workspace, pattern="nomatch"))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


# --- get_file_info -----------------------------------------------------------------------


async def test_get_file_info_describes_a_text_file(workspace):
    target = workspace / "a.py"
    target.write_text("a\nb\nc\n")
    target.chmod(0o640)
    out = await run(get_file_info, workspace, path="a.py")
    lines = out.text.split("\n")
    assert lines[:4] == ["path: a.py", "type: file (text)", "size: 6 bytes (6 B)", "lines: 3"]
    assert lines[4].startswith("modified: 20")
    assert "T" in lines[4]
    assert lines[5] == "permissions: -rw-r----- (0640)"
    assert out.data is not None
    assert out.data["lines"] == 3


async def test_get_file_info_describes_folders_binaries_and_links(workspace):
    (workspace / "d").mkdir()
    (workspace / "d" / "x").write_text("")
    (workspace / "b.bin").write_bytes(b"\x00\x01")
    (workspace / "link").symlink_to("d")
    folder = await run(get_file_info, workspace, path="d")
    assert "type: folder" in folder.text and "entries: 1" in folder.text
    binary = await run(get_file_info, workspace, path="b.bin")
    assert "type: file (binary)" in binary.text and "lines:" not in binary.text
    link = await run(get_file_info, workspace, path="link")
    assert "link: a symbolic link to d (resolves to d)" in link.text


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


async def test_a_pattern_that_backtracks_without_end_is_stopped_and_never_holds_the_loop(
    workspace, monkeypatch
):
    """`(a|aa)+$` on a line of forty a's and a b takes ages to fail; the search gives up
    after its time limit, and meanwhile the event loop (where Stop is heard) keeps running."""
    from jupyter_agent.tools import _file_search as files

    monkeypatch.setattr(files, "GREP_TIME_LIMIT", 1.0)
    (workspace / "a.txt").write_text("fine line\n" + "a" * 40 + "b\n")
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    try:
        out = await files.grep.call(ToolContext(workspace=workspace), {"pattern": "(a|aa)+$"})
    finally:
        ticker.cancel()
    assert out.data is not None
    assert out.data["timed_out"]
    assert "stopped after 1 s of matching, in a.txt" in out.text
    assert "backtrack" in out.text
    assert ticks >= 10  # the loop ran while the pattern was matched


async def test_a_huge_or_deeply_nested_pattern_is_refused_without_echoing_it_whole(workspace):
    (workspace / "a.txt").write_text("x\n")
    ctx = ToolContext(workspace=workspace)
    with pytest.raises(ToolError) as long:
        await grep.call(ctx, {"pattern": "(" * 100_000})
    assert "too long to search with" in str(long.value)
    assert "(100,000 characters)" in str(long.value)
    assert len(str(long.value)) < 1_000
    with pytest.raises(ToolError) as deep:
        await grep.call(ctx, {"pattern": "(" * 3_000 + "a" + ")" * 3_000})
    assert "nested too deeply" in str(deep.value)
    assert len(str(deep.value)) < 1_000


async def test_a_file_that_is_one_huge_line_is_read_in_bounded_memory(workspace):
    import tracemalloc

    big = workspace / "one-line.txt"
    with open(big, "wb") as f:
        for _ in range(50):
            f.write("é".encode() * 500_000)  # 50 MB, no newline, two-byte characters
    tracemalloc.start()
    try:
        out = await run(read_file, workspace, path="one-line.txt")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000  # the line's first 64 KB, never the 50 MB
    assert out.text.startswith("     1\t" + "é" * 2000 + "… [")
    assert "more characters on this line]" in out.text
    assert "not valid UTF-8" not in out.text  # cutting inside a character loses nothing


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
