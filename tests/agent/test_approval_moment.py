"""The approval moment: the card shows the call itself, "Always allow" offers its scopes, the
tool's time is its own work, and a failure says what failed.

A preview never decides anything: one that fails or hangs leaves the call asking, without it.
"""

from __future__ import annotations

import asyncio
import logging

import nbformat
import pytest
from helpers import assert_valid, call, until

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.agent import _dispatch, _interaction
from jupyter_agent.approvals import CellPreview, CommandPreview, FilePreview
from jupyter_agent.events import (
    PermissionRequestEvent,
    PermissionResponseEvent,
    ToolEndEvent,
    ToolOutcome,
)
from jupyter_agent.notebook.bridge import RunResult
from jupyter_agent.notebook.file import FileBridge
from jupyter_agent.permissions import Permission
from jupyter_agent.tools import ToolContext, tool
from jupyter_agent.tools.files import FILE_TOOLS


def _notebook(path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Sales", id="intro"),
        nbformat.v4.new_code_cell("import pandas as pd", id="load"),
        nbformat.v4.new_code_cell("1/0", id="boom"),
    ]
    nbformat.write(nb, path)
    return path


async def _raising(code, timeout):
    if code == "1/0":
        return RunResult(
            status="error",
            execution_count=3,
            error={"ename": "ZeroDivisionError", "evalue": "division by zero", "traceback": []},
        )
    return RunResult(status="ok", execution_count=2)


def _requests(handle) -> list[PermissionRequestEvent]:
    return [e for e in handle.events_so_far if isinstance(e, PermissionRequestEvent)]


def _ends(handle) -> list[ToolEndEvent]:
    return [e for e in handle.events_so_far if isinstance(e, ToolEndEvent)]


async def _asked(handle) -> PermissionRequestEvent:
    await until(lambda: handle.pending_approval is not None)
    return _requests(handle)[-1]


# --- previews ---------------------------------------------------------------------------------


async def test_a_cell_run_shows_its_code_and_where_it_is(workspace):
    bridge = FileBridge(_notebook(workspace / "a.ipynb"), executor=_raising)
    model = ScriptedModel([call("run_cell", cell_id="load"), {"text": "ok"}])
    agent = Agent("actor", model, workspace=workspace, notebook=bridge, persist=False)
    handle = agent.start("load the data")
    request = await _asked(handle)
    assert request.preview == CellPreview(
        cell_id="load", source="import pandas as pd", language="python", index=2, count=3
    )
    handle.approve(True)
    await handle.wait()


async def test_a_command_shows_each_program_what_it_does_and_the_sandbox(workspace):
    model = ScriptedModel(
        [call("execute_command", command="git log -3 && rm a.tmp > out.txt"), {"text": "ok"}]
    )
    agent = Agent("actor", model, workspace=workspace, persist=False)
    handle = agent.start("tidy")
    request = await _asked(handle)
    preview = request.preview
    assert isinstance(preview, CommandPreview)
    assert preview.command == "git log -3 && rm a.tmp > out.txt"
    assert [(p.text, p.effect, p.note) for p in preview.programs] == [
        ("git log -3", "reads", "only reads"),
        ("rm a.tmp", "writes", "deletes files"),
    ]
    assert preview.programs[1].writes == ["a.tmp"]
    assert preview.redirects == ["> out.txt"]
    assert preview.sandbox  # one line, whatever confines commands here
    handle.approve(False)
    await handle.wait()


async def test_a_file_delete_shows_what_it_removes(workspace):
    (workspace / "old.csv").write_text("a,b\n1,2\n")
    model = ScriptedModel([call("delete_file", path="old.csv"), {"text": "ok"}])
    agent = Agent("actor", model, workspace=workspace, persist=False)
    handle = agent.start("clean up")
    request = await _asked(handle)
    preview = request.preview
    assert isinstance(preview, FilePreview)
    assert (preview.path, preview.action) == ("old.csv", "delete")
    assert preview.diff is not None and "-a,b\n-1,2\n" in preview.diff
    assert (workspace / "old.csv").exists()  # nothing done before the answer
    handle.approve(False)
    await handle.wait()


