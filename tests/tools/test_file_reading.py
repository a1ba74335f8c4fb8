"""The workspace file tools' contract, and the reading tools (``read_file``,
``list_directory``, ``grep``, ``get_file_info``), called as the model calls them
(validation included): what they show, how they cap and say so, what they refuse, and that
a hostile pattern or a file of one huge line is bounded in time and memory."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from file_tool_calls import refused, run
from inline_snapshot import snapshot

from jupyter_agent.errors import ToolError
from jupyter_agent.permissions import Permission
from jupyter_agent.tools import ToolContext
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


# --- bounds: hostile patterns, huge lines -----------------------------------------------


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