async def test_file_write_previews_compute_the_diff_without_writing(workspace):
    tools = {t.name: t for t in FILE_TOOLS}
    (workspace / "a.py").write_text("x = 1\ny = 2\n")
    ctx = ToolContext(workspace=workspace)
    edit = await tools["update_file"].preview(
        ctx, {"path": "a.py", "old_text": "y = 2", "new_text": "y = 3", "replace_all": False}
    )
    assert isinstance(edit, FilePreview) and edit.action == "edit"
    assert edit.diff is not None and "-y = 2\n+y = 3\n" in edit.diff
    new = await tools["create_file"].preview(ctx, {"path": "b.py", "content": "z = 0\n"})
    assert isinstance(new, FilePreview) and new.action == "create"
    assert new.diff is not None and "+z = 0" in new.diff
    over = await tools["create_file"].preview(
        ctx, {"path": "a.py", "content": "x = 9\n", "overwrite": True}
    )
    assert isinstance(over, FilePreview) and over.action == "overwrite"
    assert over.diff is not None and "+x = 9" in over.diff
    assert (workspace / "a.py").read_text() == "x = 1\ny = 2\n"
    assert not (workspace / "b.py").exists()


async def test_a_preview_hides_secrets(workspace, monkeypatch):
    monkeypatch.setenv("MY_API_TOKEN", "tok-abcdefghijklmnopqrstuvwx")
    model = ScriptedModel(
        [call("execute_command", command="echo tok-abcdefghijklmnopqrstuvwx"), {"text": "ok"}]
    )
    agent = Agent("actor", model, workspace=workspace, persist=False)
    handle = agent.start("echo")
    request = await _asked(handle)
    assert isinstance(request.preview, CommandPreview)
    assert "tok-abcdefghijklmnopqrstuvwx" not in repr(request.preview)
    handle.approve(False)
    await handle.wait()


def _asking_tool(preview):
    @tool(permissions={Permission.EXECUTE_CODE}, preview=preview)
    def launch(target: str) -> str:
        """Launch something.

        Args:
            target: What to launch.
        """
        return f"launched {target}"

    return launch


async def test_a_card_whose_preview_fails_asks_but_its_allow_runs_nothing(workspace, caplog):
    """Nothing runs that a card did not show: a card that could not show the call says so,
    and each Allow of it asks again, until the call fails with the reason."""

    async def broken(ctx, args):
        raise RuntimeError("the preview broke")

    model = ScriptedModel([call("launch", target="x"), {"text": "ok"}])
    agent = Agent("actor", model, workspace=workspace, tools=[_asking_tool(broken)], persist=False)
    with caplog.at_level(logging.WARNING, logger="jupyter_agent.agent._interaction"):
        handle = agent.start("launch")
        for n in range(_dispatch.ASKS_WHEN_CHANGED):
            await until(lambda n=n: len(_requests(handle)) > n and handle.pending_approval)
            request = _requests(handle)[-1]
            assert request.preview is None
            assert "could not be shown" in request.warnings[0]
            assert "reading it failed: RuntimeError" in request.warnings[0]
            handle.approve(True)
    await handle.wait()
    assert "the approval preview of launch failed" in caplog.text
    (end,) = _ends(handle)
    assert end.is_error and "could not show what it would act on" in end.result
    assert "launched" not in end.result


async def test_a_hanging_preview_still_asks_and_says_why(workspace, monkeypatch):
    monkeypatch.setattr(_interaction, "PREVIEW_TIMEOUT", 0.05)

    async def hangs(ctx, args):
        await asyncio.sleep(60)

    model = ScriptedModel([call("launch", target="x"), {"text": "ok"}])
    agent = Agent("actor", model, workspace=workspace, tools=[_asking_tool(hangs)], persist=False)
    handle = agent.start("launch")
    request = await _asked(handle)
    assert request.preview is None and "took over 0.05 s" in request.warnings[0]
    handle.approve(False)
    await handle.wait()


# --- scopes -----------------------------------------------------------------------------------


async def test_the_scope_chosen_is_the_rule_remembered(workspace):
    model = ScriptedModel(
        [
            call("execute_command", command="git log -3"),
            call("execute_command", command="git log -5"),
            {"text": "ok"},
        ]
    )
    agent = Agent("actor", model, workspace=workspace, persist=False)
    handle = agent.start("history")
    request = await _asked(handle)
    assert [o.id for o in request.remember_options] == ["read_only", "exact"]
    assert request.remember == "; ".join(request.remember_options[0].rules)
    handle.approve(True, scope="exact")
    # The exact rule does not cover `git log -5`: it asks again.
    await until(lambda: len(_requests(handle)) == 2 and handle.pending_approval is not None)
    response = next(e for e in handle.events_so_far if isinstance(e, PermissionResponseEvent))
    assert (response.scope, response.rule) == ("exact", "allow exactly `git log -3`")
    handle.approve(False)
    await handle.wait()


async def test_remember_true_takes_the_first_scope(workspace):
    model = ScriptedModel([call("execute_command", command="git log -3"), {"text": "ok"}])
    agent = Agent("actor", model, workspace=workspace, persist=False)
    handle = agent.start("history")
    await _asked(handle)
    handle.approve(True, remember=True)
    await handle.wait()
    response = next(e for e in handle.events_so_far if isinstance(e, PermissionResponseEvent))
    assert (response.scope, response.rule) == ("read_only", "allow `git log` when it only reads")


async def test_a_scope_not_offered_remembers_nothing(workspace):
    model = ScriptedModel([call("execute_command", command="rm a.tmp"), {"text": "ok"}])
    agent = Agent("actor", model, workspace=workspace, persist=False)
    handle = agent.start("rm")
    request = await _asked(handle)
    assert [o.id for o in request.remember_options] == ["exact"]
    before = len(agent.policy)  # type: ignore[arg-type]
    handle.approve(True, scope="tool")  # the whole tool is never offered for a command
    await handle.wait()
    response = next(e for e in handle.events_so_far if isinstance(e, PermissionResponseEvent))
    assert response.rule is None and response.scope is None
    assert len(agent.policy) == before  # type: ignore[arg-type]


# --- time and failures ------------------------------------------------------------------------


async def test_a_tools_time_leaves_out_the_wait_for_the_user(workspace):
    (workspace / "old.csv").write_text("x\n")
    model = ScriptedModel([call("delete_file", path="old.csv"), {"text": "ok"}])
    agent = Agent("actor", model, workspace=workspace, persist=False)
    handle = agent.start("delete")
    await _asked(handle)
    thinking = 0.6
    await asyncio.sleep(thinking)  # the user thinks
    handle.approve(True)
    await handle.wait()
    (end,) = _ends(handle)
    assert not end.is_error and end.error_line is None
    assert end.duration < thinking  # with the wait counted, it could not be


async def test_a_cell_that_raised_has_its_error_line(workspace):
    bridge = FileBridge(_notebook(workspace / "a.ipynb"), executor=_raising)
    model = ScriptedModel([call("run_cell", cell_id="boom"), {"text": "ok"}])
    agent = Agent("actor", model, workspace=workspace, notebook=bridge, persist=False)
    handle = agent.start("run")
    await _asked(handle)
    handle.approve(True)
    await handle.wait()
    (end,) = _ends(handle)
    assert end.error_line == "ZeroDivisionError: division by zero"
    assert not end.is_error  # the tool worked: the model reads the traceback as a result
    assert_valid(agent.history)


async def test_a_call_the_user_denied_says_so_to_the_user_and_instructs_the_model(workspace):
    """The row reads what happened, in the user's words; the model still gets its
    instruction (not to repeat the call)."""
    model = ScriptedModel([call("execute_command", command="rm a.tmp"), {"text": "ok"}])
    agent = Agent("actor", model, workspace=workspace, persist=False)
    handle = agent.start("rm")
    await _asked(handle)
    handle.approve(False)
    await handle.wait()
    (end,) = _ends(handle)
    assert end.is_error and end.outcome == ToolOutcome.denied
    assert end.error_line == "You denied this call: it did not run."
    assert end.result.startswith("The user declined this call. Do not repeat it;")
    (result,) = [b for m in agent.history for b in m.tool_results]
    assert result.text == end.result and result.is_error


@pytest.mark.parametrize(("command", "line"), [("exit 3", "exit code 3"), ("true", None)])
async def test_a_command_that_failed_has_its_error_line(workspace, command, line):
    model = ScriptedModel(
        [call("execute_command", command=f"echo first; echo last words; {command}"), {"text": "ok"}]
    )
    agent = Agent("actor", model, workspace=workspace, persist=False)
    handle = agent.start("run")
    await _asked(handle)
    handle.approve(True)
    await handle.wait()
    (end,) = _ends(handle)
    if line is None:
        assert end.error_line is None
    else:
        assert end.error_line is not None
        assert end.error_line.startswith(line)
        assert end.error_line.endswith(": last words")
